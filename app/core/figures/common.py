"""Finishing touches shared by the analysis figures (on top of :mod:`app.core.figures.theme`).

Backgrounds are transparent and grid lines half-transparent grey, so a figure reads on Streamlit's
light and dark themes alike; fonts come from the active theme.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt
import pandas as pd
import plotly.graph_objects as go

from profiling_worker.bundle.schema import columns as C, intervals

from app.core.figures import theme
from app.core import frame_columns as F, numbers

GRID = "rgba(128,128,128,0.25)"
REFERENCE = "rgba(128,128,128,0.9)"  # reference lines (100 %, 2 %, ratio 1)


#: Why a mean's CI95 (not a ratio's) has no upper end, in :func:`ci95_text`: a throughput
#: whose time interval reaches 0.
MEAN_UNBOUNDED_NOTE = "no upper end at 95 %"


def ci95_text(lower: Iterable[float], upper: Iterable[float], unit: str = "",
              digits: str | None = None, missing: str = intervals.ONE_RUN_NOTE,
              why: str | None = None) -> np.ndarray:
    """Hover text of each point's CI95, the one CI95 line of every chart that shows a mean or
    ratio with its CI95: ``CI95 = [lo, hi] unit`` (bounds formatted with ``digits``);
    ``CI95 = [lo, unbounded) unit (why)`` where the upper bound is +inf, or NaN beside a finite
    lower one (:func:`open_upper`; ``digits`` by default the bounds' :func:`hover_format`, as
    a table writes them, never "4.12609e+06"; ``why`` by default
    :data:`~profiling_worker.bundle.schema.intervals.UNBOUNDED_NOTE` for a ratio, a ``unit``
    of "×", whose baseline mean cannot be told from 0, else :data:`MEAN_UNBOUNDED_NOTE`),
    ``CI95 unbounded (why)`` where neither bound is finite; or ``missing`` where both are NaN
    (fewer than 2 runs: no interval), so a hover never reads "NaN" or "inf"."""
    if why is None:
        why = intervals.UNBOUNDED_NOTE if unit.startswith("×") else MEAN_UNBOUNDED_NOTE
    said, in_unit = (f" ({why})" if why else ""), (f" {unit}" if unit else "")
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    if digits is None:
        digits = hover_format(np.concatenate([lower, upper]))
    out = []
    for lo, hi in zip(lower, upper):
        lo, hi = float(lo), float(hi)
        if np.isfinite([lo, hi]).all():
            out.append(f"CI95 = [{lo:{digits}}, {hi:{digits}}]{in_unit}")
        elif np.isnan(lo) and np.isnan(hi):
            out.append(missing)
        elif np.isfinite(lo):
            out.append(f"CI95 = [{lo:{digits}}, unbounded){in_unit}{said}")
        elif np.isfinite(hi):
            out.append(f"CI95 = (unbounded, {hi:{digits}}]{in_unit}{said}")
        else:
            out.append(f"CI95 unbounded{said}")
    return np.array(out, dtype=object)


#: A ratio's CI95 hover line where it has none (:func:`ratio_ci95_text`).
RATIO_NO_CI = "no CI95 (a side has fewer than 2 runs or no StdDev)"


def ratio_ci95_text(lower: Iterable[float], upper: Iterable[float]) -> np.ndarray:
    """The CI95 hover line of each ratio (candidate / baseline, ncu / cupti: unitless) of the
    ratio charts, Compare and backends alike: :func:`ci95_text` to 4 decimals, unbounded where
    the baseline mean cannot be told from 0, :data:`RATIO_NO_CI` where neither bound is
    known."""
    return ci95_text(lower, upper, digits=".4f", missing=RATIO_NO_CI,
                     why=intervals.UNBOUNDED_NOTE)


def open_upper(lower: npt.ArrayLike, upper: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Where a CI95 has no upper end: ``upper`` +inf (an unbounded ratio, a throughput whose
    time interval reaches 0), or NaN beside a finite ``lower`` (a bound that could not be
    computed is no narrow interval)."""
    lo, hi = (np.asarray(a, dtype="float64") for a in (lower, upper))
    out: npt.NDArray[np.bool_] = np.isposinf(hi) | (np.isnan(hi) & np.isfinite(lo))
    return out


