"""The kernel's own timeline: PM-sampling series over the launch's duration, one panel per kind
(throughput in % of peak, occupancy, stalls, hit rates, per-sample counts), x shared."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.core.figures import common, theme
from app.core.views import pm_sampling as P


def build_pm_figure(line: P.Timeline, metrics: Sequence[str]) -> go.Figure:
    """Lines of the chosen series against time.

    Args:
        line: the launch's :class:`~app.core.views.pm_sampling.Timeline`.
        metrics: the series to draw (base metric names).

    Returns:
        One row per panel holding a chosen series; x in ns from the kernel's start (dotted lines
        at its start and end when the duration is known, in every panel), y in the panel's unit
        (% panels from 0 to 100; a per-sample count names its unit in the legend).
    """
    title = "The kernel's own timeline (PM sampling)"
    frame = line.frame[line.frame[P.METRIC].isin(list(metrics))]
    if frame.empty:
        return common.empty(title, "no series chosen")
    panels = [p for p in P.PANELS if p in set(frame[P.PANEL])]
    fig = make_subplots(rows=len(panels), cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=panels)
    for i, (metric, group) in enumerate(frame.groupby(P.METRIC, sort=False)):
        unit = str(group[P.UNIT].iloc[0])
        fig.add_trace(go.Scatter(  # a count's unit in its name: panels mix cycles, sectors ...
            x=group[line.time], y=group[P.VALUE], mode="lines",
            name=str(metric) if unit in ("", "%") else f"{metric} ({unit})",
            line={"color": theme.long_color(i), "width": 1.5, "shape": "hv"},
            hovertemplate=f"{metric}<br>%{{y:.4g}} {unit} at %{{x:,}} ns<extra></extra>"),
            row=panels.index(str(group[P.PANEL].iloc[0])) + 1, col=1)
    for row, panel in enumerate(panels, start=1):
        peak = P.PANELS[panel] in ("% of peak", "%")
        fig.update_yaxes(title={"text": P.PANELS[panel]}, range=[0, 100] if peak else None,
                         rangemode="tozero", row=row, col=1)
    if line.duration_ns is not None:
        for x, text in ((0.0, "kernel start"), (line.duration_ns, "kernel end")):
            fig.add_vline(x=x, line_dash="dot", line_color=common.REFERENCE,
                          annotation_text=text, annotation_position="top")
    fig.update_xaxes(title={"text": theme.axis_title(line.time.rsplit(" (", 1)[0], "ns")},
                     row=len(panels), col=1)
    fig.update_layout(height=220 + 230 * len(panels))
    return common.finish(fig, title)
