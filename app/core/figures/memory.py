"""Memory figures: measured DRAM bytes (read + write, stacked) beside the analytic minimum, and
the fused / unfused traffic and time ratios across sizes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from profiling_worker.bundle.schema import columns as C

from app.core.figures import common, theme
from app.core import frame_columns as F

MB = 1e6


def build_memory_figure(frame: pd.DataFrame, host_timer: bool = False) -> go.Figure:
    """DRAM traffic per annotation (best for one config).

    Returns:
        Stacked bars: x = ``annotation · config``, y = MB (1e6 bytes) read and written, a diamond
        at the analytic minimum; hover shows exact bytes, the measured / analytic ratio, the time
        (µs) and the reason for a gap.
    """
    title = "DRAM traffic: measured vs analytic minimum"
    if frame.empty:
        return common.empty(title, "no values")
    x = [f"{a} · {c}" for a, c in zip(frame[C.ANNOTATION], frame[F.CONFIG_LABEL])]
    custom = np.column_stack([frame[F.DRAM_READ_BYTES], frame[F.DRAM_WRITE_BYTES],
                              frame[F.MEASURED_OVER_ANALYTIC], frame[F.TIME_NS] / 1e3,
                              frame[F.GAP_NOTE], common.audit_cells(frame)])
    fig = go.Figure()
    for i, (col, name) in enumerate(((F.DRAM_READ_BYTES, "read"), (F.DRAM_WRITE_BYTES, "written"))):
        fig.add_trace(go.Bar(
            x=x, y=frame[col] / MB, name=f"DRAM {name}", marker_color=theme.color(i),
            customdata=custom,
            hovertemplate=(f"<b>%{{x}}</b><br>{name} = %{{y:,.3f}} MB"
                           "<br>read = %{customdata[0]:,.0f} B<br>written = %{customdata[1]:,.0f} B"
                           "<br>measured / analytic = %{customdata[2]:.3f}"
                           f"<br>time = %{{customdata[3]:{common.hover_format(custom[:, 3])}}}"
                           " µs<br>%{customdata[4]}"
                           + common.audit_hover(frame, 5) + "<extra></extra>")))
    fig.add_trace(go.Scatter(
        x=x, y=frame[F.ANALYTIC_BYTES] / MB, mode="markers", name="analytic minimum",
        marker={"symbol": "diamond", "size": 11, "color": theme.color(3)},
        hovertemplate="<b>%{x}</b><br>analytic minimum = %{y:,.3f} MB<extra></extra>"))
    # a pair whose runs failed the run audit: an x over its bar and its analytic diamond
    top = np.fmax(frame[F.DRAM_BYTES].to_numpy(float), frame[F.ANALYTIC_BYTES].to_numpy(float))
    if (marks := common.audit_bar_marks(x, top / MB * 1.08, frame)) is not None:
        fig.add_trace(marks)
    fig.update_layout(barmode="stack")
    fig.update_xaxes(title={"text": "annotation · config"}, type="category")
    fig.update_yaxes(title={"text": theme.axis_title("DRAM traffic", "MB")})
    return common.finish(fig, title, host_timer)


def build_fusion_figure(frame: pd.DataFrame, x: str, host_timer: bool = False) -> go.Figure:
    """Fused / unfused ratios of DRAM bytes and of time against the size parameter ``x``.

    Returns:
        Two lines (traffic ratio, time ratio) over ``x`` on a log axis, a dashed line at 1
        (no change); below 1 the fused kernel moves fewer bytes / runs faster. A ratio with no
        value (no DRAM byte counters) draws no line.
    """
    title = "Fusion: fused / unfused"
    if frame.empty:
        return common.empty(title, "this job has no unfused/fused pair")
    fig = go.Figure()
    for i, (col, name, unit_cols) in enumerate((
            (F.TRAFFIC_RATIO, "DRAM bytes ratio", (F.FUSED_BYTES, F.UNFUSED_BYTES, "B")),
            (F.TIME_RATIO, "time ratio", (F.FUSED_TIME_NS, F.UNFUSED_TIME_NS, "ns")))):
        if frame[col].isna().all():  # a job without DRAM byte counters: time ratio only
            continue
        custom = np.column_stack([frame[unit_cols[0]], frame[unit_cols[1]]])
        fig.add_trace(go.Scatter(
            x=frame[x], y=frame[col], mode="lines+markers", name=name,
            line={"color": theme.color(i)}, customdata=custom,
            hovertemplate=(f"{x} = %{{x:,}}<br>{name} = %{{y:.3f}}"
                           f"<br>fused = %{{customdata[0]:,.0f}} {unit_cols[2]}"
                           f"<br>unfused = %{{customdata[1]:,.0f}} {unit_cols[2]}<extra></extra>")))
    common.hline(fig, 1.0, "no change")
    fig.update_xaxes(**theme.LOG_AXIS, title={"text": f"{x} (size parameter, log scale)"})
    fig.update_yaxes(title={"text": theme.axis_title("fused / unfused", "ratio")},
                     rangemode="tozero")
    return common.finish(fig, title, host_timer)
