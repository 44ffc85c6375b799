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
#: A log axis. Its ticks are chosen in :func:`apply_layout` from the data drawn on it
#: (:func:`log_tick_values`: 1-2-5 per decade, decades, or every k-th decade, whichever fits)
#: and written in one notation (:func:`tick_labels`: 1,000 / 2,000 / 5,000; 0.05). Plotly's own
#: choice labelled every digit of a decade on a short axis, "7e+6 8e+6 9e+6" drawn on top of
#: each other, and mixed "900,000" with "1e+6".
LOG_AXIS: Mapping[str, str] = MappingProxyType({"type": "log"})
#: Tick labels of every numeric y axis that sets none of its own (:func:`apply_layout`): plotly's
#: default writes SI prefixes, so a TFLOP/s axis of a cpu job read "100μ ... 500μ" (micro-TFLOP/s
#: to a reader); d3's ",~r" writes 0.0001 ... 0.0005, 21,000 and 1,000,000 (",~g" switched to
#: "1e+6" at a million, beside "900,000").
VALUE_TICKFORMAT = ",~r"
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
    of the figure (below the x-axis title; the margin grows with it, so a legend of many rows never
    runs into the title),
    compact margins, hover per point, transparent backgrounds and half-transparent grid lines
    (light and dark themes alike), legend items in the traces' order (:func:`legend_order`),
    tick labels not checked for running past the chart's edge (``ticklabeloverflow="allow"``),
    numeric y axes without a tick format of their own labelled by
    :data:`VALUE_TICKFORMAT` (no SI prefixes); then every name in the figure is escaped as text
    (:func:`app.core.figures.text.figure_as_text`) and the title broken into lines that fit
    the narrowest chart (:func:`wrap_title`), so call it once, after the traces."""
    fig.update_layout(title={"text": title}, hovermode="closest",
                      legend={"orientation": "h", "yref": "container", "yanchor": "bottom",
                              "y": 0, "x": 0, "traceorder": legend_order(fig)},
                      margin={"l": 60, "r": 20, "t": 60, "b": 40},
                      paper_bgcolor=TRANSPARENT, plot_bgcolor=TRANSPARENT)
    # plotly.js hides a tick label that runs past the chart's edge ("hide past div", its default
    # for outside labels on numeric axes) by measuring every label of the axis each time it
    # places one: quadratic in the labels, a forced layout each, 10-37 % of the browser's work
    # to draw a page's chart after a click (issue 40). The margins leave room for the labels,
    # so none is hidden and "allow" draws the same chart without measuring.
    fig.update_xaxes(gridcolor=GRID, zerolinecolor=GRID, ticklabeloverflow="allow")
    fig.update_yaxes(gridcolor=GRID, zerolinecolor=GRID, ticklabeloverflow="allow")
    fig.for_each_yaxis(_number_ticks)
    set_log_ticks(fig)
    rows = legend_rows(fig)
    if fig.layout.height is None and rows > 2:  # keep the plot area when the legend is tall
        fig.update_layout(height=BASE_HEIGHT + LEGEND_ROW_PX * (rows - 2))
    figure_as_text(fig)  # every builder ends here: names from files become text
    wrap_title(fig)  # every title, not Compare's alone: Kernels' lost "not GPU" at 1000x700
    undrawn = not_on_log_axes(fig)  # after the escaping: the names it repeats are text now
    if undrawn:
        fig.layout.title.text = f"{fig.layout.title.text or ''}<br><sup>{undrawn}</sup>"
    return fig


#: Most points :func:`not_on_log_axes` names one by one; the rest are counted.
UNDRAWN_NAMED = 4


def not_on_log_axes(fig: go.Figure) -> str:
    """What a log axis cannot draw, in words: the points of each trace whose value on it is 0
    or below (plotly leaves them out without a word), each named by its trace and its other
    coordinate, e.g. ``"not drawn on the log y axis (0 or below): fp32 at 64 (-5)"``; "" when
    every point is drawn. Names are taken from the figure as it is (escaped by
    :func:`figure_as_text` when called after it)."""
    said = []
    for letter, other in (("x", "y"), ("y", "x")):
        points = []
        for trace in fig.data:
            ref = getattr(trace, f"{letter}axis", None) or letter
            axis = fig.layout[f"{letter}axis{ref[1:]}"]
            values, at = getattr(trace, letter, None), getattr(trace, other, None)
            if axis.type != "log" or values is None or isinstance(values, str):
                continue
            try:
                drawn = np.asarray(values, dtype=float).ravel()
            except (TypeError, ValueError):
                continue
            where = list(at) if at is not None and len(at) == len(drawn) else [None] * len(drawn)
            points += [f"{trace.name or 'trace'}" + (f" at {w:,g}" if isinstance(w, (int, float))
                                                      else f" at {w}" if w is not None else "")
                       + f" ({v:,g})" for v, w in zip(drawn.tolist(), where) if v <= 0]
        if points:
            more = len(points) - UNDRAWN_NAMED
            said.append(f"not drawn on the log {letter} axis (0 or below): "
                        + ", ".join(points[:UNDRAWN_NAMED])
                        + (f" and {more:,} more" if more > 0 else ""))
    return "; ".join(said)


def legend_order(fig: go.Figure) -> str:
    """The legend's ``traceorder``: the traces' own order, grouped where a trace has a legend
    group. plotly reverses the legend of stacked bars (and ``tonexty`` fills) by default, so
    that a vertical legend reads top-down like the stack; the legend here is one horizontal
    row at the foot, read left to right, and reversed it listed the Kernels chart's kernels
    backwards and Memory's "written" before "read" (a new user's find). In trace order it
    reads like the stack from its base, the tables and the hover."""
    grouped = any(getattr(t, "legendgroup", None) for t in fig.data)
    return "grouped" if grouped else "normal"


#: Characters of a title line that fit the narrowest chart (590 px: a 1000x700 window with the
#: sidebar open, about 8.5 px a character of the bold title font).
TITLE_LINE_CHARS = 68
_TITLE_LINE_PX = 22


def wrap_title(fig: go.Figure, chars: int = TITLE_LINE_CHARS) -> go.Figure:
    """Break ``fig``'s (escaped) title at spaces into lines of at most ``chars`` characters
    (a word longer than that keeps a line of its own) and grow the top margin by a line for
    each: plotly draws a title on one line and cuts what does not fit, so the Compare chart's
    title lost the job ids it compares, the Kernels chart the end of its host-timer caveat
    (fresh users' finds). :func:`apply_layout` calls it once the title is escaped (the ``<br>``
    added here is plotly's line break)."""
    lines: list[str] = []
    for word in str(fig.layout.title.text or "").split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= chars:
            lines[-1] += " " + word
        else:
            lines.append(word)
    if len(lines) > 1:
        fig.update_layout(title={"text": "<br>".join(lines)},
                          margin={"t": fig.layout.margin.t + _TITLE_LINE_PX * (len(lines) - 1)})
    return fig


def _number_ticks(axis: Any) -> None:
    """:data:`VALUE_TICKFORMAT` on a numeric y axis that has no tick format of its own."""
    if axis.tickformat is None and axis.type not in _NON_NUMERIC_AXES:
        axis.tickformat = VALUE_TICKFORMAT


#: Plot lengths (px) log ticks are spaced for: the narrowest a chart is drawn (a 1000x700
#: window with the sidebar open; a row of the three-row Cache and clock figure).
_AXIS_PX = {"x": 420.0, "y": 150.0}
_Y_LABEL_PX = 18.0
_X_CHAR_PX, _X_PAD_PX = 7.5, 12.0
_LOG_MANTISSAS = ((1, 2, 5), (1,))


def log_tick_values(lo: float, hi: float, letter: str = "x") -> list[float]:
    """Tick values for a log axis showing ``lo``..``hi`` (> 0): 1-2-5 in each decade if their
    labels fit :data:`_AXIS_PX` without touching, else whole decades, else every k-th decade;
    a range inside one decade gets round linear steps (7,000,000, 8,000,000, 9,000,000).
    ``letter``: "x" (labels side by side, their width counts) or "y" (stacked, their height)."""
    lo, hi = min(lo, hi), max(lo, hi)
    data = (lo, hi)
    lo, hi = lo / 1.015, hi * 1.015  # plotly's range pads the data a little: a tick just
    # beyond it is still drawn (a roof at 989.4 TFLOP/s, tick 1,000)
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    fine, decades = ([m * 10.0 ** e for e in range(first, last + 1) for m in mantissas
                      if lo <= m * 10.0 ** e <= hi] for mantissas in _LOG_MANTISSAS)
    if len(fine) >= 2 and _fits(fine, lo, hi, letter):
        return fine
    if len(decades) >= 2:  # decades, every k-th if they are still too close
        for every in range(1, len(decades) + 1):
            thinned = decades[::every]
            if len(thinned) < 2 or _fits(thinned, lo, hi, letter):
                return thinned
    if len(fine) >= 2:  # less than two decades shown: the 1-2-5 values that keep apart
        return spaced_ticks(fine, tick_labels(fine), letter, span=(lo, hi))[0]
    return _linear_ticks(*data)  # inside one decade: round values


def _linear_ticks(lo: float, hi: float) -> list[float]:
    """2-4 round values (a 1-2-5 step) between ``lo`` and ``hi``, the data's own extent: on a
    narrow range plotly pads far less than :func:`log_tick_values`' 1.5 %, and a ratio axis of
    0.996-1.007 drew only "1.00" of 0.98, 1.00, 1.02. Finer steps until two fit."""
    ticks: list[float] = []
    for parts in (3, 6, 12):
        step = _round_step((hi - lo) / parts) if hi > lo else abs(lo) or 1.0
        ticks = [step * i for i in range(math.ceil(lo / step - 1e-9),  # 0.8 / 0.2: 4.0000001
                                         math.floor(hi / step + 1e-9) + 1)]
        if len(ticks) >= 2:
            break
    return ticks or [lo]


def _round_step(rough: float) -> float:
    """The 1-2-5 x 10^k step at or above ``rough``."""
    power = 10.0 ** math.floor(math.log10(rough))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= rough)


