"""Size sweep figure: one line per annotation, log2 x axis, CI95 error bars (plotly)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from profiling_worker.bundle.schema import columns as C

from app.core import derived, numbers
from app.core.figures import common, theme
from app.core import frame_columns as F

#: The y axis defaults to log when the plotted means span more than this factor.
LOG_Y_SPAN = 10.0
#: Most points drawn per line: a 1,000-config sweep drew 1,000 points, error bars and hover
#: rows per annotation (5,150 SVG nodes and 400 KB for one figure; 12.3 s to draw in the issue's
#: browser); 200 still drew 1,993 nodes. Above it every k-th config is drawn, the last always,
#: and the title says so; the frame and its CSV keep every config (the table: TABLE_MOST). 100
#: points on a 1,400 px wide chart are one every 12 px or so: the line's shape stays.
DRAW_MOST = 100
#: Most rows a sweep's table shows; above it, the rows of the points drawn. A 10,000-config
#: sweep's 30,000 rows were a 5.6 MB message whose serialisation (2 s of the server's time on
#: the 2-core machine, 2026-12-05) and drawing competed with the chart's; the CSV has them all.
TABLE_MOST = 1000


def wants_log_y(frame: pd.DataFrame) -> bool:
    """True when the means are all positive and span more than :data:`LOG_Y_SPAN` (then a
    linear y axis squeezes the small sizes onto zero)."""
    if frame.empty or C.AVG not in frame:
        return False
    avg = frame[C.AVG].to_numpy(dtype=float)
    avg = avg[np.isfinite(avg)]
    return bool(len(avg) and (avg > 0).all() and avg.max() / avg.min() > LOG_Y_SPAN)


def log_floor(frame: pd.DataFrame) -> float:
    """Where a lower CI95 whisker that reaches zero or below is clipped on a log y axis: half
    the smallest positive mean or lower bound in the frame (just below every drawn point)."""
    values = pd.concat([frame[C.AVG], frame[C.CI95_LOWER]]).to_numpy(dtype=float)
    positive = values[np.isfinite(values) & (values > 0)]
    return float(positive.min()) / 2 if len(positive) else 1e-12


def build_sweep_figure(frame: pd.DataFrame, x: str, host_timer: bool,
                       quantity_label: str = "Time", log_y: bool = False) -> go.Figure:
    """Draw a sweep frame (see :func:`app.core.views.sweep.sweep_frame`).

    Args:
        frame: Annotation, <x>, Unit, AvgValue, CI95_Lower, CI95_Upper, NumRuns; optional
            Series (one line each; else one per Annotation).
        x: the parameter column of the x axis: numeric -> log axis when every value is > 0,
            else linear; text -> categorical axis in the frame's order.
        host_timer: True for cpu-backend jobs; the title then says "(host wall-clock, not GPU)".
        quantity_label: the y quantity in words (``Time``, ``Throughput``...).
        log_y: log y axis. A CI95 lower bound <= 0 cannot be drawn there: its whisker is
            clipped at :func:`log_floor` and the hover says so (the frame keeps the exact bound).

    Returns:
        A figure with x = ``x`` (log axis with ticks at the sizes, ``2^k`` labels where every
        size is a power of two, :func:`~app.core.derived.log2_labels`; or linear; or
        categories), y = AvgValue in the frame's unit, asymmetric error bars from CI95, hover
        with exact values and units. A point without a CI95 (one run: NaN bounds) has no
        error bar, and its hover says so (:func:`common.ci95_text`).
    """
    unit = theme.first_unit(frame[C.UNIT]) if C.UNIT in frame else ""
    floor = log_floor(frame) if log_y and not frame.empty else None
    fig = go.Figure()
    series = _series(frame)
    step = draw_step(int(frame.groupby(series, sort=False).size().max()) if len(frame) else 0)
    for i, (name, group) in enumerate(drawn_rows(frame).groupby(series, sort=False)):
        fig.add_trace(_trace(group, str(name), x, unit, i, floor))
    _x_axis(fig, frame, x)
    fig.update_yaxes(title={"text": theme.axis_title(quantity_label, unit)},
                     **(theme.LOG_AXIS if log_y else {"type": "linear"}))
    common.open_ends(fig)  # an unbounded CI95 (inf, a throughput's): a bar to the chart's edge
    theme.apply_layout(fig, theme.titled(f"{quantity_label} vs {x}", host_timer))
    if step > 1:  # after apply_layout, which escapes the title's names: this markup is ours
        fig.layout.title.text += (f"<br><sup>every {step} configs drawn of "
                                  f"{frame[x].nunique():,}; the CSV below has all</sup>")
    return fig


def draw_step(points: int) -> int:
    """k of "every k-th config drawn": 1 up to :data:`DRAW_MOST` points a line, else the
    smallest k that keeps at most that many."""
    return 1 if points <= DRAW_MOST else -(-points // DRAW_MOST)


def _series(frame: pd.DataFrame) -> str:
    """The column whose values are the lines: Series, else Annotation."""
    return C.ANNOTATION if F.SERIES not in frame else F.SERIES


def drawn_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of a sweep frame that :func:`build_sweep_figure` draws, in the frame's order:
    with k = :func:`draw_step` of its longest line, every k-th row of each line and its last
    (the largest size stays); the whole frame when k is 1."""
    if frame.empty:
        return frame
    lines = frame.groupby(_series(frame), sort=False)
    step = draw_step(int(lines.size().max()))
    if step <= 1:
        return frame
    position = lines.cumcount().to_numpy()
    length = lines[_series(frame)].transform("size").to_numpy()
    return frame.iloc[np.flatnonzero((position % step == 0) | (position == length - 1))]


