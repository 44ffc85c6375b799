"""How numbers are shown: significant digits, thousands separators, a time unit that fits.

One place for every table and tile, so that 21437.4944 µs reads "21,437" in a tile and
"21,437.4944" in a table, and a table column never shows "2.144e+04". Display only: the frames
themselves (and the CSV downloads made from them) keep their exact values.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from profiling_worker.bundle.gate.judge import DETECTABLE_PCT
# fmt lives beside the worker's gate summaries, which write numbers with it too
from profiling_worker.bundle.number_text import (MAX_DECIMALS as _MAX_DECIMALS,
                                                 SIG_DIGITS as SIG_DIGITS, counted as counted,
                                                 fmt as fmt, TIME_UNITS as TIME_UNITS,
                                                 shown_unit as shown_unit, ns_text,
                                                 values_in as values_in, with_durations)
from profiling_worker.bundle.schema import columns as C

#: A column whose median is below this is written in exponent form (1.334e-07).
_EXPONENT_BELOW = 1e-5
#: Significant digits an interval's width keeps where a table shows it: its bounds are written
#: with enough decimals that rounding moves the shown width by at most a tenth of it.
WIDTH_SIG_DIGITS = 2


def _width_decimals(width: float) -> int:
    """Decimals that keep :data:`WIDTH_SIG_DIGITS` of an interval ``width`` (> 0), at most
    :data:`_MAX_DECIMALS`: 0.42 -> 2, 0.0039 -> 4."""
    return min(_MAX_DECIMALS, WIDTH_SIG_DIGITS - 1 - math.floor(math.log10(width)))


def fmt_metric(value: float | int | None) -> str:
    """A value of a report's metric column, whose rows are of many metrics (a table's column
    holding numbers and text): a whole number without decimals, with thousands separators
    (``launch__grid_size`` 256.0 -> "256", not :func:`fmt`'s "256.0"), any other by :func:`fmt`.
    Whole numbers from 1e15 on stay in :func:`fmt`'s exponent form."""
    if value is not None and math.isfinite(v := float(value)) and v == round(v) and abs(v) < 1e15:
        return f"{int(v):,d}"
    return fmt(value)


def fmt_interval(centre: float, lower: float, upper: float, sig: int = SIG_DIGITS
                 ) -> tuple[str, str, str]:
    """A mean and its CI95 bounds written with one number of decimals: :func:`fmt`'s for the
    mean, more where the interval's width needs them to keep :data:`WIDTH_SIG_DIGITS` (at most
    6), so rounding never collapses or visibly widens the interval: (21437.49, 21437.2,
    21437.8) -> ("21,437.49", "21,437.20", "21,437.80"), not "[21,437, 21,438]"."""
    values = (float(centre), float(lower), float(upper))
    if not all(math.isfinite(v) for v in values) or values[0] == 0:
        return fmt(values[0], sig), fmt(values[1], sig), fmt(values[2], sig)
    magnitude = math.floor(math.log10(abs(values[0])))
    if magnitude < -6 or magnitude >= 15:
        return fmt(values[0], sig), fmt(values[1], sig), fmt(values[2], sig)
    decimals = max(0, sig - 1 - magnitude)
    width = values[2] - values[1]
    if width > 0:
        decimals = max(decimals, _width_decimals(width))
    return tuple(f"{v:,.{decimals}f}" for v in values)  # type: ignore[return-value]


def durations_said(template: str, value_ns: float, reference_ns: float, unit: str) -> str:
    """A sentence whose durations are data (the run audit's evidence: tables/run_audit's
    ``EvidenceTemplate`` with ``EvidenceValueNs`` and ``EvidenceReferenceNs``), written in
    ``unit``, each duration by :func:`fmt`: ``("{value} {unit} above {reference} {unit} (…)",
    3677390.4, 1440196.0, "µs")`` -> "3,677 µs above 1,440 µs (…)". In ns, whole ns, as the
    worker's Evidence text writes them: a table written before (:func:`durations_in`, which
    leaves ns as they are) reads the same on a page of ns.

    Raises:
        KeyError: ``unit`` is none of :data:`TIME_UNITS` (ns, µs, ms).
    """
    scale = TIME_UNITS[unit]
    if scale == 1.0:
        return with_durations(template, ns_text(value_ns), ns_text(reference_ns), unit)
    return with_durations(template, fmt(value_ns / scale), fmt(reference_ns / scale), unit)


def values_in_column(values: "pd.Series[str]", unit: str, shown: str, divisor: float
                     ) -> "pd.Series[str]":
    """:func:`values_in` of each text of ``values`` (each distinct text once: an audit's
    evidence repeats one text over many runs)."""
    texts = values.astype(str)
    return texts.map({t: values_in(t, unit, shown, divisor) for t in texts.unique()})


def durations_in(text: str, unit: str) -> str:
    """``text`` with each duration it writes in ns written in ``unit`` instead
    (:func:`values_in`): in µs, "(3,677,390 vs 1,440,196 ns)" -> "(3,677 vs 1,440 µs)", "32 ns
    at or below" -> "0.03200 µs at or below"; ``text`` unchanged for "ns".

    Raises:
        KeyError: ``unit`` is none of :data:`TIME_UNITS` (ns, µs, ms).
    """
    return values_in(text, "ns", unit, TIME_UNITS[unit])


def durations_in_column(values: "pd.Series[str]", unit: str) -> "pd.Series[str]":
    """:func:`durations_in` of each text of ``values``.

    Raises:
        KeyError: ``unit`` is none of :data:`TIME_UNITS` (ns, µs, ms).
    """
    return values_in_column(values, "ns", unit, TIME_UNITS[unit])


def fmt_bytes(size: int) -> str:
    """A byte count in decimal units that show it: under 1 kB in bytes ("654 bytes"), under
    0.1 MB in kB ("2.9 kB"), else in MB with one decimal ("12.3 MB"); 1 kB = 1000 bytes."""
    if size < 1000:
        return f"{size:,} bytes"
    if size < 100_000:
        return f"{size / 1e3:.1f} kB"
    return f"{size / 1e6:,.1f} MB"


#: Rate units from the one the app computes in down, each 1000x the next.
_RATE_STEPS = {"TFLOP/s": ("TFLOP/s", "GFLOP/s", "MFLOP/s", "kFLOP/s", "FLOP/s"),
               "GB/s": ("GB/s", "MB/s", "kB/s", "B/s"),
               "TFLOP": ("TFLOP", "GFLOP", "MFLOP", "kFLOP", "FLOP")}


def rate_step(value: float, unit: str = "TFLOP/s") -> tuple[float, str]:
    """The factor and unit that move a rate in ``unit`` (``TFLOP/s`` or ``GB/s``; or a count
    of ``TFLOP``) down to the
    largest unit of its family in which it is at least 1, so a tile or axis never shows a cut
    "0.00...": (1.1e-5, "TFLOP/s") -> (1e6, "MFLOP/s"); (0.385, "GB/s") -> (1e3, "MB/s");
    16.01 TFLOP/s -> (1.0, "TFLOP/s"); 0, NaN and inf stay in ``unit``. Multiply a value in
    ``unit`` by the factor to write it in the unit returned.

    Raises:
        KeyError: ``unit`` is not ``TFLOP/s``, ``GB/s`` or ``TFLOP``.
    """
    steps, i = _RATE_STEPS[unit], 0
    while math.isfinite(value) and 0 < abs(value) < 1 and i < len(steps) - 1:
        value, i = value * 1000.0, i + 1
    return 1000.0 ** i, steps[i]


def flop_text(flop: float, per_s: bool = False) -> str:
    """A FLOP count (or rate, ``per_s``) as the pages write one: in the largest of TFLOP,
    GFLOP, ... in which it is at least 1 (:func:`rate_step`), by :func:`fmt`: 1.28e14 ->
    "128.0 TFLOP", 3.1e9 per s -> "3.100 GFLOP/s"; never "1.28e+14 FLOP"."""
    tera = float(flop) / 1e12
    factor, unit = rate_step(tera, "TFLOP/s" if per_s else "TFLOP")
    return f"{fmt(tera * factor)} {unit}"


def decimals_for(values: Iterable[float], sig: int = SIG_DIGITS) -> int | None:
    """Decimal places for a column of ``values``, set by their spread: ``sig`` significant
    digits for the median magnitude, enough that the smallest non-zero value keeps one (never
    "0.00" for 0.003), at most 6 (0 for whole numbers, and when there is no finite non-zero
    value). None when the median is below 1e-5 (six decimals would show it with one digit: a
    cpu job's TFLOP/s, 2e-6): such a column is written in exponent form, all of it.

    A column used to take its decimals from its smallest value alone, so one tiny value put a
    whole column of microseconds into exponent form ("1.948e+4 us") and neighbouring columns
    read "1.90840", "-3.9819" and "7.798649"."""
    arr = np.asarray(list(values), dtype=float)
    arr = np.abs(arr[np.isfinite(arr) & (arr != 0)])
    if arr.size == 0 or np.all(arr == np.round(arr)):
        return 0
    median = float(np.median(arr))
    if median < _EXPONENT_BELOW:
        return None
    typical = max(0, sig - 1 - math.floor(math.log10(median)))
    smallest = max(0, -math.floor(math.log10(float(arr.min()))))
    return min(_MAX_DECIMALS, max(typical, smallest))


def printf_format(series: pd.Series, sig: int = SIG_DIGITS) -> str | None:
    """A printf format for a numeric column (Streamlit's ``NumberColumn``, the HTML report):
    thousands separators and the decimals of :func:`decimals_for` ("%,.2f"); exponent form with
    ``sig`` significant digits ("%.3e": 1.334e-7) only for a column whose median is below
    1e-5; None for a column that is not numeric. The values themselves stay exact (sorting,
    CSV downloads)."""
    if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        return None
    decimals = decimals_for(series.to_numpy(dtype=float), sig)
    if decimals is None:
        return f"%.{max(0, sig - 1)}e"
    return "%,d" if decimals == 0 and pd.api.types.is_integer_dtype(series) \
        else f"%,.{decimals}f"


#: What a column's name holds beside its family's: an interval bound or "mean" (``AvgValue``).
_FAMILY_PARTS = re.compile(r"_?CI95_?(Lower|Upper)|Avg(Value)?$")


def family(name: object) -> str:
    """The quantity a column shows, its interval bounds and mean named alike: ``DiffPct``,
    ``DiffCI95LowerPct`` and ``DiffCI95UpperPct`` -> ``DiffPct``; ``Ratio``,
    ``RatioCI95Lower`` -> ``Ratio``; ``BaselineAvg``, ``BaselineCI95Upper`` -> ``Baseline``;
    ``AvgValue``, ``CI95_Lower`` -> ``""``."""
    return _FAMILY_PARTS.sub("", str(name))


def table_formats(frame: pd.DataFrame, sig: int = SIG_DIGITS) -> dict[str, str]:
    """Column -> printf format (:func:`printf_format`) for the numeric columns of ``frame``,
    one format for the columns of one :func:`family` (a value and its CI95 bounds), set by all
    their values and by the narrowest interval's width (:func:`_interval_format`): Compare
    showed Ratio "1.004" beside RatioCI95Lower "0.9974" and RatioCI95Upper "1.011" (issue 37).
    Other columns each by their own values."""
    numeric = [c for c in frame.columns if isinstance(c, str) and printf_format(frame[c], sig)]
    groups: dict[str, list[str]] = {}
    for name in numeric:
        groups.setdefault(family(name), []).append(name)
    out: dict[str, str] = {}
    for fam, names in groups.items():
        pct = _percent_format(frame, names) if fam.endswith(PCT_SUFFIX) else None
        if pct is not None:
            out.update(dict.fromkeys(names, pct))
            continue
        if len(names) == 1 or any(pd.api.types.is_integer_dtype(frame[c]) for c in names):
            out.update({c: str(printf_format(frame[c], sig)) for c in names})
            continue
        joined = pd.Series(np.concatenate([frame[c].to_numpy(dtype=float) for c in names]))
        out.update(dict.fromkeys(names, _interval_format(joined, _widths(frame, names), sig)))
    return out


#: A column of percent (DiffPct, its CI95 bounds, CyclesDiffPct, RelativeStdDevPct) ends so.
PCT_SUFFIX = "Pct"
#: Decimals of every percent column: Compare's DiffPct read 2 decimals for a cpu job and 4 for
#: an H200 one (4 significant digits of 50 % and of 0.5 %: a fresh user of session 22); a
#: hundredth of a percent is finer than any gate's allowed slowdown.
PCT_DECIMALS = 2


def _percent_format(frame: pd.DataFrame, names: list[str]) -> str | None:
    """The printf format of the percent columns ``names`` (one :func:`family`):
    :data:`PCT_DECIMALS` decimals, more only where the smallest non-zero value would read 0.00
    (0.003 %) or the narrowest CI95 interval needs them (:func:`_width_decimals`); None when
    they hold no fraction (3 %, all missing: each keeps :func:`printf_format`'s) or are not
    float columns."""
    if not all(pd.api.types.is_float_dtype(frame[c]) for c in names):
        return None
    arr = np.concatenate([frame[c].to_numpy(dtype=float) for c in names])
    arr = np.abs(arr[np.isfinite(arr) & (arr != 0)])
    if arr.size == 0 or np.all(arr == np.round(arr)):
        return None
    smallest = -math.floor(math.log10(float(arr.min())))  # its first digit shown
    widths = _widths(frame, names)
    needed = _width_decimals(float(widths.min())) if widths.size else 0
    return f"%,.{min(_MAX_DECIMALS, max(PCT_DECIMALS, smallest, needed))}f"


def _widths(frame: pd.DataFrame, names: list[str]) -> np.ndarray:
    """The finite, positive widths (upper - lower) of the CI95 interval among ``names`` (one
    :func:`family`), one per row; empty when the family holds no lower and upper bound."""
    lower = [c for c in names if "CI95" in c and "Lower" in c]
    upper = [c for c in names if "CI95" in c and "Upper" in c]
    if len(lower) != 1 or len(upper) != 1:
        return np.array([])
    widths = (frame[upper[0]].to_numpy(dtype=float) - frame[lower[0]].to_numpy(dtype=float))
    shown: np.ndarray = widths[np.isfinite(widths) & (widths > 0)]
    return shown


def _interval_format(values: pd.Series, widths: np.ndarray, sig: int) -> str:
    """The printf format of a value and its CI95 bounds (``values``: all of them): that of
    :func:`printf_format`, with more digits where the narrowest interval (``widths``) needs them
    to keep :data:`WIDTH_SIG_DIGITS` (at most 6 decimals). A column of 20,000 us set 0 decimals,
    and a J1 row of the same table read 61, CI95 61-62 us for 61.44, CI95 61.23-61.65 (issue
    37): its interval widened 2.4-fold by rounding."""
    base = str(printf_format(values, sig))
    if not widths.size:
        return base
    place = math.floor(math.log10(float(widths.min())))  # the narrowest width's first digit
    if base.endswith("e"):  # exponent form: the significant digits reach that place
        top = math.floor(math.log10(float(np.nanmax(np.abs(values.to_numpy(dtype=float))))))
        return f"%.{max(sig - 1, min(top - place + WIDTH_SIG_DIGITS - 1, 15))}e"
    decimals = int(base.rstrip("f").rpartition(".")[2] or 0) if base.endswith("f") else 0
    needed = _width_decimals(float(widths.min()))
    return f"%,.{needed}f" if needed > decimals else base


def mixed_as_text(series: pd.Series) -> pd.Series | None:
    """An object column holding both numbers and text (a report's metric values:
    ``launch__func_cache_config`` is "CachePreferNone") as text, the numbers written by
    :func:`fmt_metric`, missing cells as "—"; None for any other column. Arrow stores a column
    as one type, so a table of such a column would otherwise fail to convert (and fall back
    noisily)."""
    # pandas' C type inference, not a Python loop: every table of every page passes here
    if series.dtype != object or pd.api.types.infer_dtype(series, skipna=True) not in (
            "mixed", "mixed-integer"):
        return None
    return series.map(lambda v: v if isinstance(v, str) else fmt_metric(v))


#: How a table writes an interval's +inf upper bound (an unbounded ratio interval, Fieller's
#: g >= 1: profiling_worker.bundle.schema.intervals.UNBOUNDED_NOTE).
UNBOUNDED = "unbounded"


def printf_text(value: float, printf: str) -> str:
    """``value`` written as the printf format ``printf`` of :func:`printf_format` writes it in a
    table ("%,.2f" -> "1,234.50", "%,d" -> "1,235", "%.3e" -> "1.334e-07"); NaN -> "—",
    +inf -> :data:`UNBOUNDED` (an interval's upper bound)."""
    if value != value:
        return "—"
    if value == float("inf"):
        return UNBOUNDED
    spec = printf.removeprefix("%")
    return f"{value:{spec.removesuffix('d') + '.0f'}}" if spec.endswith("d") else f"{value:{spec}}"


def unbounded_format(name: object, series: pd.Series, printf: str | None = None) -> str | None:
    """The printf format of an interval's upper-bound column (its name holds "CI95" and
    "Upper"), or of the gate's DetectablePct (the interval's half-width: +inf where its upper
    bound is), that holds a +inf cell: ``printf``, the format its family's other columns show
    (:func:`table_formats` of the table before this column became text; default: that of its
    own finite values); :func:`printf_text` writes +inf as :data:`UNBOUNDED`. None for any other
    column, so an unbounded interval never reads as a number ("inf"). Compare's
    DiffCI95UpperPct wrote each bound to 4 significant digits, "6.891" under "0.8191", beside
    DiffPct's 4 decimals."""
    text = str(name)
    upper = ("CI95" in text and "Upper" in text) or text == DETECTABLE_PCT
    if not upper or not pd.api.types.is_float_dtype(series):
        return None
    if not (series.to_numpy(dtype="float64") == float("inf")).any():
        return None
    return printf or printf_format(series.replace(float("inf"), float("nan"))) or "%,.4g"


def unbounded_as_text(name: object, series: pd.Series, printf: str | None = None
                      ) -> pd.Series | None:
    """The column of :func:`unbounded_format` as text (+inf as :data:`UNBOUNDED`, missing as
    "—"); None for any other column."""
    shown = unbounded_format(name, series, printf)
    return None if shown is None else _written(series, shown)


def _written(values: pd.Series, printf: str) -> pd.Series:
    """``values`` as text in ``printf`` (:func:`printf_text`), index kept."""
    return pd.Series([printf_text(float(v), printf) for v in values], index=values.index,
                     dtype=object)


#: Columns that hold a row's value in the row's ``Unit`` (nsight-python's statistics of a
#: metric, a report's metric value): where a table's rows are in several units, each unit's
#: rows get their own decimals (:func:`by_unit_as_text`).
UNIT_VALUE_COLUMNS = (C.VALUE, C.AVG, C.STD, C.MIN, C.MAX, C.MEDIAN, C.CI95_LOWER, C.CI95_UPPER)


#: A fixed-point printf format of :func:`printf_format` ("%,.2f").
_FIXED = re.compile(r"^%,\.(\d+)f$")

def _fixed_decimals(printf: str) -> int | None:
    """Decimals of a fixed-point format of :func:`printf_format` (``%,d``: 0); None for another
    kind (exponent form)."""
    if printf == "%,d":
        return 0
    return int(m.group(1)) if (m := _FIXED.match(printf)) else None


@dataclass(frozen=True)
class CellFormat:
    """Rows of one column written in one printf format, where a column's single format does not
    fit all its rows.

    Attributes:
        column: the column's name.
        rows: positions (0-based) of the rows; None: every row.
        printf: their format (:func:`printf_text`).
    """

    column: str
    rows: np.ndarray | None
    printf: str


#: How a ``Unit`` cell without a unit reads as text (empty, missing).
_NO_UNIT = frozenset({"", "nan", "None", "<NA>"})


def unit_formats(frame: pd.DataFrame, columns: Iterable[str] = UNIT_VALUE_COLUMNS,
                 min_units: int = 2) -> list[CellFormat]:
    """Where ``frame``'s ``Unit`` column holds at least ``min_units`` units: for each unit and
    each numeric column of ``columns`` (those holding a row's value in the row's unit), that
    unit's rows' format (:func:`table_formats` of those rows: a value and its CI95 bounds
    alike); else []. One format for a column of ns, Hz and % rows wrote "183,360.00 ns" and
    "1,535,586,414.70 Hz" with the decimals of the % rows (the deep dive's Speed of light).
    Rows without a unit whose values are whole take a format of their own (no decimals)."""
    if C.UNIT not in frame.columns or frame[C.UNIT].nunique(dropna=False) < min_units:
        return []
    names = [c for c in columns if c in frame.columns
             and pd.api.types.is_numeric_dtype(frame[c])
             and not pd.api.types.is_bool_dtype(frame[c])]
    units = frame[C.UNIT].astype(str).to_numpy()
    cells = []
    for unit in dict.fromkeys(units):
        at = np.flatnonzero(units == unit)
        values = frame[names].iloc[at].replace(float("inf"), float("nan"))
        # rows without a unit are each a quantity of its own: a whole count keeps no decimals
        # beside a fraction (launch__grid_size "256", not "256.0" for waves_per_multiprocessor)
        whole = (values.isna() | (values == values.round())).all(axis=1).to_numpy() \
            if unit in _NO_UNIT else np.zeros(len(at), dtype=bool)
        for rows in (whole, ~whole):
            if rows.any():
                formats = table_formats(values[rows])
                cells += [CellFormat(c, at[rows], formats.get(c, "%,.4g")) for c in names]
    return cells


def as_text(frame: pd.DataFrame, cells: Iterable[CellFormat]) -> dict[str, pd.Series]:
    """Each column of ``cells`` as text, each cell in its rows' format (:func:`printf_text`;
    missing as "—"), index kept."""
    text: dict[str, np.ndarray] = {}
    for cell in cells:
        values = frame[cell.column]
        column = text.setdefault(cell.column, np.full(len(frame), "—", dtype=object))
        at = slice(None) if cell.rows is None else cell.rows
        column[at] = _written(values.iloc[at], cell.printf).to_numpy()
    return {c: pd.Series(t, index=frame.index, dtype=object) for c, t in text.items()}


def by_unit_as_text(frame: pd.DataFrame, columns: Iterable[str] = UNIT_VALUE_COLUMNS,
                    min_units: int = 2) -> dict[str, pd.Series]:
    """The columns of :func:`unit_formats` as text, each unit's rows in its format; {} where
    the rows are in fewer than ``min_units`` units."""
    return as_text(frame, unit_formats(frame, columns, min_units))


@dataclass(frozen=True)
class ColumnDisplay:
    """How a table shows each column (:func:`column_display`).

    Attributes:
        formats: column -> printf format of each numeric column (:func:`table_formats`); a
            column written per rows below keeps its entry (its family's format).
        cells: the columns one format does not fit, as rows -> format: an unbounded interval's
            upper bound (:func:`unbounded_format`), then the columns whose rows are in several
            units (:func:`unit_formats`: a later entry of a column overrides its rows).
    """

    formats: dict[str, str]
    cells: tuple[CellFormat, ...]

    @property
    def by_rows(self) -> set[str]:
        """The columns written per rows (a table styles them; above its styled cells it keeps
        them numeric in :meth:`one_format`, or writes them as text)."""
        return {cell.column for cell in self.cells}

    def one_format(self, column: str) -> str | None:
        """Of the fixed-point formats of ``column``'s rows (``%,.2f``, ``%,.0f``, ``%,d``), the
        one with the most decimals, so no unit's rows lose digits in one format for the column
        (the family's format gave ``%,.0f`` to a per-run table of ns and % rows: 2.16 % read
        "2"); None where a row's format is another kind (exponent form) or there is none. A
        whole byte count then reads "4,096.00" beside 2.16 %: rows rounded each to its own
        decimals read "4,096", but a table's own CSV download got the rounded values."""
        decimals = [_fixed_decimals(c.printf) for c in self.cells if c.column == column]
        if not decimals or None in decimals:
            return None
        return f"%,.{max(d for d in decimals if d is not None)}f"

    def text(self, frame: pd.DataFrame) -> dict[str, pd.Series]:
        """Each column of :attr:`by_rows` of ``frame`` (the table decided on) as its text."""
        return as_text(frame, self.cells)

    @property
    def number_formats(self) -> dict[str, str]:
        """The printf format of each column shown as one number format."""
        return {c: f for c, f in self.formats.items() if c not in self.by_rows}


def column_display(frame: pd.DataFrame, in_unit: Iterable[str] = UNIT_VALUE_COLUMNS,
                   min_units: int = 2) -> ColumnDisplay:
    """The one decision of how a table's columns are shown, for the pages' tables and the HTML
    report alike: each numeric column's format (its family's: :func:`table_formats`), the columns
    of ``in_unit`` whose rows are in at least ``min_units`` units written per unit
    (:func:`unit_formats`), and an interval's upper bound holding +inf (:func:`unbounded_format`,
    in its family's format)."""
    formats = table_formats(frame)
    unbounded = [CellFormat(str(c), None, printf) for c in frame.columns
                 if (printf := unbounded_format(c, frame[c], formats.get(c))) is not None]
    return ColumnDisplay(formats, (*unbounded, *unit_formats(frame, in_unit, min_units)))


def numbers_or_missing(series: pd.Series) -> pd.Series | None:
    """An object column holding only numbers and missing cells (None) as float, the missing
    cells NaN, so a table formats it as numbers and draws the gaps as its placeholder; None for
    any other column (text, booleans, a column of numbers already)."""
    if series.dtype != object or pd.api.types.infer_dtype(series, skipna=True) not in (
            "integer", "floating", "mixed-integer-float", "decimal", "empty"):
        return None
    return pd.to_numeric(series, errors="coerce").astype(float)