def _fits(ticks: list[float], lo: float, hi: float, letter: str) -> bool:
    """Whether neighbouring tick labels stay apart on an axis of :data:`_AXIS_PX` pixels."""
    px_per_decade = _AXIS_PX[letter] / max(math.log10(hi / lo), 1e-9)
    labels = tick_labels(ticks)
    for (a, ta), (b, tb) in zip(zip(ticks, labels), zip(ticks[1:], labels[1:])):
        need = (_Y_LABEL_PX if letter == "y"
                else _X_CHAR_PX * (len(ta) + len(tb)) / 2 + _X_PAD_PX)
        if math.log10(b / a) * px_per_decade < need:
            return False
    return True


def spaced_ticks(values: list[float], labels: list[str], letter: str = "x",
                 span: tuple[float, float] | None = None) -> tuple[list[float], list[str]]:
    """The ticks of a log axis given one per drawn value (a sweep's sizes), thinned so that
    neighbouring labels stay apart on :data:`_AXIS_PX` pixels: the first is kept, then each
    next one far enough from the last kept. A 1,000-config sweep drew 1,000 labels on top of
    each other. ``span``: the axis's data range (default: the values')."""
    if len(values) < 2:
        return list(values), list(labels)
    lo, hi = span or (min(values), max(values))
    px_per_decade = _AXIS_PX[letter] / max(math.log10(hi / lo), 1e-9)
    kept = [0]
    for i in range(1, len(values)):
        last = kept[-1]
        need = (_Y_LABEL_PX if letter == "y" else
                _X_CHAR_PX * (len(labels[last]) + len(labels[i])) / 2 + _X_PAD_PX)
        if math.log10(values[i] / values[last]) * px_per_decade >= need:
            kept.append(i)
    return [values[i] for i in kept], [labels[i] for i in kept]