def whiskers(mean: npt.ArrayLike, lower: npt.ArrayLike, upper: npt.ArrayLike
             ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The error bars' lengths above and below ``mean`` (``array``, ``arrayminus``): NaN (no
    bar) where both bounds are NaN (one run), +inf on a side the interval leaves open (upper
    :func:`open_upper`, lower -inf). An open side was once left undrawn, so the least precise
    point looked the most precise (a fresh user's find): :func:`open_ends` draws it to the
    edge of the chart with an arrow, and the hover says unbounded (:func:`ci95_text`)."""
    m, lo, hi = (np.asarray(a, dtype="float64") for a in (mean, lower, upper))
    up = open_upper(lo, hi)
    down = np.isneginf(lo) | (np.isnan(lo) & np.isfinite(hi))
    return (np.where(up, np.inf, hi - m), np.where(down, np.inf, m - lo))


#: The legend name of :func:`open_ends`' arrows.
OPEN_END_NAME = "CI95 unbounded: bar runs off the chart"
#: How far past everything else drawn an open side runs: this share of the drawn span, in the
#: y axis's own space (decades on a log axis, as plotly lays one out). Twice the largest value
#: was 0.3 decades whatever the span: a Compare chart of ratios 0.996-1.007 drew them all on
#: one line at the foot of an axis reaching 2 (a reviewer's find).
OPEN_END_PAD = 0.1


def open_end_edges(fig: go.Figure) -> tuple[float, float]:
    """Where :func:`open_ends` ends an open side on ``fig``'s y axis, in its data units (top,
    bottom): :data:`OPEN_END_PAD` of the span of everything drawn (traces, their finite error
    bars, reference lines: :func:`theme.drawn_extents`; positive values on a log axis) past
    its largest and smallest value, measured in log10 of the values on a log axis; with one
    value drawn, a tenth of it (of a decade on a log axis)."""
    log = fig.layout.yaxis.type == "log"
    drawn = np.asarray(theme.drawn_extents(fig, positive=log).get("y", [1.0]), dtype="float64")
    axis = np.log10(drawn) if log else drawn
    high, low = float(axis.max()), float(axis.min())
    pad = OPEN_END_PAD * ((high - low) or (1.0 if log else abs(high) or 1.0))
    top, bottom = high + pad, low - pad
    return (10.0 ** top, 10.0 ** bottom) if log else (top, bottom)


def _bars(trace: go.Scatter) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A trace's y and its error bars' lengths above and below, as float arrays."""
    return tuple(np.asarray(a, dtype="float64")  # type: ignore[return-value]
                 for a in (trace.y, trace.error_y.array, trace.error_y.arrayminus))


#: An arrow of :func:`open_ends`: x, y, colour, the point's name, and whether it points up.
_Arrow = tuple[object, float, str, str, bool]


def _open_bars(trace: go.Scatter, top: float, bottom: float, log: bool) -> list[_Arrow]:
    """Run ``trace``'s infinite whiskers to ``top`` / ``bottom``; the arrows that end them."""
    y, plus, minus = _bars(trace)
    up, down = np.isposinf(plus), np.isposinf(minus)
    if not (up | down).any():
        return []
    trace.error_y.array = np.where(up, top - y, plus)
    # on a log axis a lower bound <= 0 beside an open upper side (a ratio cut at 0) is cut
    # at the bottom, as the Size sweep's log floor cuts one: plotly drops that half
    cut = log & (up | down) & np.isfinite(minus) & (y - minus <= 0)
    trace.error_y.arrayminus = np.where(down | cut, y - bottom, minus)
    color = trace.line.color if trace.line is not None and trace.line.color else REFERENCE
    arrows: list[_Arrow] = []
    for j in np.flatnonzero(up | down):
        x = trace.x[j]
        x = int(x) if isinstance(x, float) and x.is_integer() else x  # 1024, not 1024.0
        arrows += [(trace.x[j], edge, color, f"{trace.name} at {x}", side)
                   for edge, side, flag in ((top, True, up), (bottom, False, down)) if flag[j]]
    return arrows


def _open_band(trace: go.Scatter, top: float, bottom: float) -> list[_Arrow]:
    """Run a CI95 band's (a filled trace's) +inf / -inf y to ``top`` / ``bottom``; the arrows
    that end it, at its middle, named by its ``legendgroup`` (the series it belongs to)."""
    y = np.asarray(trace.y, dtype="float64")
    up, down = np.isposinf(y).any(), np.isneginf(y).any()
    trace.y = np.where(np.isposinf(y), top, np.where(np.isneginf(y), bottom, y))
    x = float(np.mean(np.asarray(trace.x, dtype="float64")))
    name = str(trace.legendgroup or trace.name)
    return [(x, edge, str(trace.fillcolor or REFERENCE), name, side)
            for edge, side, flag in ((top, True, up), (bottom, False, down)) if flag]


