"""Kernels figure: time of each kernel inside every annotation x config, stacked."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from profiling_worker.bundle.schema import columns as C

from app.core.figures import common, theme
from app.core import frame_columns as F

#: Names longer than this are shortened for the legend (the hover keeps the full name).
NAME_CHARS = 46
_HEAD, _TAIL, _WINDOW = 18, 26, 24
ELLIPSIS = "…"


def short_name(kernel: str) -> str:
    """``kernel`` cut to about ``NAME_CHARS`` characters keeping both ends (``start…end``),
    cut at ``_`` where there is one."""
    return kernel if len(kernel) <= NAME_CHARS else _join(kernel, _ends(kernel))


def _ends(name: str) -> list[tuple[int, int]]:
    """The head and tail spans of a long name, ending / starting at an underscore if one is
    near the cut."""
    head = name.rfind("_", 8, _HEAD + 1)
    tail = name.find("_", len(name) - _TAIL, len(name) - 8)
    return [(0, head if head > 0 else _HEAD),
            (tail + 1 if tail > 0 else len(name) - _TAIL, len(name))]


def short_names(kernels: list[str]) -> dict[str, str]:
    """Distinct legend names for ``kernels``: :func:`short_name`, and where two would read the
    same (cuBLAS names differing only in the middle, e.g. ``tilesize64x64x8`` vs
    ``tilesize128x64x8``) the part where they first differ is kept as well
    (``start…middle…end``); names still alike are left whole."""
    names = list(dict.fromkeys(kernels))
    out = {k: short_name(k) for k in names}
    for group in _collisions(out):
        prefix = len(_common_prefix(group))
        for k in group:
            start = k.rfind("_", 0, prefix) + 1  # from the start of the differing token
            end = start + _WINDOW
            cut = k.rfind("_", start + 1, end)
            end = cut if cut > 0 and end < len(k) else end
            out[k] = _join(k, [*_ends(k), (start, end)])
    for group in _collisions(out):
        out.update({k: k for k in group})
    return out


def _collisions(names: dict[str, str]) -> list[list[str]]:
    seen = Counter(names.values())
    groups: dict[str, list[str]] = {}
    for full, short in names.items():
        if seen[short] > 1:
            groups.setdefault(short, []).append(full)
    return list(groups.values())


def _common_prefix(names: list[str]) -> str:
    first, last = min(names), max(names)
    i = 0
    while i < min(len(first), len(last)) and first[i] == last[i]:
        i += 1
    return first[:i]


def _join(name: str, spans: list[tuple[int, int]]) -> str:
    """The parts of ``name`` in ``spans`` (merged where they touch), joined by an ellipsis."""
    merged: list[list[int]] = []
    for lo, hi in sorted((max(0, lo), min(len(name), hi)) for lo, hi in spans):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    text = ELLIPSIS.join(name[lo:hi] for lo, hi in merged)
    if merged[0][0] > 0:
        text = ELLIPSIS + text
    if merged[-1][1] < len(name):
        text += ELLIPSIS
    return text


def build_kernels_figure(frame: pd.DataFrame, host_timer: bool = False,
                         share: bool = False) -> go.Figure:
    """Stacked bars of a :func:`~app.core.views.kernels.kernel_time_frame`.

    Args:
        share: y = % of the region's time (every bar 100 %) instead of the time in µs.

    Returns:
        x = ``annotation · config``, y = mean time per run (µs, linear axis: stacked segments
        only add up on a linear axis) or share of the region (%), one stacked segment per kernel
        name with its own colour (:data:`theme.LONG_COLORS`) and a distinct short legend name
        (:func:`short_names`); hover shows the full kernel name, time (µs) and share (%).
    """
    title = ("Kernels inside each annotated region (share of the region's time)" if share
             else "Kernels inside each annotated region (mean time per run)")
    if frame.empty:
        return common.empty(title, "no launches")
    x_of = {k: f"{a} · {c}" for k, a, c in zip(frame.index, frame[C.ANNOTATION],
                                                 frame[F.CONFIG_LABEL])}
    legend = short_names([str(k) for k in frame[C.KERNEL]])
    fig = go.Figure()
    for i, (kernel, group) in enumerate(frame.groupby(C.KERNEL, sort=False)):
        fig.add_trace(go.Bar(
            x=[x_of[k] for k in group.index],
            y=group[F.SHARE] if share else group[F.MEAN_TIME_NS] / 1e3,
            name=legend[str(kernel)], marker_color=theme.long_color(i),
            customdata=group[[F.SHARE]].assign(k=str(kernel), t=group[F.MEAN_TIME_NS] / 1e3,
                                               a=common.audit_cells(group)).to_numpy(),
            hovertemplate=("<b>%{x}</b><br>%{customdata[1]}<br>time = %{customdata[2]:"
                           f"{common.hover_format(group[F.MEAN_TIME_NS] / 1e3)}}} µs"
                           "<br>share = %{customdata[0]:.1f} %" + common.audit_hover(group, 3)
                           + "<extra></extra>")))
    # a region x config whose runs failed the run audit: an x over its stacked bar
    pairs = frame.groupby([C.ANNOTATION, C.CONFIG], sort=False)
    top = (np.full(pairs.ngroups, 100.0) if share
           else pairs[F.MEAN_TIME_NS].sum().to_numpy(float) / 1e3)
    first = frame.loc[pairs.head(1).index]
    marks = common.audit_bar_marks([x_of[k] for k in first.index], top * 1.05, first)
    if marks is not None:
        fig.add_trace(marks)
    fig.update_layout(barmode="stack")
    fig.update_xaxes(title={"text": "annotation · config"}, type="category",
                     categoryorder="array", categoryarray=list(dict.fromkeys(x_of.values())))
    fig.update_yaxes(type="linear", title={"text": (
        theme.axis_title("Share of the region's time", "%") if share
        else theme.axis_title("Mean time per run", "µs"))})
    if share:  # room above 100 % for the run audit's marks
        fig.update_yaxes(range=[0, 100 if marks is None else 110])
    return common.finish(fig, title, host_timer)
