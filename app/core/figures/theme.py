"""Shared look of every figure: colours, axis titles with units, the host-timer caveat, and the
rule for drawing many per-run points.

No template is forced: inside the app Streamlit's own plotly template (``theme="streamlit"``, the
default of ``st.plotly_chart``) picks fonts and text colours from the active light or dark theme,
and backgrounds stay transparent. A file written outside the app (HTML download) gets a concrete
light template through :func:`for_export`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
import plotly.graph_objects as go

from app.core import metric_roles
from app.core.figures.text import figure_as_text, html_text

HOST_TIMER_SUFFIX = "(host wall-clock, not GPU)"
COLORS = ("#76b900", "#1f77b4", "#ff7f0e", "#d62728", "#9467bd", "#8c564b", "#e377c2",
          "#17becf", "#7f7f7f", "#bcbd22")  # NVIDIA green first; each reads on light and dark
#: For charts with more series than :data:`COLORS` (e.g. one per kernel name): COLORS, then the
#: colours of plotly's Dark24 that differ from them and are neither near-black nor pale, so each
#: still reads on the light and the dark theme (22 distinct colours before any repeats).
LONG_COLORS = COLORS + ("#00a08b", "#511cfb", "#b68100", "#fb00d1", "#6c7c32", "#778aae",
                        "#a777f1", "#eb663b", "#1ca71c", "#fc0080", "#2e91e5", "#b2828d")
#: SM and DRAM throughput bars: a neutral pair (slate, sand) outside the annotation colours, so a
#: bar is never read as an annotation (fp32 took NVIDIA green, the SM bar's old colour); CIE76
#: delta-E from every LONG_COLORS entry and from the reference/limiter greys is 19 or more.
BOUND_COLORS = ("#3b5b76", "#d2b48c")
GRID = "rgba(128,128,128,0.25)"
#: A log axis whose every tick is labelled in full (1,000, 2,000, 5,000, 10,000; 0.05): plotly's
#: default labels the 2 and 5 ticks between decades as bare digits ("2", "5", "10k", "2"), and a
#: new user read the 2 after 10k as 2.
LOG_AXIS: Mapping[str, str] = MappingProxyType({"type": "log", "tickformat": ",~g"})
#: Tick labels of every numeric y axis that sets none of its own (:func:`apply_layout`): plotly's
#: default writes SI prefixes, so a TFLOP/s axis of a cpu job read "100μ ... 500μ" (micro-TFLOP/s
#: to a reader); d3's ",~g" writes 0.0001 ... 0.0005, 21,000, and 1e-7 below 1e-6.
VALUE_TICKFORMAT = ",~g"
#: Axis types whose ticks are not numbers (a number format would break or be ignored there).
_NON_NUMERIC_AXES = ("category", "multicategory", "date")
TRANSPARENT = "rgba(0,0,0,0)"
EXPORT_TEMPLATE = "plotly_white"

#: Above this many points a trace is drawn with WebGL (``go.Scattergl``).
WEBGL_ABOVE = 10_000
#: Above this many points only every k-th point is drawn (k chosen to keep at most this many).
DECIMATE_ABOVE = 100_000
#: Per-point keyword arguments that are thinned together with x and y.
_PER_POINT = ("customdata", "text", "hovertext")


def color(i: int) -> str:
    """The i-th series colour (cycles)."""
    return COLORS[i % len(COLORS)]


def long_color(i: int) -> str:
    """The i-th colour of :data:`LONG_COLORS` (cycles only after 22 series)."""
    return LONG_COLORS[i % len(LONG_COLORS)]


def tag(annotation: object) -> dict[str, str]:
    """``meta`` of a trace that draws one annotation: :func:`color_annotations` colours it."""
    return {ANNOTATION_META: str(annotation)}


ANNOTATION_META = "annotation"


def annotation_colors(annotations: Iterable[object]) -> dict[str, str]:
    """Annotation -> colour for a job: its i-th distinct annotation gets ``LONG_COLORS[i]``, so
    fp32 has one colour on the sweep, the roofline, stability and every other view."""
    names = dict.fromkeys(str(a) for a in annotations)
    return {name: long_color(i) for i, name in enumerate(names)}


def color_annotations(fig: go.Figure, colors: Mapping[str, str]) -> go.Figure:
    """Give each trace tagged with :func:`tag` the colour of its annotation in ``colors`` (its
    line, markers, fill and text); an annotation not in ``colors`` (e.g. only in a compared
    job) gets the next colours after the job's, in order of appearance. Untagged traces (bars
    of SM vs DRAM, roofs, limiter markers) keep theirs."""
    extra: dict[str, str] = {}
    colors = {html_text(name): c for name, c in colors.items()}  # meta is escaped text
    for trace in fig.data:
        meta = trace.meta if isinstance(trace.meta, dict) else {}
        name = meta.get(ANNOTATION_META)
        if name is None:
            continue
        color = colors.get(name) or extra.setdefault(name, long_color(len(colors) + len(extra)))
        if "line" in trace and trace.type != "bar":
            trace.line.color = color
        if "marker" in trace:
            trace.marker.color = color
        if getattr(trace, "fillcolor", None) is not None:
            trace.fillcolor = color
        if "textfont" in trace and trace.textfont.color is not None:
            trace.textfont.color = color
    return fig


def titled(title: str, host_timer: bool) -> str:
    """``title`` plus the host-timer caveat for cpu-backend jobs."""
    return f"{title} {HOST_TIMER_SUFFIX}" if host_timer else title


def unit_text(unit: object) -> str:
    """A unit as a figure shows it: "" for a missing one (:func:`app.core.metric_roles.unit_text`:
    None, NaN, or the text "None"/"nan" such a value became), else its text."""
    return metric_roles.unit_text(unit)


def first_unit(units: Iterable[object]) -> str:
    """The first unit of a column that is not missing (:func:`unit_text`), "" when none is."""
    for unit in units:
        if text := unit_text(unit):
            return text
    return ""


def axis_title(label: str, unit: object) -> str:
    """``Label (unit)``, or the label alone for a unitless axis (a missing unit, None or NaN,
    counts as none: :func:`unit_text`)."""
    shown = unit_text(unit)
    return f"{label} ({shown})" if shown else label


def apply_layout(fig: go.Figure, title: str) -> go.Figure:
    """Last step of every figure builder. Common layout: title, horizontal legend at the foot
    of the figure (below the x-axis title; the margin grows with it, so a legend of many rows never runs into the title),
    compact margins, hover per point, transparent backgrounds and half-transparent grid lines
    (light and dark themes alike), numeric y axes without a tick format of their own labelled by
    :data:`VALUE_TICKFORMAT` (no SI prefixes); then every name in the figure is escaped as text
    (:func:`app.core.figures.text.figure_as_text`), so call it once, after the traces."""
    fig.update_layout(title={"text": title}, hovermode="closest",
                      legend={"orientation": "h", "yref": "container", "yanchor": "bottom",
                              "y": 0, "x": 0},
                      margin={"l": 60, "r": 20, "t": 60, "b": 40},
                      paper_bgcolor=TRANSPARENT, plot_bgcolor=TRANSPARENT)
    fig.update_xaxes(gridcolor=GRID, zerolinecolor=GRID)
    fig.update_yaxes(gridcolor=GRID, zerolinecolor=GRID)
    fig.for_each_yaxis(_number_ticks)
    rows = legend_rows(fig)
    if fig.layout.height is None and rows > 2:  # keep the plot area when the legend is tall
        fig.update_layout(height=BASE_HEIGHT + LEGEND_ROW_PX * (rows - 2))
    return figure_as_text(fig)  # every builder ends here: names from files become text


def _number_ticks(axis: Any) -> None:
    """:data:`VALUE_TICKFORMAT` on a numeric y axis that has no tick format of its own."""
    if axis.tickformat is None and axis.type not in _NON_NUMERIC_AXES:
        axis.tickformat = VALUE_TICKFORMAT


BASE_HEIGHT = 450
LEGEND_ROW_PX = 20
_CHAR_PX, _ITEM_PX, _LEGEND_WIDTH_PX = 6.5, 40.0, 900.0


def legend_rows(fig: go.Figure, width_px: float = _LEGEND_WIDTH_PX) -> int:
    """Rows a horizontal legend takes (estimate): plotly wraps its items into columns as wide as
    the widest item once they no longer fit on one line."""
    names = [str(t.name) for t in fig.data if t.name and t.showlegend is not False]
    if not names:
        return 0
    widths = [len(n) * _CHAR_PX + _ITEM_PX for n in names]
    if sum(widths) <= width_px:
        return 1
    columns = max(1, int(width_px // max(widths)))
    return math.ceil(len(names) / columns)


def for_export(fig: go.Figure) -> go.Figure:
    """A copy of ``fig`` with a concrete light template and white paper, for files opened
    outside the app (the in-app template only has placeholders Streamlit fills in)."""
    out = go.Figure(fig)
    out.update_layout(template=EXPORT_TEMPLATE, paper_bgcolor="white", plot_bgcolor="white")
    return out


def decimation_step(n_points: int) -> int:
    """k of "every k-th point": 1 up to :data:`DECIMATE_ABOVE` points, else the smallest k that
    keeps at most that many."""
    return 1 if n_points <= DECIMATE_ABOVE else math.ceil(n_points / DECIMATE_ABOVE)


def decimation_note(n_points: int) -> str:
    """``every 3rd of 250,000 points`` when :func:`decimation_step` thins, else ""."""
    step = decimation_step(n_points)
    if step == 1:
        return ""
    suffix = "th" if 10 <= step % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(step % 10, "th")
    return f"every {step}{suffix} of {n_points:,} points"


def points_trace(x: Any, y: Any, name: str, **kwargs: Any) -> go.Scatter | go.Scattergl:
    """A per-run scatter trace drawn the same way everywhere.

    ``go.Scatter`` up to :data:`WEBGL_ABOVE` points, ``go.Scattergl`` above; above
    :data:`DECIMATE_ABOVE` points only every k-th point is kept (x, y and any per-point
    ``customdata``/``text``/``hovertext`` alike) and the legend name says so.

    Args:
        x, y: equal-length sequences (converted to numpy arrays).
        name: legend name.
        kwargs: any other trace properties (mode, marker, hovertemplate ...).
    """
    xs, ys = np.asarray(x), np.asarray(y)
    n_points = len(xs)
    step = decimation_step(n_points)
    if step > 1:
        xs, ys = xs[::step], ys[::step]
        for key in _PER_POINT:
            if key in kwargs and kwargs[key] is not None and not isinstance(kwargs[key], str):
                kwargs[key] = np.asarray(kwargs[key])[::step]
        name = f"{name} ({decimation_note(n_points)})"
    cls = go.Scattergl if n_points > WEBGL_ABOVE else go.Scatter
    return cls(x=xs, y=ys, name=name, **kwargs)
