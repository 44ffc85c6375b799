"""The embedded timeline: each launch as a bar on its region's track, and (where the job has
CUPTI start times) the NVML SM and memory clock on the same time axis below."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from profiling_worker.bundle.schema import columns as C

from app.core import frame_columns as F
from app.core.figures import common, theme

_CLOCKS = ("SM clock", "memory clock")


def build_timeline_figure(launches: pd.DataFrame, counters: pd.DataFrame, measured_starts: bool,
                          max_sm_mhz: float | None = None, host_timer: bool = False
                          ) -> go.Figure:
    """Launch bars per region track, coloured by config; below them the NVML clocks when they share
    the axis.

    Args:
        launches, counters: the frames of :func:`~app.core.views.timeline.timeline_view`.
        measured_starts: the launches sit at their CUPTI start times (else in run order).
        max_sm_mhz: the device's maximum SM clock (dotted line), if known.
        host_timer: the durations are host wall-clock times (cpu backend): the run-order axis
            and the title say so (the axis said "Kernel time so far" of a job with no kernel
            time, issue 37).

    Returns:
        One row (launches) or two sharing x (launches; SM and memory clock in MHz); x in ms
        from the trace's first event (CUPTI clock), or cumulative kernel time in run order.
        With clocks, x opens on the launches (the NVML trace starts with the worker, seconds
        before them); zooming out (double-click) shows every sample.
    """
    title = ("Timeline: launches at their CUPTI start times" if measured_starts else
             "Timeline: launches back to back in run order (durations, not start times)")
    if launches.empty:
        return common.empty(title, "no launches")
    clocks = counters[counters[F.COUNTER].isin(_CLOCKS)]
    rows = 2 if not clocks.empty else 1
    fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.06,
                        row_heights=[0.6, 0.4][:rows] if rows == 2 else None)
    for i, (label, group) in enumerate(launches.groupby(F.CONFIG_LABEL, sort=False)):
        fig.add_trace(go.Bar(  # one colour per config; the outline keeps µs bars visible
            orientation="h", base=group[F.START_MS], x=group[F.DURATION_US] / 1e3,
            y=group[F.TRACK], name=str(label),
            marker={"color": theme.color(i), "line": {"color": theme.color(i), "width": 1}},
            customdata=group[[C.KERNEL, F.CONFIG_LABEL, C.RUN, F.DURATION_US]],
            hovertemplate="%{customdata[0]}<br>%{customdata[1]}, run %{customdata[2]}<br>"
                          "%{customdata[3]:.3f} µs at %{base:.3f} ms<extra></extra>"),
            row=1, col=1)
    for i, (name, group) in enumerate(clocks.groupby(F.COUNTER, sort=False)):
        fig.add_trace(theme.points_trace(
            group[F.START_MS], group[F.COUNTER_VALUE], str(name), mode="lines+markers",
            line={"color": theme.color(i + 6)}, marker={"size": 3},
            hovertemplate=f"{name} %{{y:.0f}} MHz<br>%{{x:.3f}} ms<extra></extra>"),
            row=2, col=1)
    if rows == 2:
        _open_on_launches(fig, launches)
        if max_sm_mhz:
            fig.add_hline(y=max_sm_mhz, line_dash="dot", line_color=common.REFERENCE, row=2,
                          col=1, annotation_text=f"max SM clock {max_sm_mhz:.0f} MHz",
                          annotation_position="bottom right")
        fig.update_yaxes(title={"text": theme.axis_title("Clock", "MHz")}, rangemode="tozero",
                         row=2, col=1)
    axis = ("Time on CUPTI's clock from the first event" if measured_starts else
            run_order_axis(host_timer))
    fig.update_xaxes(title={"text": theme.axis_title(axis, "ms")}, row=rows, col=1)
    fig.update_yaxes(type="category", autorange="reversed", row=1, col=1)
    fig.update_layout(height=260 + 60 * launches[F.TRACK].nunique() + 160 * (rows - 1),
                      barmode="overlay")
    return common.finish(fig, title, host_timer)


def run_order_axis(host_timer: bool) -> str:
    """The x axis of launches back to back in run order: the time its durations add up,
    named as the backend measured it (``host_timer``: host wall-clock, cpu backend)."""
    return f"{'Host wall-clock' if host_timer else 'Kernel'} time so far, in run order"


def _open_on_launches(fig: go.Figure, launches: pd.DataFrame) -> None:
    """x range = the launches' span (first start to last end, ms) and 10 % either side."""
    first = launches[F.START_MS].min()
    last = (launches[F.START_MS] + launches[F.DURATION_US] / 1e3).max()
    pad = 0.1 * (last - first)
    fig.update_xaxes(range=[first - pad, last + pad])