def tick_labels(values: list[float]) -> list[str]:
    """Tick values in one notation, thousands separated; ticks inside one decade (round linear
    steps: 1.000, 1.005) with as many decimals as the finest needs, ticks over several decades
    each with its own (0.01, 0.1, 1, 10, 1,000,000: a cpu sweep's log axis read
    "1,000,000.00" over "0.01", a fresh user's find); exponent form for all of them only when
    one needs more than 9 decimals."""
    decimals = [_decimals(v) for v in values]
    if max(decimals, default=0) > 9:
        return [f"{v:.0e}" for v in values]
    sizes = [abs(v) for v in values if v]
    if sizes and max(sizes) < 10 * min(sizes):  # one decade: aligned decimals
        decimals = [max(decimals)] * len(values)
    return [f"{v:,.{d}f}" for v, d in zip(values, decimals)]


def _decimals(value: float) -> int:
    """Fewest decimals that write ``value`` exactly to 6 significant digits."""
    for d in range(0, 13):
        if abs(round(value, d) - value) <= abs(value) * 1e-6:
            return d
    return 13


def enclosing_log_ticks(lo: float, hi: float, letter: str = "y") -> list[float]:
    """:func:`log_tick_values` widened to a tick at or below ``lo`` and one at or above ``hi``
    in the same steps (1-2-5, every k-th decade, or round linear steps), their spacing
    checked again over the wider span: a CI95 whisker of Compare's n=64 ran past the top tick
    with no tick above it (session 26's fresh user). Up to three widenings; the last ticks
    found otherwise."""
    ticks = log_tick_values(lo, hi, letter)
    for _ in range(3):
        top = ticks[-1] if ticks[-1] >= hi * (1 - 1e-9) else _tick_beyond(ticks, hi, up=True)
        bottom = ticks[0] if ticks[0] <= lo * (1 + 1e-9) else _tick_beyond(ticks, lo, up=False)
        if (bottom, top) == (ticks[0], ticks[-1]):
            return ticks
        ticks = log_tick_values(bottom, top, letter)
    # the steps changed with each widening: the ends in the last ones, added
    if ticks[-1] < hi * (1 - 1e-9):
        ticks = [*ticks, _tick_beyond(ticks, hi, up=True)]
    if ticks[0] > lo * (1 + 1e-9):
        ticks = [_tick_beyond(ticks, lo, up=False), *ticks]
    return ticks


