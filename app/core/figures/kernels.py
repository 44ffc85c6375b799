"""Kernels figure: time of each kernel inside every annotation x config, stacked."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from profiling_worker.schema import columns as C

from app.core.figures import common, theme

NAME_CHARS = 48


def short_name(kernel: str) -> str:
    """A kernel name cut to ``NAME_CHARS`` characters for the legend (full name in the hover)."""
    return kernel if len(kernel) <= NAME_CHARS else kernel[:NAME_CHARS - 1] + "…"


def build_kernels_figure(frame: pd.DataFrame, host_timer: bool = False) -> go.Figure:
    """Stacked bars of a :func:`~app.core.views.kernels.kernel_time_frame`.

    Returns:
        x = ``annotation · config``, y = mean time per run (µs), one stacked segment per kernel
        name; hover shows the full kernel name, time (µs) and share of the region (%).
    """
    title = "Kernels inside each annotated region (mean time per run)"
    if frame.empty:
        return common.empty(title, "no launches")
    x_of = {k: f"{a} · {c}" for k, a, c in zip(frame.index, frame[C.ANNOTATION],
                                                 frame["ConfigLabel"])}
    fig = go.Figure()
    for i, (kernel, group) in enumerate(frame.groupby(C.KERNEL, sort=False)):
        fig.add_trace(go.Bar(
            x=[x_of[k] for k in group.index], y=group["MeanTimeNs"] / 1e3,
            name=short_name(str(kernel)), marker_color=theme.color(i),
            customdata=group[["Share"]].assign(k=str(kernel)).to_numpy(),
            hovertemplate=("<b>%{x}</b><br>%{customdata[1]}<br>time = %{y:.6g} µs"
                           "<br>share = %{customdata[0]:.1f} %<extra></extra>")))
    fig.update_layout(barmode="stack", legend={"orientation": "v", "y": 1, "x": 1.02,
                                               "yanchor": "top"})
    fig.update_xaxes(title={"text": "annotation · config"}, type="category",
                     categoryorder="array", categoryarray=list(dict.fromkeys(x_of.values())))
    fig.update_yaxes(type="log", title={"text": theme.axis_title("Mean time per run", "µs")})
    return common.finish(fig, title, host_timer)
