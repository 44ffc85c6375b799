"""Text cells of a table as a reader should see them (pure: pandas).

- Bidirectional control characters from files are shown as ``⟨U+202E⟩``, not obeyed
  (:func:`app.core.markdown.visible`), in cells and column names.
- Kernel names (mangled cuBLAS names run to 130 characters and differ near their end:
  ``..._execute_kernel__5x_cublas`` vs ``..._execute_split_k_kernel__5x_cublas``) are shortened in
  the middle, as little as keeps every name of the column distinct; the full names go into a
  last column, :data:`FULL_NAME`. The same for a column of ``" + "``-joined names
  (:data:`~profiling_worker.bundle.schema.columns.KERNEL_NAMES`, the Kernel counts table), each name
  shortened, the full text in :data:`FULL_NAMES`. A shortened column moves to just before its
  full one, after the measured columns: shortened, names of the recorded cuBLAS kernels still
  take about 70 characters to stay distinct (they differ in the middle too), and at 1400x900
  the Kernels page's MeanTimeUs and SharePct were off screen right of them (a reviewer's find).
  The frame a CSV download is made from is not touched.
- Column names written in CamelCase with a unit at their end (nsight-python's
  ``RelativeStdDevPct``, the views' ``MeanTimeUs``) are headed in words with the unit
  (:func:`header`: "Relative std dev (%)", "Mean time (µs)"); the CSV keeps the names, which
  users compare with nsight-python's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pandas as pd

from profiling_worker.bundle.schema import columns as C

from app.core import frame_columns as F
from app.core.markdown import BIDI_PATTERN, esc, visible

_BIDI = re.compile(BIDI_PATTERN)

#: The shown length of a shortened kernel name at first (characters); longer when needed.
SHORT_CHARS = 64
ELLIPSIS = "…"
FULL_NAME = "Kernel (full name)"
SHORT_HELP = ("Long names are shortened in the middle, keeping their start and their "
              f"distinguishing end; the full name is in the last column, {FULL_NAME!r}, and in "
              "the CSV download.")
FULL_NAMES = "Kernels (full names)"
#: The shown length of each of several joined names at first: two fit a table's width.
JOINED_CHARS = 40
JOINED = " + "  # how a KERNEL_NAMES cell joins its names (app/core/views/kernels.py)
SHORT_NAMES_HELP = ("Long kernel names are shortened in the middle, keeping their start and "
                    f"their distinguishing end; the full names are in the last column, "
                    f"{FULL_NAMES!r}, and in the CSV download.")


def shorten_middle(name: str, chars: int) -> str:
    """``name`` cut to ``chars`` characters: its start, ``…`` and its end (the end gets the
    larger half: kernels of one library share a prefix and differ at the end)."""
    if len(name) <= chars:
        return name
    head = (chars - 1) * 2 // 5
    tail = chars - 1 - head
    return f"{name[:head]}{ELLIPSIS}{name[len(name) - tail:]}"


def distinct_short_names(names: Iterable[str], chars: int = SHORT_CHARS) -> dict[str, str]:
    """Name -> its shortened form: the shortest length from ``chars`` up (step 8) at which
    distinct names stay distinct."""
    unique = sorted(set(names))
    longest = max((len(n) for n in unique), default=0)
    while chars < longest:
        short = {n: shorten_middle(n, chars) for n in unique}
        if len(set(short.values())) == len(unique):
            return short
        chars += 8
    return {n: n for n in unique}


def _text_columns(frame: pd.DataFrame) -> list[str]:
    """Columns that may hold text: object, string and categorical ones."""
    return [c for c in frame.columns if frame[c].dtype == object or
            pd.api.types.is_string_dtype(frame[c].dtype)
            or isinstance(frame[c].dtype, pd.CategoricalDtype)]


def visible_text(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with bidirectional controls in its text cells and column names made visible
    (a copy when any is found; else ``frame`` itself)."""
    hits = [c for c in _text_columns(frame)  # distinct values only: tables repeat names
            if _BIDI.search("\n".join(str(v) for v in pd.unique(frame[c].to_numpy(object))))]
    renamed = {c: visible(c) for c in frame.columns if isinstance(c, str) and visible(c) != c}
    if not hits and not renamed:
        return frame
    out = frame.copy()
    for c in hits:
        out[c] = out[c].map(lambda v: visible(v) if isinstance(v, str) else v)
    return out.rename(columns=renamed)