def open_ends(fig: go.Figure) -> list[str]:
    """Draw each open side of a CI95 to the edge of the plotted range (:func:`open_end_edges`:
    just beyond everything else drawn, in log space on a log axis): an infinite whisker of
    :func:`whiskers` (the Size sweep's log axis cuts its lower whiskers at
    :func:`app.core.figures.sweep.log_floor` first; on a log axis the lower side of an open
    interval that reaches 0 is cut at the bottom too), or a +inf / -inf corner of a CI95 band
    (a trace filled ``toself``, the Stability page's). An arrow (triangle up, or down) in the
    trace's colour ends it; the arrows are one legend entry, :data:`OPEN_END_NAME`, whose
    hover says unbounded. Call it once the y axis type is set and before the layout's ticks
    (:func:`theme.apply_layout`). Returns the points drawn so (``"name at x"``; a band's
    series name), for the note under the chart (:func:`open_end_note`); [] when every
    interval is bounded."""
    top, bottom = open_end_edges(fig)
    log = fig.layout.yaxis.type == "log"
    arrows: list[_Arrow] = []
    for t in list(fig.data):
        if t.y is None:
            continue
        if getattr(t, "fill", None) == "toself":
            arrows += _open_band(t, top, bottom)
        elif t.error_y is not None and t.error_y.array is not None:
            arrows += _open_bars(t, top, bottom, log)
    for symbol, up in (("triangle-up", True), ("triangle-down", False)):
        points = [a for a in arrows if a[4] is up]
        if points:
            xs, ys, colors, names, _ = (list(c) for c in zip(*points))
            side = "above" if up else "below"
            hover = [f"{n}: CI95 unbounded {side} (bar runs off the chart)" for n in names]
            fig.add_trace(go.Scatter(
                x=xs, y=ys, mode="markers", name=OPEN_END_NAME, legendgroup=OPEN_END_NAME,
                text=names,  # the points' names, for open_end_note
                showlegend=not any(t.name == OPEN_END_NAME for t in fig.data),
                marker={"symbol": symbol, "size": 12, "color": colors},
                customdata=np.column_stack([hover]),
                hovertemplate="%{customdata[0]}<extra></extra>"))
    return list(dict.fromkeys(a[3] for a in arrows))


def open_end_note(fig: go.Figure, most: int = 8) -> str:
    """The note under a chart naming the points :func:`open_ends` drew open-ended in ``fig``
    ("" for none): their CI95 has no upper (or lower) end, so the bar (or Stability's band)
    runs to the chart's edge and ends in an arrow; the table says ``unbounded``."""
    names = list(dict.fromkeys(str(n) for t in fig.data if t.name == OPEN_END_NAME
                               for n in (t.text or ())))
    if not names:
        return ""
    shown = ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most
                                       else "")
    return (f"CI95 unbounded at {shown}: the interval has no end on that side, so its error "
            "bar (or band) runs to the edge of the chart and ends in an arrow (▲ above, "
            "▼ below); the table says unbounded. Such a point is the least precise, not the most.")


def finish(fig: go.Figure, title: str, host_timer: bool = False) -> go.Figure:
    """Shared layout, the host-timer caveat in the title, transparent backgrounds."""
    theme.apply_layout(fig, theme.titled(title, host_timer))
    fig.update_layout(paper_bgcolor="rgba(0,0,0,0)", plot_bgcolor="rgba(0,0,0,0)")
    fig.update_xaxes(gridcolor=GRID, zerolinecolor=GRID)
    fig.update_yaxes(gridcolor=GRID, zerolinecolor=GRID)
    return fig


