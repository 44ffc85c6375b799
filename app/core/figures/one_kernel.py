"""One kernel figure: the duration of every launch of one annotation x config, run by run."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from profiling_worker.bundle.schema import columns as C

from app.core.figures import common, theme
from app.core.table_text import shorten_middle

REGION_TOTAL = "region total"
#: A legend entry's length (characters); cuBLAS names run past 100.
LEGEND_CHARS = 48


def chart_title(annotation: str, config_label: str) -> str:
    """The title of :func:`build_one_kernel_figure` for an annotation x config (``n=512``)."""
    return f"{annotation} · {config_label}: duration per run"


def build_one_kernel_figure(frame: pd.DataFrame, title: str,
                            host_timer: bool = False) -> go.Figure:
    """Duration per run of each kernel the region launched (and of the region, when it
    launched several).

    Args:
        frame: :func:`~app.core.views.one_kernel.one_kernel_launches_frame`.
        title: names the annotation x config.

    Returns:
        x = run index (0 = first run), y = duration in the frame's unit; one marker series per
        kernel name (full name in the hover) and a line for the region total when there are
        several kernels.
    """
    if frame.empty:
        return common.empty(title, "this job has no per-run or per-launch durations")
    unit = theme.first_unit(frame[C.UNIT])
    kernels = [k for k in dict.fromkeys(frame[C.KERNEL]) if k != REGION_TOTAL]
    fig = go.Figure()
    for i, kernel in enumerate(kernels):
        part = frame[frame[C.KERNEL] == kernel]
        fig.add_trace(theme.points_trace(
            part[C.RUN].to_numpy(float), part[C.VALUE].to_numpy(float),
            shorten_middle(str(kernel), LEGEND_CHARS), mode="markers",
            marker={"color": theme.color(i + 1), "size": 8},
            meta={"kernel": str(kernel)},  # the full name in the hover, escaped with the meta
            hovertemplate=(f"<b>{kernel}</b><br>run %{{x}}<br>"
                           f"%{{y:{common.hover_format(part[C.VALUE])}}} {unit}"
                           "<extra></extra>")))
    total = frame[frame[C.KERNEL] == REGION_TOTAL]
    if len(total) and (len(kernels) != 1):
        fig.add_trace(theme.points_trace(
            total[C.RUN].to_numpy(float), total[C.VALUE].to_numpy(float), REGION_TOTAL,
            mode="lines+markers", line={"color": theme.color(0), "width": 1},
            hovertemplate=(f"region total<br>run %{{x}}<br>"
                           f"%{{y:{common.hover_format(total[C.VALUE])}}} {unit}<extra></extra>")))
    few = frame[C.RUN].nunique() <= 30
    fig.update_xaxes(title={"text": "run index (0 = first run)"}, dtick=1 if few else None)
    fig.update_yaxes(title={"text": theme.axis_title("Duration", unit)}, rangemode="tozero")
    return common.finish(fig, title, host_timer)
