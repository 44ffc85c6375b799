"""Clocks and thermal figures: the NVML trace over the job, per-run collector values beside the
kernel time (drift), their correlation, the SM clock each kernel ran at, thermal_mode spread."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.throttle_reasons import THROTTLE_BITS

from app.core import frame_columns as F
from app.core.figures import common, theme

#: Display units of collector / NVML values.
UNITS = {"C": "°C", "MHz": "MHz", "W": "W"}
_TRACE_ROWS = ((C.TEMP_C, "Temperature", "°C"), (C.POWER_W, "Power", "W"))


def display_unit(unit: object) -> str:
    """``°C`` for NVML's ``C``; other units unchanged; a missing one ""
    (:func:`theme.unit_text`)."""
    text = theme.unit_text(unit)
    return UNITS.get(text, text)


def build_trace_figure(trace: pd.DataFrame, max_sm_mhz: float | None = None) -> go.Figure:
    """The NVML trace of the whole job on one time axis.

    Args:
        trace: :func:`~app.core.views.clocks.trace_frame`.
        max_sm_mhz: the device's maximum SM clock (dotted line), if known.

    Returns:
        Four rows sharing x = time since the sampler started (s): SM and memory clock (MHz),
        temperature (°C), power (W), and one marker row per throttle reason that was set.
    """
    title = "NVML trace of the whole job (sampled during the job)"
    if trace.empty:
        return common.empty(title, "no NVML samples")
    fig = make_subplots(rows=4, cols=1, shared_xaxes=True, vertical_spacing=0.04,
                        row_heights=[0.4, 0.18, 0.18, 0.24])
    t = trace[C.TIME_S].to_numpy(float)
    for i, (col, label) in enumerate(((C.SM_CLOCK_MHZ, "SM clock"),
                                      (C.MEM_CLOCK_MHZ, "memory clock"))):
        fig.add_trace(theme.points_trace(
            t, trace[col].to_numpy(float), label, mode="lines", line={"color": theme.color(i)},
            hovertemplate=f"{label} %{{y:.0f}} MHz<br>t = %{{x:.2f}} s<extra></extra>"),
            row=1, col=1)
    if max_sm_mhz:
        fig.add_hline(y=max_sm_mhz, line_dash="dot", line_color=common.REFERENCE, row=1, col=1,
                      annotation_text=f"max SM clock {max_sm_mhz:.0f} MHz",
                      annotation_position="bottom right")
    for row, (col, label, unit) in enumerate(_TRACE_ROWS, start=2):
        fig.add_trace(theme.points_trace(
            t, trace[col].to_numpy(float), label, mode="lines",
            line={"color": theme.color(row)},
            hovertemplate=f"{label} %{{y:{common.hover_format(trace[col])}}} {unit}<br>"
                          "t = %{x:.2f} s<extra></extra>"),
            row=row, col=1)
        fig.update_yaxes(title={"text": theme.axis_title(label, unit)}, row=row, col=1)
    _throttle_rows(fig, trace, t)
    fig.update_yaxes(title={"text": theme.axis_title("Clock", "MHz")}, rangemode="tozero",
                     row=1, col=1)
    fig.update_yaxes(title={"text": "Throttle reason"}, type="category", row=4, col=1)
    fig.update_xaxes(title={"text": theme.axis_title("Time since the sampler started", "s")},
                     row=4, col=1)
    fig.update_layout(height=720)
    return common.finish(fig, title)


def _throttle_rows(fig: go.Figure, trace: pd.DataFrame, t: np.ndarray) -> None:
    masks = trace[C.THROTTLE_REASONS].to_numpy(int)
    drawn = 0
    for bit, name in THROTTLE_BITS.items():
        hit = (masks & bit) != 0
        if not hit.any():
            continue
        fig.add_trace(theme.points_trace(
            t[hit], np.full(int(hit.sum()), name), f"throttle: {name} ({bit:#x})",
            mode="markers", marker={"symbol": "line-ns-open", "size": 12,
                                    "color": theme.color(4 + drawn), "line": {"width": 2}},
            hovertemplate=f"{name} ({bit:#x})<br>t = %{{x:.2f}} s<extra></extra>"),
            row=4, col=1)
        drawn += 1
    if not drawn:
        fig.add_trace(go.Scatter(x=[t.min(), t.max()], y=["none", "none"], mode="lines",
                                 name="no throttle reason set", line={"color": common.GRID}),
                      row=4, col=1)


def _series_name(frame: pd.DataFrame, annotation: str, label: str) -> str:
    several = frame[F.CONFIG_LABEL].nunique() > 1
    return f"{annotation} · {label}" if several else str(annotation)


def build_drift_figure(frame: pd.DataFrame) -> go.Figure:
    """Kernel time and each collector per run, sharing the run axis.

    Args:
        frame: :func:`~app.core.views.clocks.collector_runs_frame`.

    Returns:
        Row 1: kernel time per run (one line per annotation x config, the frame's time unit;
        log scale when the times span more than 20x);
        one row per collector below (value sampled before the run, its unit), x = run index.
    """
    title = f"Kernel time and collector values per run (collectors sampled {F.BEFORE_RUN})"
    if frame.empty:
        return common.empty(title, "no collector values")
    collectors = list(dict.fromkeys(frame[C.COLLECTOR]))
    fig = make_subplots(rows=1 + len(collectors), cols=1, shared_xaxes=True,
                        vertical_spacing=0.05)
    unit = theme.first_unit(frame[C.UNIT])
    times = frame.drop_duplicates([C.ANNOTATION, C.CONFIG, C.RUN])
    for i, ((annotation, label), group) in enumerate(
            times.groupby([C.ANNOTATION, F.CONFIG_LABEL], sort=False)):
        name = _series_name(times, str(annotation), str(label))
        fig.add_trace(theme.points_trace(
            group[C.RUN].to_numpy(float), group[F.KERNEL_TIME].to_numpy(float), name,
            mode="lines+markers", legendgroup=label, line={"color": theme.color(i), "width": 1},
            hovertemplate=f"<b>{name}</b><br>run %{{x}}<br>time = "
                          f"%{{y:{common.hover_format(group[F.KERNEL_TIME])}}} {unit}"
                          "<extra></extra>"), row=1, col=1)
    spread = times[F.KERNEL_TIME].max() / max(times[F.KERNEL_TIME].min(), 1e-300)
    fig.update_yaxes(title={"text": theme.axis_title("Kernel time", unit)}, row=1, col=1,
                     **(theme.LOG_AXIS if spread > 20 else {"type": "linear"}))
    values = frame.drop_duplicates([C.CONFIG, C.RUN, C.COLLECTOR])
    labels = list(dict.fromkeys(values[F.CONFIG_LABEL]))
    for row, collector in enumerate(collectors, start=2):
        part = values[values[C.COLLECTOR] == collector]
        cunit = display_unit(part[F.COLLECTOR_UNIT].iloc[0])
        for label, group in part.groupby(F.CONFIG_LABEL, sort=False):
            fig.add_trace(theme.points_trace(
                group[C.RUN].to_numpy(float), group[F.COLLECTOR_VALUE].to_numpy(float),
                f"{collector} · {label}", mode="lines+markers", legendgroup=label,
                showlegend=False, line={"color": theme.color(labels.index(label)), "width": 1},
                hovertemplate=(f"<b>{collector}</b> {label}<br>run %{{x}} ({F.BEFORE_RUN})<br>"
                               f"%{{y:{common.hover_format(group[F.COLLECTOR_VALUE])}}} {cunit}"
                               "<extra></extra>")), row=row, col=1)
        fig.update_yaxes(title={"text": theme.axis_title(str(collector), cunit)}, row=row, col=1)
    fig.update_xaxes(title={"text": "run index (0 = first run)"}, row=1 + len(collectors), col=1)
    fig.update_layout(height=260 + 170 * len(collectors))
    return common.finish(fig, title)


def build_correlation_figure(corr: pd.DataFrame) -> go.Figure:
    """Pearson r between each collector (sampled before the run) and the kernel time.

    Returns:
        Grouped bars: x = annotation x config, one bar per collector, y = r in [-1, 1];
        undefined r (constant collector) drawn as a 0-height bar labelled ``constant``, upright.
    """
    title = f"Correlation of kernel time with each collector (sampled {F.BEFORE_RUN})"
    if corr.empty:
        return common.empty(title, "no collector values")
    several = corr[C.ANNOTATION].nunique() > 1
    x = [f"{a} · {c}" if several else str(c) for a, c in zip(corr[C.ANNOTATION],
                                                               corr[F.CONFIG_LABEL])]
    corr = corr.assign(_x=x)
    fig = go.Figure()
    for i, (collector, group) in enumerate(corr.groupby(C.COLLECTOR, sort=False)):
        r = group[F.PEARSON].to_numpy(float)
        text = ["constant" if np.isnan(v) else f"{v:+.2f}" for v in r]
        fig.add_trace(go.Bar(
            x=group["_x"], y=np.nan_to_num(r), name=str(collector), text=text,
            textposition="outside", marker_color=theme.color(i),
            # upright, each "constant" stands in its own bar's slot: side by side, the labels of
            # two constant collectors ran together ("constant constant") at 1000 px
            textangle=-90 if np.isnan(r).any() else 0,
            customdata=np.column_stack([group[F.RUNS], group[F.NOTE].fillna("")]),
            hovertemplate=(f"<b>{collector}</b> %{{x}}<br>r = %{{text}}<br>runs = "
                           "%{customdata[0]}<br>%{customdata[1]}<extra></extra>")))
    fig.update_layout(barmode="group")
    fig.update_xaxes(title={"text": "config"}, type="category")
    fig.update_yaxes(title={"text": "Pearson r (collector vs kernel time)"}, range=[-1.15, 1.15])
    return common.finish(fig, title)


def build_kernel_clock_figure(frame: pd.DataFrame, host_timer: bool = False) -> go.Figure:
    """SM clock each annotation x config ran at (``gpc__cycles_elapsed.avg.per_second``).

    Returns:
        Grouped bars: x = config, one bar per annotation, y = mean SM clock (MHz) with min..max
        over the runs as error bars, and a dotted line at the device maximum.
    """
    title = "SM clock the kernels ran at (gpc__cycles_elapsed.avg.per_second)"
    if frame.empty:
        return common.empty(title, "no clock values")
    fig = go.Figure()
    for i, (annotation, group) in enumerate(frame.groupby(C.ANNOTATION, sort=False)):
        avg = group[F.SM_CLOCK_MHZ].to_numpy(float)
        fig.add_trace(go.Bar(
            x=group[F.CONFIG_LABEL], y=avg, name=str(annotation), marker_color=theme.color(i),
            meta=theme.tag(annotation),
            error_y={"type": "data", "symmetric": False,
                     "array": group[F.MAX_MHZ].to_numpy(float) - avg,
                     "arrayminus": avg - group[F.MIN_MHZ].to_numpy(float)},
            customdata=np.column_stack([group[F.MIN_MHZ], group[F.MAX_MHZ], group[C.NUM_RUNS]]),
            hovertemplate=(f"<b>{annotation}</b> %{{x}}<br>mean %{{y:.0f}} MHz<br>"
                           "min %{customdata[0]:.0f} · max %{customdata[1]:.0f} MHz<br>"
                           "runs %{customdata[2]}<extra></extra>")))
    top = frame[F.MAX_SM_CLOCK_MHZ].dropna()
    if len(top):
        common.hline(fig, float(top.iloc[0]), f"device max {float(top.iloc[0]):.0f} MHz")
    fig.update_layout(barmode="group")
    fig.update_xaxes(title={"text": "config"}, type="category")
    fig.update_yaxes(title={"text": theme.axis_title("SM clock", "MHz")}, rangemode="tozero")
    return common.finish(fig, title, host_timer)


def build_thermal_figure(frame: pd.DataFrame) -> go.Figure:
    """RSD of the duration per annotation x config in each job (thermal_mode comparison).

    Returns:
        Grouped bars: x = config, one bar per job (legend: job, thermal_mode, wall time),
        y = relative standard deviation (%), dashed line at the 2 % stability threshold.
    """
    title = "Run-to-run spread per config, by thermal_mode"
    if frame.empty:
        return common.empty(title, "no values")
    several = frame[C.ANNOTATION].nunique() > 1
    fig = go.Figure()
    for i, (job, group) in enumerate(frame.groupby(F.JOB, sort=False)):
        x = [f"{a} · {c}" if several else str(c) for a, c in zip(group[C.ANNOTATION],
                                                                   group[F.CONFIG_LABEL])]
        wall = group[F.WALL_S].iloc[0]
        wall_text = f", {float(wall):.1f} s wall" if pd.notna(wall) else ""
        fig.add_trace(go.Bar(
            x=x, y=group[C.RSD], name=f"{job} (thermal_mode {group[F.THERMAL_MODE].iloc[0]}"
                                      f"{wall_text})",
            marker_color=theme.color(i), customdata=group[F.AVG_US],
            hovertemplate=("%{x}<br>RSD %{y:.2f} %<br>mean "
                           f"%{{customdata:{common.hover_format(group[F.AVG_US])}}} µs"
                           "<extra></extra>")))
    common.rsd_axes(fig)
    return common.finish(fig, title)