def empty(title: str, message: str) -> go.Figure:
    """A figure that says why there is nothing to draw."""
    fig = go.Figure()
    fig.add_annotation(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return finish(fig, title)


def hline(fig: go.Figure, y: float, text: str, **kwargs: object) -> None:
    """A dashed reference line with a label at the right."""
    fig.add_hline(y=y, line_dash="dash", line_color=REFERENCE, annotation_text=text,
                  annotation_position="top right", **kwargs)


def ratio_trace(group: pd.DataFrame, annotation: object, index: int, ratio: str, lower: str,
                upper: str, **kwargs: object) -> go.Scatter:
    """One annotation's ratio per config (markers and a thin line in its colour) with asymmetric
    CI95 error bars from the ``lower`` and ``upper`` columns; ``kwargs`` go to ``go.Scatter``
    (customdata, hovertemplate, and ``marker`` keys such as ``symbol`` are merged in)."""
    marker = {"size": 10, "color": theme.color(index),
              **kwargs.pop("marker", {})}  # type: ignore[dict-item]
    return go.Scatter(
        x=group[C.CONFIG_LABEL], y=group[ratio], mode="markers+lines", name=str(annotation),
        meta=theme.tag(annotation), line={"color": theme.color(index), "width": 1},
        marker=marker,
        error_y=error_y(group[ratio], group[lower], group[upper]), **kwargs)


def error_y(mean: npt.ArrayLike, lower: npt.ArrayLike, upper: npt.ArrayLike
            ) -> dict[str, object]:
    """Plotly's ``error_y`` of asymmetric CI95 bars from the bounds (:func:`whiskers`)."""
    plus, minus = whiskers(mean, lower, upper)
    return {"type": "data", "symmetric": False, "array": plus, "arrayminus": minus}


def legend_line(fig: go.Figure, y: float, name: str) -> None:
    """A dashed reference line named in the legend, not on the plot: a label drawn beside the
    line covered the Stability page's last bar (a new user's find), and on a log axis plotly
    places a line's label in log10 units (ratio 1 drawn at 10)."""
    fig.add_hline(y=y, line_dash="dash", line_color=REFERENCE, showlegend=True, name=name)


def ratio_axes(fig: go.Figure, ratio_title: str) -> None:
    """A dashed line at ratio 1 ("equal", in the legend), configs as categories on x,
    ``ratio_title`` on a log y axis (:data:`~app.core.figures.theme.LOG_AXIS`): 0.5 and 2 lie
    equally far from 1, as halving and doubling are. A ratio of 0 or below (a metric that is
    not a duration) has no place on a log axis: then the axis stays linear."""
    legend_line(fig, 1.0, "equal (ratio 1)")
    fig.update_xaxes(title={"text": "config"}, type="category")
    drawn = [np.asarray(t.y, dtype="float64") for t in fig.data if t.y is not None]
    ratios = np.concatenate(drawn) if drawn else np.array([1.0])
    log = bool((ratios[np.isfinite(ratios)] > 0).all())
    fig.update_yaxes(**(theme.LOG_AXIS if log else {"type": "linear"}),
                     title={"text": theme.axis_title(ratio_title, "ratio")})


def rsd_axes(fig: go.Figure) -> None:
    """Grouped RSD bars: the 2 % StableMeasurement line (in the legend), configs as categories
    on x, relative standard deviation (%) from zero on y."""
    legend_line(fig, C.STABLE_RSD_PCT, f"stable below {C.STABLE_RSD_PCT:g} %")
    fig.update_layout(barmode="group")
    fig.update_xaxes(title={"text": "config"}, type="category")
    fig.update_yaxes(title={"text": theme.axis_title("Relative standard deviation", "%")},
                     rangemode="tozero")


#: The marker of a point whose config has runs that failed the run audit (the frame's
#: ``Run audit`` cell begins with its flagged mark); the other points keep their own.
AUDIT_SYMBOL = "x"
#: How much larger than the other points a point marked :data:`AUDIT_SYMBOL` is drawn.
AUDIT_GROW = 5


def audit_cells(frame: pd.DataFrame) -> np.ndarray:
    """Each row's :data:`~app.core.frame_columns.RUN_AUDIT` text
    (:func:`app.core.views.run_audit.with_outcome`), "" for all without the column (a job
    without an audit, or more runs than a chart reads the audit of)."""
    if F.RUN_AUDIT not in frame:
        return np.full(len(frame), "", dtype=object)
    return frame[F.RUN_AUDIT].fillna("").astype(str).to_numpy(dtype=object)


def audit_flagged(frame: pd.DataFrame) -> npt.NDArray[np.bool_]:
    """True for each row whose runs did not all pass the run audit (:func:`audit_cells`
    beginning with the flagged mark)."""
    return np.array([a.startswith(F.AUDIT_FLAGGED_MARK) for a in audit_cells(frame)],
                    dtype=bool)


def audit_marker(frame: pd.DataFrame, size: float, symbol: str = "circle"
                 ) -> dict[str, object] | None:
    """A trace's ``marker`` symbol and size per row of ``frame``: :data:`AUDIT_SYMBOL`,
    :data:`AUDIT_GROW` larger, where its runs failed the run audit (:func:`audit_flagged`),
    else ``symbol`` at ``size``; None when no row is flagged (the trace keeps its marker)."""
    flagged = audit_flagged(frame)
    if not flagged.any():
        return None
    return {"symbol": np.where(flagged, AUDIT_SYMBOL, symbol).tolist(),
            "size": np.where(flagged, size + AUDIT_GROW, size).tolist()}


#: The widest line (characters) and the most lines of a sentence in a hover
#: (:func:`hover_lines`): a gate's Reason is up to ~210 characters, one line of it ran off a
#: 1000 px chart.
HOVER_WIDTH, HOVER_LINES = 72, 5
#: The end of a sentence :func:`hover_lines` cut.
HOVER_MORE = " … (in full in the table)"


def hover_format(values: npt.ArrayLike) -> str:
    """The d3 format a hover writes ``values`` (one trace's, in the unit it names) with, as the
    tables write their column (:func:`app.core.numbers.decimals_for`: thousands separators, one
    number of decimals: ",.2f"), never Plotly's ".6g" "4.12609e+6" (issue 37: one number
    format for pages, tables, hover, report); the tables' exponent form (".3e") only where
    their median is below 1e-5, as a table's column."""
    decimals = numbers.decimals_for(np.asarray(values, dtype=float).ravel())
    return ".3e" if decimals is None else f",.{decimals}f"


def hover_lines(texts: Iterable[object], index: int, head: str) -> tuple[np.ndarray, str]:
    """Sentences of a hover (one per point: a row's Reason) cut into lines of at most
    :data:`HOVER_WIDTH` characters, :data:`HOVER_LINES` at most (the rest cut,
    :data:`HOVER_MORE`): the customdata columns from ``index`` on, one per line ("" where a
    sentence is shorter), and the template part that reads them, ``<br>{head}`` first. The
    text stays in customdata, its line breaks in the template: customdata is escaped as
    text."""
    lines = [textwrap.wrap(str(t), HOVER_WIDTH, max_lines=HOVER_LINES, placeholder=HOVER_MORE,
                           break_on_hyphens=False) or [""] for t in texts]
    most = max((len(one) for one in lines), default=1)
    cells = np.array([one + [""] * (most - len(one)) for one in lines], dtype=object)
    template = f"<br>{head}" + "<br>".join(f"%{{customdata[{index + k}]}}" for k in range(most))
    return cells.reshape(len(lines), most), template


def audit_hover(frame: pd.DataFrame, index: int) -> str:
    """The hover's ``run audit:`` line reading ``customdata[index]`` (:func:`audit_cells`
    there), "" for a frame without the :data:`~app.core.frame_columns.RUN_AUDIT` column. The
    text stays in customdata, its line break in the template: customdata is escaped as text."""
    return f"<br>run audit: %{{customdata[{index}]}}" if F.RUN_AUDIT in frame else ""


#: The legend name of :func:`audit_bar_marks`' trace.
AUDIT_BARS_NAME = "runs failed the run audit"


def audit_bar_marks(x: npt.ArrayLike, y: npt.ArrayLike, frame: pd.DataFrame
                    ) -> go.Scatter | None:
    """For a bar chart (bars have no symbol): one :data:`AUDIT_SYMBOL` marker at (``x``,
    ``y``) of each row of ``frame`` whose runs failed the run audit (:func:`audit_flagged`),
    its hover the ``run audit:`` line; None when no row is flagged."""
    flagged = audit_flagged(frame)
    if not flagged.any():
        return None
    return go.Scatter(
        x=np.asarray(x, dtype=object)[flagged], y=np.asarray(y, dtype=float)[flagged],
        mode="markers", name=AUDIT_BARS_NAME,
        marker={"symbol": AUDIT_SYMBOL, "size": 11, "color": REFERENCE},
        customdata=np.column_stack([audit_cells(frame)[flagged]]),
        hovertemplate="<b>%{x}</b>" + audit_hover(frame, 0) + "<extra></extra>")