def table_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of a sweep frame its table shows: all up to :data:`TABLE_MOST`, else the
    points drawn (:func:`drawn_rows`), with the value and its CI95 before the run audit
    (:func:`values_first`), and its Series column only where some series is not its
    annotation (:func:`without_plain_series`); the CSV keeps every row and column, in the
    frame's order."""
    return values_first(without_plain_series(
        frame if len(frame) <= TABLE_MOST else drawn_rows(frame)))


def without_plain_series(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` without its Series column where each row's series is its Annotation (one
    varying parameter: the lines are the annotations), else ``frame`` as it is: two columns
    of the same values read as two things (session 23's fresh user)."""
    if F.SERIES not in frame or C.ANNOTATION not in frame:
        return frame
    same = frame[F.SERIES].astype(str).equals(frame[C.ANNOTATION].astype(str))
    return frame.drop(columns=F.SERIES) if same else frame


#: The columns a sweep table shows right after those naming its row, before the
#: :data:`~app.core.frame_columns.RUN_AUDIT` column: at 1000x700 a Run audit cell of 35
#: characters ("⚠ 0/30 passed; failed l2_state (30)") kept every value out of the table's
#: sight, to be scrolled to (session 22's fresh user).
VALUES_FIRST = (C.UNIT, C.AVG, C.CI95_LOWER, C.CI95_UPPER)


def values_first(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the :data:`VALUES_FIRST` columns it has right before its Run audit
    column (the rest in their order); ``frame`` as it is without a Run audit column."""
    columns = list(frame.columns)
    if F.RUN_AUDIT not in columns:
        return frame
    at = columns.index(F.RUN_AUDIT)
    moved = [c for c in VALUES_FIRST if c in columns[at:]]
    return frame[columns[:at] + moved + [c for c in columns[at:] if c not in moved]]


def _x_axis(fig: go.Figure, frame: pd.DataFrame, x: str) -> None:
    """Log2 ticks for positive numbers, linear for other numbers, categories for text; one
    value that is not positive (a single-config import's ``config_index`` 0) gets one tick at
    it, not plotly's -1, -0.5, 0, 0.5, 1 (issue 37)."""
    values = frame[x] if x in frame else pd.Series(dtype=float)
    numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
    if not numeric:
        fig.update_xaxes(type="category", categoryorder="array",
                         categoryarray=list(dict.fromkeys(values.astype(str))),
                         title={"text": f"{x} (categories)"})
    elif values.nunique() == 1 and not (values > 0).all():  # one config, e.g. an import's 0
        only = float(values.iloc[0])
        pad = max(abs(only) / 2, 1.0)  # plotly's own range for one point at 0 is -1..1
        fig.update_xaxes(type="linear", range=[only - pad, only + pad], tickvals=[only],
                         ticktext=[numbers.fmt(only)], title={"text": x})
    elif len(values) and (values > 0).all():
        sizes = np.sort(values.astype(float).unique()).tolist()
        ticks, text = theme.spaced_ticks(sizes, derived.log2_labels(sizes))
        fig.update_xaxes(type="log", tickvals=ticks, ticktext=text,
                         title={"text": f"{x} (log2 scale)"})
    else:
        fig.update_xaxes(type="linear", title={"text": x})


def _trace(group: pd.DataFrame, annotation: str, x: str, unit: str, i: int,
           floor: float | None) -> go.Scatter:
    numeric = pd.api.types.is_numeric_dtype(group[x]) and not pd.api.types.is_bool_dtype(group[x])
    xs = group[x].to_numpy(dtype=float) if numeric else group[x].astype(str).to_numpy()
    avg = group[C.AVG].to_numpy(dtype=float)
    lo = group[C.CI95_LOWER].to_numpy(dtype=float)
    hi = group[C.CI95_UPPER].to_numpy(dtype=float)
    runs = (group[C.NUM_RUNS].to_numpy(dtype=float) if C.NUM_RUNS in group
            else np.full_like(avg, np.nan))
    drawn_lo, note = lo, np.full(len(avg), "", dtype=object)
    if floor is not None:  # log y: a whisker down to <= 0 would vanish or break the axis
        clipped = lo <= 0
        drawn_lo = np.where(clipped, np.minimum(floor, avg), lo)
        # on the CI95's line: a "<br>" here is escaped as text with the rest of customdata
        # (figure_as_text), and the hover read "&lt;br&gt;" as "<br>"
        note[clipped] = f" (lower CI95 ≤ 0: whisker drawn down to {floor:.3g} {unit})"
    # the text in customdata, its line break in the template: customdata is escaped as text
    custom = np.column_stack([lo, hi, runs, note, common.ci95_text(lo, hi, unit),
                              common.audit_cells(group)])
    return go.Scatter(
        x=xs, y=avg, mode="lines+markers", name=str(annotation), meta=theme.tag(annotation),
        line={"color": theme.color(i)},
        # a point whose runs failed the run audit: an x, larger, not the line's dot
        marker=common.audit_marker(group, 6),
        # an open side (inf) is drawn to the chart's edge by common.open_ends; on a log axis
        # a -inf lower bound is cut at the floor, as one <= 0 is
        error_y=common.error_y(avg, drawn_lo, hi),
        customdata=custom,
        hovertemplate=(f"<b>{annotation}</b><br>{x} = %{{x{':,' if numeric else ''}}}<br>mean = "
                       f"%{{y:{common.hover_format(avg)}}} {unit}"
                       "<br>%{customdata[4]}%{customdata[3]}<br>runs = %{customdata[2]:.0f}"
                       + common.audit_hover(group, 5)
                       + "<extra></extra>"),
    )
