"""Text CSV as the importer reads it: size and encoding checks, one parse, typed columns.

Files are parsed with the :mod:`csv` module as text (never pickle or eval). Anything malformed
raises :class:`~profiling_worker.errors.ImportFailed` naming the file and the problem.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from profiling_worker.errors import ImportFailed
from profiling_worker.importing.sniff import Sniffed, read_lines

MAX_FILE_BYTES = 2 * 1024**3

_INT_RE = re.compile(r"^[+-]?\d+$")

NA_STRINGS = frozenset({"", "nan", "NaN", "NAN", "<NA>", "None", "null", "NULL", "NA", "N/A"})

METRIC_NAME_RE = re.compile(r"^[a-z][a-z0-9]*__[a-z0-9_]+(\.[a-z0-9_]+)*$")

HINT_CSV = ("give the profiled_data-*.csv / processed_data-*.csv files nsight-python writes "
             "with output_csv=True, unmodified")


def _check_size(path: Path) -> None:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ImportFailed(f"{path.name}: cannot be read ({exc.strerror or exc})",
                           "check that the file exists and is readable") from exc
    if size == 0:
        raise ImportFailed(f"{path.name}: the file is empty", HINT_CSV)
    if size > MAX_FILE_BYTES:
        raise ImportFailed(f"{path.name}: {size / 1024**3:.1f} GiB is larger than the "
                           f"{MAX_FILE_BYTES // 1024**3} GiB an import accepts",
                           "split the job, or import the processed_data CSV only")


def parse_csv(s: Sniffed) -> tuple[list[str], pd.DataFrame]:
    """The header and the data rows (text, stripped) of a sniffed CSV.

    Empty trailing columns (ncu ends every row with a comma) are dropped; blank lines are
    skipped.

    Raises:
        ImportFailed: empty, too large, not text, not CSV, an empty or duplicate column name,
            a row whose field count differs from the header's, no data rows.
    """
    path = s.path
    _check_size(path)
    try:
        records = [r for r in csv.reader(read_lines(s), delimiter=s.delimiter)
                   if r and any(f.strip() for f in r)]
    except UnicodeDecodeError as exc:
        raise ImportFailed(f"{path.name}: is not UTF-8 text (byte {exc.start})", HINT_CSV) from exc
    except csv.Error as exc:
        raise ImportFailed(f"{path.name}: not valid CSV ({exc})", HINT_CSV) from exc
    if not records:
        raise ImportFailed(f"{path.name}: holds no CSV header", HINT_CSV)
    header = [h.strip() for h in records[0]]
    width = len(header)
    while width and not header[width - 1]:
        width -= 1
    header = header[:width]
    if any(not h for h in header) or any("\x00" in h for h in header):
        raise ImportFailed(f"{path.name}: the header has an empty column name", HINT_CSV)
    dups = sorted({h for h in header if header.count(h) > 1})
    if dups:
        raise ImportFailed(f"{path.name}: duplicate column(s) {', '.join(dups)}", HINT_CSV)
    rows = records[1:]
    for i, r in enumerate(rows, start=2 + s.skip):
        if len(r) != width and not (len(r) > width and not any(f.strip() for f in r[width:])):
            raise ImportFailed(
                f"{path.name}: line {i} has {len(r)} fields, the header has {width}",
                "the file looks truncated or edited; export it again")
    if not rows:
        raise ImportFailed(f"{path.name}: has a header but no data rows",
                           "the profiled call produced no results; check its ncu log")
    frame = pd.DataFrame([r[:width] for r in rows], columns=header, dtype=object)
    return header, frame.apply(lambda c: c.str.strip())


def short(names: Sequence[str], limit: int = 8) -> str:
    shown = [repr(n[:40]) for n in names[:limit]]
    return "[" + ", ".join(shown) + (", ..." if len(names) > limit else "") + "]"


def numbers_as_text(values: pd.Series, decimal: str = ".", thousands: bool = False) -> pd.Series:
    """Number text in the C locale: a decimal comma made a point (with ``.`` thousands
    separators dropped), ``,`` thousands separators dropped when ``thousands``."""
    s = values.astype(str).str.strip()
    if decimal == ",":
        return s.str.replace(".", "", regex=False).str.replace(",", ".", regex=False)
    if thousands:
        return s.str.replace(",", "", regex=False)
    return s


def floats(values: pd.Series, path: Path, column: str, finite: bool = True,
           decimal: str = ".", thousands: bool = False) -> pd.Series:
    """float64 of a text column (NA strings -> NaN).

    Raises:
        ImportFailed: a cell that is not a number, or (``finite``) an infinite one.
    """
    s = numbers_as_text(values, decimal, thousands)
    na = s.isin(NA_STRINGS)
    num = pd.to_numeric(s.where(~na, None), errors="coerce")
    bad = num.isna() & ~na
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise ImportFailed(f"{path.name}: column {column}, data row {i + 2}: "
                           f"{s.iloc[i][:40]!r} is not a number", HINT_CSV)
    num = num.astype("float64")
    if finite and np.isinf(num.to_numpy()).any():
        i = int(np.flatnonzero(np.isinf(num.to_numpy()))[0])
        raise ImportFailed(f"{path.name}: column {column}, data row {i + 2}: "
                           f"{s.iloc[i][:40]!r} is not a finite number", HINT_CSV)
    return num


def non_finite_to_missing(values: pd.Series) -> tuple[pd.Series, int]:
    """``values`` with inf/-inf/NaN as NaN, and how many cells were inf or NaN."""
    bad = ~np.isfinite(values.to_numpy(dtype="float64"))
    return values.where(~bad, np.nan), int(bad.sum())


def bools(values: pd.Series) -> pd.Series:
    s = values.astype(str).str.strip().str.lower()
    return s.isin({"true", "1", "1.0", "yes"})


def typed_param(values: pd.Series, decimal: str = ".") -> pd.Series:
    """int64 when every value is a whole number that fits, else finite float64, else str."""
    s = values.astype(str).str.strip()
    if decimal == "," and s.str.fullmatch(r"-?\d+(,\d+)?").all():
        s = s.str.replace(",", ".", regex=False)
    if len(s) and s.str.match(_INT_RE).all():
        try:
            ints = [int(v) for v in s]
            if all(-(2**63) <= v < 2**63 for v in ints):
                return pd.Series(ints, index=s.index, dtype="int64")
        except ValueError:
            pass
    num = pd.to_numeric(s, errors="coerce")
    if len(s) and num.notna().all() and np.isfinite(num.to_numpy(dtype="float64")).all():
        return num.astype("float64")
    return s.astype(object)


def text_column(values: pd.Series, path: Path, column: str, required: bool) -> pd.Series:
    s = values.astype(str).str.strip()
    if required and (s == "").any():
        i = int(np.flatnonzero((s == "").to_numpy())[0])
        raise ImportFailed(f"{path.name}: column {column} is empty in data row {i + 2}",
                           HINT_CSV)
    return s.astype(object)


def units(frame: pd.DataFrame) -> pd.Series:
    """The Unit column; for 0.9.x files (no Unit) the obvious units are inferred:
    ns for ``*__time_duration*``, % for ``*pct*`` metrics; otherwise None."""
    if "Unit" in frame.columns:
        u = frame["Unit"].astype(str).str.strip()
        u = u.where(~u.isin(NA_STRINGS), None)
    else:
        u = pd.Series([None] * len(frame), index=frame.index, dtype=object)
    metric = frame["Metric"].astype(str)
    inferred = np.where(metric.str.contains("__time_duration", regex=False), "ns",
                        np.where(metric.str.contains(r"\.pct", regex=True), "%", None))
    return u.where(u.notna(), pd.Series(inferred, index=frame.index, dtype=object))


def kernels(frame: pd.DataFrame) -> pd.Series:
    """Kernels combined into one nsight-python row: its ``Kernel`` names joined by ``|``."""
    if "Kernel" not in frame.columns:
        return pd.Series(1, index=frame.index, dtype="int64")
    k = frame["Kernel"].astype(str)
    return (k.str.count(r"\|") + 1).astype("int64")