def short_kernel_names(frame: pd.DataFrame) -> tuple[pd.DataFrame, int | None]:
    """``frame`` with its :data:`~profiling_worker.bundle.schema.columns.KERNEL` column shortened in
    the middle and moved after the other columns, the full names appended as :data:`FULL_NAME`,
    and the shown length in characters; ``(frame, None)`` when no name needs it."""
    if C.KERNEL not in _text_columns(frame):
        return frame, None
    names = frame[C.KERNEL].dropna().astype(str)
    if names.empty or names.str.len().max() <= SHORT_CHARS:
        return frame, None
    short = distinct_short_names(names)
    out = _names_last(frame, C.KERNEL, FULL_NAME)
    out[C.KERNEL] = frame[C.KERNEL].astype(object).map(
        lambda v: short.get(v, v) if isinstance(v, str) else v)
    return out, max(len(s) for s in short.values())


def _names_last(frame: pd.DataFrame, column: str, full: str) -> pd.DataFrame:
    """A copy of ``frame`` with ``column`` moved last and a copy of it after it named ``full``
    (the full names beside the shortened ones the caller writes into ``column``)."""
    out = frame[[c for c in frame.columns if c != column] + [column]].copy()
    out[full] = frame[column]
    return out


def short_joined_names(frame: pd.DataFrame) -> tuple[pd.DataFrame, int | None]:
    """``frame`` with each name of its ``" + "``-joined
    :data:`~profiling_worker.bundle.schema.columns.KERNEL_NAMES` cells shortened in the middle
    (:func:`distinct_short_names` over every name of the column), the column moved after the
    other columns and the full cells appended as :data:`FULL_NAMES`, and the longest shown
    cell in characters; ``(frame, None)`` when no name needs it (or the column is a count, not
    names). Issue 37: the Kernel counts table cut two 130-character cuBLAS names at its end,
    where they differ."""
    if C.KERNEL_NAMES not in _text_columns(frame):
        return frame, None
    cells = frame[C.KERNEL_NAMES].dropna().astype(str)
    names = [n for cell in cells for n in cell.split(JOINED)]
    if not names or max(len(n) for n in names) <= JOINED_CHARS:
        return frame, None
    short = distinct_short_names(names, JOINED_CHARS)
    out = _names_last(frame, C.KERNEL_NAMES, FULL_NAMES)
    out[C.KERNEL_NAMES] = frame[C.KERNEL_NAMES].astype(object).map(
        lambda v: JOINED.join(short.get(n, n) for n in v.split(JOINED)) if isinstance(v, str)
        else v)
    return out, int(out[C.KERNEL_NAMES].dropna().astype(str).str.len().max())


#: Columns that name a row (with the config's parameters after Config): the first a table shows.
IDENTITY = (C.ANNOTATION, C.CONFIG)


def page_columns_first(frame: pd.DataFrame, own: Iterable[str], parameters: Iterable[str] = ()
                       ) -> tuple[pd.DataFrame, dict[str, object]]:
    """The frame a page's table shows: the row's identity (:data:`IDENTITY` and
    ``parameters``), then the page's ``own`` columns (its figures: Stability's RSD, stable and
    CI95), then the rest; a text column with one value on every row of two or more left out,
    with that value (None where the column is empty); numbers stay, a constant NumRuns or an
    empty StdDev being a finding. The CSV keeps ``frame`` whole (issue 37: on
    Stability RSD, stable and CI95 were off screen right at 1400 px, after Metric and
    MetricWords, which repeated one value on every row). ``own`` columns and the identity are
    never left out: they are what the page is about, and what names its rows."""
    own = [c for c in own if c in frame.columns]
    if len(frame) < 2:
        constant: dict[str, object] = {}
    else:
        constant = {c: (frame[c].dropna().iloc[0] if frame[c].notna().any() else None)
                    for c in frame.columns if c not in (*own, *IDENTITY, *parameters)
                    and _one_value(frame[c])}
    first = [c for c in (*IDENTITY, *parameters) if c in frame.columns]
    order = [*dict.fromkeys([*first, *own])]
    rest = [c for c in frame.columns if c not in order and c not in constant]
    return frame[[*order, *rest]], constant


def _one_value(column: pd.Series) -> bool:
    """Whether ``column`` holds text (not numbers) with one value on every row (all missing
    counts as one)."""
    if pd.api.types.is_numeric_dtype(column):
        return False
    return bool(column.isna().all() or (column.notna().all() and column.nunique() == 1))


def constant_caption(constant: dict[str, object]) -> str | None:
    """``Left out of the table, the same on every row (the CSV has them): Metric
    host__time_duration.sum, Unit µs.`` (markdown, the values escaped); None for none."""
    if not constant:
        return None
    said = ", ".join(f"{header(name)} {'(empty)' if value in (None, '') else esc(str(value))}"
                     for name, value in constant.items())
    return f"Left out of the table, the same on every row (the CSV has them): {said}."


