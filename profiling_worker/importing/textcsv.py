"""Text CSV as the importer reads it: size and encoding checks, one parse, typed columns.

Files are parsed with the :mod:`csv` module as text (never pickle or eval). Anything malformed
raises :class:`~profiling_worker.errors.ImportFailed` naming the file and the problem.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from profiling_worker.errors import ImportFailed

MAX_FILE_BYTES = 2 * 1024**3

_INT_RE = re.compile(r"^[+-]?\d+$")

NA_STRINGS = frozenset({"", "nan", "NaN", "NAN", "<NA>", "None", "null", "NULL", "NA", "N/A"})

METRIC_NAME_RE = re.compile(r"^[a-z][a-z0-9]*__[a-z0-9_]+(\.[a-z0-9_]+)*$")

HINT_CSV = ("give the profiled_data-*.csv / processed_data-*.csv files nsight-python writes "
             "with output_csv=True, unmodified")

def read_text(path: Path) -> str:
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
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ImportFailed(f"{path.name}: cannot be read ({exc.strerror or exc})",
                           "check that the file is readable") from exc
    if b"\x00" in data:
        raise ImportFailed(f"{path.name}: contains NUL bytes, so it is not a CSV text file",
                           HINT_CSV)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportFailed(f"{path.name}: is not UTF-8 text (byte {exc.start})", HINT_CSV) from exc

def parse_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    text = read_text(path)
    try:
        records = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise ImportFailed(f"{path.name}: not valid CSV ({exc})", HINT_CSV) from exc
    records = [r for r in records if r and any(f.strip() for f in r)]
    if not records:
        raise ImportFailed(f"{path.name}: holds no CSV header", HINT_CSV)
    header = [h.strip() for h in records[0]]
    if any(not h for h in header):
        raise ImportFailed(f"{path.name}: the header has an empty column name", HINT_CSV)
    dups = sorted({h for h in header if header.count(h) > 1})
    if dups:
        raise ImportFailed(f"{path.name}: duplicate column(s) {', '.join(dups)}", HINT_CSV)
    rows = records[1:]
    for i, r in enumerate(rows, start=2):
        if len(r) != len(header):
            raise ImportFailed(
                f"{path.name}: data row {i} has {len(r)} fields, the header has {len(header)}",
                "the file looks truncated or edited; export it again from nsight-python")
    if not rows:
        raise ImportFailed(f"{path.name}: has a header but no data rows",
                           "the profiled call produced no results; check its ncu log")
    return header, rows

def short(names: Sequence[str], limit: int = 8) -> str:
    shown = [repr(n[:40]) for n in names[:limit]]
    return "[" + ", ".join(shown) + (", ..." if len(names) > limit else "") + "]"

def floats(values: pd.Series, path: Path, column: str, finite: bool = True) -> pd.Series:
    s = values.astype(str).str.strip()
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

def bools(values: pd.Series) -> pd.Series:
    s = values.astype(str).str.strip().str.lower()
    return s.isin({"true", "1", "1.0", "yes"})

def typed_param(values: pd.Series) -> pd.Series:
    """int64 when every value is a whole number that fits, else finite float64, else str."""
    s = values.astype(str).str.strip()
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