def _tick_beyond(ticks: list[float], value: float, up: bool) -> float:
    """The first value at or past ``value`` (above it where ``up``, else below) in the steps
    of ``ticks`` (> 0): every k-th decade, a round linear step, else 1-2-5 of each decade."""
    mantissas = [t / 10.0 ** math.floor(math.log10(t) + 1e-9) for t in ticks]
    if len(ticks) >= 2 and all(abs(m - 1) < 1e-9 for m in mantissas):  # decades
        k = round(math.log10(ticks[1] / ticks[0]))
        e = math.log10(value) / k
        return 10.0 ** (k * (math.ceil(e - 1e-9) if up else math.floor(e + 1e-9)))
    one_two_five = all(min(abs(m - n) for n in _LOG_MANTISSAS[0] + (10,)) < 1e-6
                       for m in mantissas)
    steps = np.diff(ticks)
    if len(ticks) >= (3 if one_two_five else 2) and np.allclose(steps, steps[0]):
        step = float(steps[0])
        beyond = step * (math.ceil(value / step - 1e-9) if up else math.floor(value / step + 1e-9))
        if beyond > 0:
            return beyond
    e = math.floor(math.log10(value))
    nice = [m * 10.0 ** p for p in (e - 1, e, e + 1) for m in _LOG_MANTISSAS[0]]
    return (min(v for v in nice if v >= value * (1 - 1e-9)) if up
            else max(v for v in nice if v <= value * (1 + 1e-9)))