#: Headers the rule of :func:`header` would not say well: nsight-python's statistics and a
#: few names whose words are not their parts.
HEADERS = {
    C.RSD: "Relative std dev (%)", C.CI95_HALF_PCT: "CI95 half-width (%)", C.STABLE: "Stable",
    C.AVG: "Mean", C.STD: "Std dev", C.MIN: "Min", C.MAX: "Max", C.MEDIAN: "Median",
    C.NUM_RUNS: "Runs", C.CI95_LOWER: "CI95 lower", C.CI95_UPPER: "CI95 upper",
    F.P_VALUE: "p-value", F.CIS_OVERLAP: "CIs overlap", F.GBPS: "GB/s", F.WALL_S: "Wall time (s)",
    F.METRIC_WORDS: "Metric in words", C.KERNELS_VARY: "Kernels vary",
    F.ARITHMETIC_INTENSITY: "Arithmetic intensity (FLOP/byte)",
}
#: A name's last part that is its unit -> the unit as a header writes it, in brackets.
UNITS = {"Us": "µs", "Ns": "ns", "Ms": "ms", "S": "s", "MHz": "MHz", "GBps": "GB/s",
         "Pct": "%", "Bytes": "bytes", "MB": "MB", "W": "W", "C": "°C",
         **{f"{p}FLOPs": f"{p}FLOP/s" for p in ("", "K", "M", "G", "T", "P")}}
#: Parts written otherwise than lower case: acronyms and tools.
WORDS = {"Dram": "DRAM", "Sm": "SM", "Cupti": "CUPTI", "Ncu": "ncu", "Gpu": "GPU",
         "Flops": "FLOPs", "Pct": "%", "Mem": "memory", "Nvml": "NVML", "Avg": "mean",
         "GBps": "GB/s", "TFLOPs": "TFLOP/s"}
#: A name's parts: a unit written in capitals, an acronym with its digits (``HBM``, ``L2``, ``AI``:
#: the capitals before a capitalised word or the end), a capitalised word, a lower-case word.
_PARTS = re.compile(r"CI95|[KMGTP]?FLOPs|GBps|MHz|[A-Z]+\d*(?=[A-Z][a-z]|$)|[A-Z][a-z]+|[A-Z]"
                    r"|[a-z]+|\d+")
#: A CamelCase name (``MeanTimeUs``, ``CI95_Lower``): what :func:`header` rewrites.
_CAMEL = re.compile(r"[A-Z][A-Za-z0-9]*(?:_[A-Z][A-Za-z0-9]*)*")


def header(name: str) -> str:
    """The header a table shows for column ``name``: :data:`HEADERS`' words, else a CamelCase
    name's parts as words, its last part in brackets where it is a unit (:data:`UNITS`):
    ``MeanTimeUs`` -> ``Mean time (µs)``, ``SmClockMHz`` -> ``SM clock (MHz)``, ``PctOfMax``
    -> ``% of max``; any other name (``Annotation``, ``n``, ``Run audit``, a metric or a
    collector's own name) as it is. Session 26's fresh user read nsight-python's
    ``RelativeStdDevPct`` over Stability's table."""
    if name in HEADERS:
        return HEADERS[name]
    if not _CAMEL.fullmatch(name) or not re.search(r"[a-z][A-Z0-9]|_|[A-Z]{2}[a-z]", name):
        return name
    parts = _PARTS.findall(name.replace("_", ""))
    # a percentage of something in a unit ("PctOfDatasheetGBps") is in %, not in that unit
    unit = UNITS.get(parts[-1]) if len(parts) > 1 and parts[0] != "Pct" else None
    words = [WORDS.get(p, p if p.isupper() or p[:1].isdigit() else p.lower())
             for p in (parts[:-1] if unit else parts)]
    text = " ".join(words)
    if words[0] not in ("ncu",):  # a tool's own lower-case spelling stays ("ncu (µs)")
        text = text[:1].upper() + text[1:]
    return f"{text} ({unit})" if unit else text


def header_config(columns: Iterable[object]) -> dict[str, dict[str, str]]:
    """Column config (Streamlit's ``label`` and ``help``), by name, of the columns whose header
    is not their name (:func:`header`): the header says it in words, its help the CSV's name."""
    return {str(name): {"label": said, "help": f"In the CSV download: {name}"}
            for name in columns if (said := header(str(name))) != str(name)}
