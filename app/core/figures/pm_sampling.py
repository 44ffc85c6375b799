"""The kernel's own timeline: PM-sampling series over the launch's duration, one panel per kind
(throughput in % of peak, occupancy, stalls, hit rates, per-sample counts), x shared."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from profiling_worker.bundle.schema import columns as C

from app.core import frame_columns as F
from app.core.figures import common, theme

#: What each panel's y axis shows.
AXES = {F.PM_THROUGHPUT: "% of peak", F.PM_OCCUPANCY: "% of peak", F.PM_STALLS: "warps per sample",
        F.PM_HIT_RATES: "%", F.PM_COUNTS: "per sample"}


def build_pm_figure(samples: pd.DataFrame, time: str, duration_ns: float | None,
                    metrics: Sequence[str]) -> go.Figure:
    """Lines of the chosen series against time.

    Args:
        samples: long frame of samples (``time``, Metric, Panel, Unit, Value), as
            :func:`app.core.views.pm_sampling.timeline` builds it.
        time: its time column (ns from the kernel's start, or from the first aligned sample).
        duration_ns: the kernel's duration (ns), None when unknown.
        metrics: the series to draw (base metric names).

    Returns:
        One row per panel holding a chosen series; x in ns (dotted lines at the kernel's start
        and end when the duration is known, in every panel), y in the panel's unit (% panels
        from 0 to 100; a per-sample count names its unit in the legend).
    """
    title = "The kernel's own timeline (PM sampling)"
    frame = samples[samples[C.METRIC].isin(list(metrics))]
    if frame.empty:
        return common.empty(title, "no series chosen")
    panels = [p for p in F.PM_PANELS if p in set(frame[F.PM_PANEL])]
    fig = make_subplots(rows=len(panels), cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=panels)
    for i, (metric, group) in enumerate(frame.groupby(C.METRIC, sort=False)):
        unit = theme.first_unit(group[C.UNIT])
        fig.add_trace(go.Scatter(  # a count's unit in its name: panels mix cycles, sectors ...
            x=group[time], y=group[C.VALUE], mode="lines",
            name=str(metric) if unit in ("", "%") else f"{metric} ({unit})",
            line={"color": theme.long_color(i), "width": 1.5, "shape": "hv"},
            hovertemplate=(f"{metric}<br>%{{y:{common.hover_format(group[C.VALUE])}}} {unit}"
                           " at %{x:,} ns<extra></extra>")),
            row=panels.index(str(group[F.PM_PANEL].iloc[0])) + 1, col=1)
    for row, panel in enumerate(panels, start=1):
        peak = AXES[panel] in ("% of peak", "%")
        fig.update_yaxes(title={"text": AXES[panel]}, range=[0, 100] if peak else None,
                         rangemode="tozero", row=row, col=1)
    if duration_ns is not None:
        for x, text in ((0.0, "kernel start"), (duration_ns, "kernel end")):
            fig.add_vline(x=x, line_dash="dot", line_color=common.REFERENCE,
                          annotation_text=text, annotation_position="top")
    fig.update_xaxes(title={"text": theme.axis_title(time.rsplit(" (", 1)[0], "ns")},
                     row=len(panels), col=1)
    fig.update_layout(height=220 + 230 * len(panels))
    return common.finish(fig, title)