#: How far a log y axis's range runs past its end ticks (share of its span in decades).
RANGE_PAD = 0.02


def set_log_ticks(fig: go.Figure) -> None:
    """Ticks of every log axis without tick values of its own: :func:`log_tick_values` of the
    values drawn on it (trace x or y, error bars, a fixed range; matched axes together),
    labelled by :func:`tick_labels`. A y axis without a range of its own gets a tick at or
    beyond each end of what is drawn (:func:`enclosing_log_ticks`) and its range reaches
    them: a CI95 whisker never runs past the last tick."""
    axes = {name: fig.layout[name] for name in fig.layout.to_plotly_json()
            if name.startswith(("xaxis", "yaxis"))}
    extents = drawn_extents(fig)
    for name, axis in axes.items():
        if axis.type != "log" or axis.tickvals is not None:
            continue
        values = [v for r in _matched(axes, name) for v in extents.get(r, [])]
        if axis.range is not None:
            values += [10.0 ** float(r) for r in axis.range if r is not None]
        if not values:
            continue
        lo, hi = min(values), max(values)
        if name[0] == "y" and axis.range is None:
            ticks = enclosing_log_ticks(lo, hi)
            ends = np.log10([min(ticks[0], lo), max(ticks[-1], hi)])
            pad = RANGE_PAD * float(ends[1] - ends[0] or 1.0)  # the end ticks' labels whole
            axis.update(range=[float(ends[0]) - pad, float(ends[1]) + pad])
        else:
            ticks = log_tick_values(lo, hi, name[0])
        axis.update(tickmode="array", tickvals=ticks, ticktext=tick_labels(ticks))


def _matched(axes: Mapping[str, Any], name: str) -> set[str]:
    """Refs ("x", "x2") of the axis ``name`` ("xaxis2") and of every axis that shares its range
    (plotly's ``matches``, either way)."""
    def ref(layout_name: str) -> str:
        return layout_name[0] + layout_name[5:]  # "xaxis2" -> "x2"

    own, target = ref(name), axes[name].matches
    return {ref(n) for n, a in axes.items()
            if ref(n) == own or a.matches == own
            or (target is not None and (ref(n) == target or a.matches == target))}


def drawn_extents(fig: go.Figure, positive: bool = True) -> dict[str, list[float]]:
    """Axis ref ("x", "y2") -> the smallest and largest finite value drawn on it, in its data
    units (traces, their error bars, and lines placed in its data units); positive values only
    unless ``positive`` is False (a log axis shows no other)."""
    out: dict[str, list[float]] = {}
    for trace in fig.data:
        for letter in ("x", "y"):
            data = getattr(trace, letter, None)
            if data is None or isinstance(data, str):
                continue
            try:
                arr = np.asarray(data, dtype=float)
            except (TypeError, ValueError):
                continue
            err = getattr(trace, f"error_{letter}", None)
            parts = [arr]
            if err is not None and err.array is not None:
                plus = np.asarray(err.array, dtype=float)
                minus = np.asarray(err.arrayminus if err.arrayminus is not None else err.array,
                                   dtype=float)
                if plus.shape == arr.shape and minus.shape == arr.shape:
                    parts += [arr + plus, arr - minus]
            flat = np.concatenate([p.ravel() for p in parts])
            flat = flat[np.isfinite(flat) & ((flat > 0) | (not positive))]
            if flat.size:
                ref = getattr(trace, f"{letter}axis", None) or letter
                out.setdefault(ref, []).extend([float(flat.min()), float(flat.max())])
    for shape in fig.layout.shapes:  # a reference line (ratio 1) widens plotly's range too
        for letter in ("x", "y"):
            ref = getattr(shape, f"{letter}ref", None) or ""
            ends = [getattr(shape, f"{letter}{i}", None) for i in (0, 1)]
            if ref[:1] == letter and "domain" not in ref and ref != "paper":
                out.setdefault(ref, []).extend(float(v) for v in ends
                                               if isinstance(v, (int, float))
                                               and (v > 0 or not positive))
    return out


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
