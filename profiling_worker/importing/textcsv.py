"""Text CSV as the importer reads it: size and encoding checks, one parse, typed columns.

Files are parsed with the :mod:`csv` module as text (never pickle or eval). Anything malformed
raises :class:`~profiling_worker.bundle.errors.ImportFailed` naming the file and the problem.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from profiling_worker.bundle.errors import ImportFailed
from profiling_worker.importing.kinds import NCU_DETAILS, NCU_RAW
from profiling_worker.importing.sniff import Sniffed
# Re-exported (the readers import them from here); written in .refusals with every fix.
from profiling_worker.importing.refusals import HINT_CSV as HINT_CSV, HINT_NCU_CSV as HINT_NCU_CSV
from profiling_worker.bundle.schema import columns as C

MAX_FILE_BYTES = 2 * 1024**3

_INT_RE = re.compile(r"^[+-]?\d+$")

NA_STRINGS = frozenset({"", "nan", "NaN", "NAN", "<NA>", "None", "null", "NULL", "NA", "N/A"})

_INDEX = "_index"  # the name an unnamed leading index column is read under
_THOUSANDS = r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d*)?(?:[eE][-+]?\d+)?"
METRIC_NAME_RE = re.compile(r"^[a-z][a-z0-9]*__[a-z0-9_]+(\.[a-z0-9_]+)*$")


def _check_size(path: Path, hint: str = HINT_CSV) -> None:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ImportFailed(f"{path.name}: cannot be read ({exc.strerror or exc})",
                           "check that the file exists and is readable") from exc
    if size == 0:
        raise ImportFailed(f"{path.name}: an empty file (0 bytes)", hint)
    if size > MAX_FILE_BYTES:
        raise ImportFailed(f"{path.name}: {size / 1024**3:.1f} GiB is larger than the "
                           f"{MAX_FILE_BYTES // 1024**3} GiB an import accepts",
                           "split the job, or import the processed_data CSV only")


def _header(s: Sniffed) -> list[str]:
    """The fields of the header line (ncu's preamble skipped)."""
    with open(s.path, encoding=s.encoding, newline="", errors="replace") as fh:
        for _ in range(s.skip):
            fh.readline()
        line = fh.readline()
    return next(csv.reader([line], delimiter=s.delimiter), [])


#: The details page's rule columns (ncu 2021.2 on): a rule row fills them, a metric row ends
#: after ``Metric Value`` plus ncu's trailing comma, so it has fewer fields than the header.
RULE_COLUMNS = ("Rule Name", "Rule Type", "Rule Description")


def metric_row_width(names: Sequence[str]) -> int | None:
    """Fields of a details page's metric row when the header has rule columns (up to
    ``Metric Value`` and one empty field after it), else None (every row fills the header)."""
    if "Metric Value" not in names or not set(RULE_COLUMNS) <= set(names):
        return None
    return list(names).index("Metric Value") + 2


def _read_strings(s: Sniffed, names: list[str]) -> pa.Table:
    """Every column as dictionary-encoded text, parsed by pyarrow: each distinct text is held
    once, so memory stays near the file's size. A details page's metric rows, shorter than its
    header (:func:`metric_row_width`), are padded with empty fields and come after its rule
    rows (launches are told apart by ``ID``, not by row order); any other short row raises."""
    width = metric_row_width(names)
    short: list[str] = []

    def on_invalid(row: pacsv.InvalidRow) -> str:
        if width is None or row.actual_columns != width:
            return "error"
        short.append(row.text)
        return "skip"

    table = pacsv.read_csv(
        s.path,
        read_options=pacsv.ReadOptions(skip_rows=s.skip + 1, column_names=names,
                                       encoding="utf8" if s.encoding.startswith("utf-8")
                                       else s.encoding),
        parse_options=pacsv.ParseOptions(delimiter=s.delimiter, newlines_in_values=True,
                                         invalid_row_handler=on_invalid),
        convert_options=pacsv.ConvertOptions(
            column_types={n: pa.dictionary(pa.int32(), pa.string()) for n in names},
            strings_can_be_null=False),
        memory_pool=pa.system_memory_pool())  # freed buffers go back to the OS
    if not short:
        return table
    assert width is not None  # rows are only kept as short with a metric row width
    part = pacsv.read_csv(  # the metric rows again, as a CSV of their own fields
        io.BytesIO("\n".join(short).encode("utf-8")),
        read_options=pacsv.ReadOptions(column_names=names[:width]),
        parse_options=pacsv.ParseOptions(delimiter=s.delimiter, newlines_in_values=True),
        convert_options=pacsv.ConvertOptions(
            column_types={n: pa.dictionary(pa.int32(), pa.string()) for n in names[:width]},
            strings_can_be_null=False))
    empty = pa.array([""] * part.num_rows).dictionary_encode()
    for n in names[width:]:
        part = part.append_column(n, empty)
    return pa.concat_tables([part, table.cast(part.schema)])


def parse_csv(s: Sniffed) -> tuple[list[str], pd.DataFrame]:
    """The header and the data rows (text, stripped) of a sniffed CSV.

    Parsed with pyarrow, every column dictionary-encoded (pandas categoricals), so that a CSV of
    repeated names and numbers takes little more memory than the file. Empty trailing columns
    (ncu ends every row with a comma) are dropped; blank lines are skipped.

    An unnamed first column of row numbers (a pandas ``to_csv()`` with its index) is dropped
    (:func:`index_column_note` says so).

    Raises:
        ImportFailed: empty, too large, not text, not CSV, an empty or duplicate column name,
            a row whose field count differs from the header's, no data rows.
    """
    path = s.path
    hint = HINT_NCU_CSV if s.kind in (NCU_RAW, NCU_DETAILS) else HINT_CSV
    _check_size(path, hint)
    raw = [h.strip() for h in _header(s)]
    width = len(raw)
    while width and not raw[width - 1]:
        width -= 1
    header = raw[:width]
    if not header:
        raise ImportFailed(f"{path.name}: holds no CSV header", hint)
    index = int(has_index_column(header))
    if any(not h for h in header[index:]) or any("\x00" in h for h in header):
        raise ImportFailed(f"{path.name}: the header has an empty column name", hint)
    dups = sorted({h for h in header if header.count(h) > 1})
    if dups:
        raise ImportFailed(f"{path.name}: duplicate column(s) {', '.join(dups)}", hint)
    names = [_INDEX][:index] + header[index:] + [f"_trailing_{i}" for i in range(len(raw) - width)]
    try:
        table = _read_strings(s, names)
    except pa.ArrowInvalid as exc:
        text = str(exc)
        if "UTF8" in text or "UTF-8" in text:
            raise ImportFailed(f"{path.name}: is not UTF-8 text", hint) from exc
        if "Could not skip initial" in text:  # pyarrow's words for a file cut inside its head
            text = "it ends before the first row the header announces"
        raise ImportFailed(f"{path.name}: not the CSV its header promises ({text[:300]}): "
                           "the file looks truncated or edited", hint) from exc
    if table.num_rows == 0:
        raise ImportFailed(f"{path.name}: has a header but no data rows",
                           "the profiled call produced no results; check its ncu log")
    if index and not numbers_as_text(table[_INDEX].to_pandas()).str.fullmatch(r"\d+").all():
        raise ImportFailed(f"{path.name}: the header has an empty column name (its first "
                           "column, not a row index: it holds other values than 0, 1, 2...)", hint)
    header = header[index:]
    return header, pd.DataFrame({n: _stripped(table[n].to_pandas()) for n in header})


def has_index_column(header: Sequence[str]) -> bool:
    """True when the first column of a CSV header has no name and the others have: the row
    index pandas writes with ``to_csv()`` (``index=True``), which :func:`parse_csv` drops."""
    return len(header) > 1 and not header[0].strip() and all(h.strip() for h in header[1:])


def index_column_note(s: Sniffed) -> str | None:
    """The note for a CSV whose unnamed first column :func:`parse_csv` dropped, else None."""
    if not has_index_column(_header(s)):
        return None
    return (f"{s.path.name}: its first column has no name and holds row numbers (a pandas "
            "re-save with the index); it was dropped")


def _stripped(column: pd.Series) -> pd.Series:
    """A categorical column with surrounding blanks removed from its categories."""
    stripped = column.cat.categories.str.strip()
    if stripped.equals(column.cat.categories):
        return column
    if stripped.is_unique:
        return column.cat.rename_categories(list(stripped))
    return column.astype(str).str.strip().astype("category")


def short(names: Sequence[str], limit: int = 8) -> str:
    shown = [repr(n[:40]) for n in names[:limit]]
    return "[" + ", ".join(shown) + (", ..." if len(names) > limit else "") + "]"


def numbers_as_text(values: pd.Series, decimal: str = ".", thousands: bool = False) -> pd.Series:
    """Number text in the C locale: a decimal comma made a point (with ``.`` thousands
    separators dropped), ``,`` thousands separators dropped when ``thousands`` and the cell
    groups its digits by three (``1,980,000``, ``61,344.00``; ``1,5`` is left as it is)."""
    s = values.astype(str).str.strip()
    if decimal == ",":
        return s.str.replace(".", "", regex=False).str.replace(",", ".", regex=False)
    if thousands:
        grouped = s.str.fullmatch(_THOUSANDS)
        return s.where(~grouped, s.str.replace(",", "", regex=False))
    return s


def data_row(values: pd.Series, i: int) -> str:
    """Where the ``i``-th cell of ``values`` (a column of :func:`parse_csv`'s frame, its index
    the data row's position) is, as every import message says it: "data row 1 (counted from 1
    under the header)". Not a line number: blank lines are skipped and ncu writes lines before
    the header, so the file's line number is not known here. "data row 2" used to name the
    first data row (line 2 of a plain CSV)."""
    label = values.index[i]
    row = int(label) + 1 if isinstance(label, (int, np.integer)) else i + 1
    return f"data row {row} (counted from 1 under the header)"


def floats(values: pd.Series, path: Path, column: str, finite: bool = True,
           decimal: str = ".", thousands: bool = False) -> pd.Series:
    """float64 of a text column (NA strings -> NaN); a categorical column is converted per
    category (each distinct text once).

    Raises:
        ImportFailed: a cell that is not a number, or (``finite``) an infinite one.
    """
    if isinstance(values.dtype, pd.CategoricalDtype):
        codes = values.cat.codes.to_numpy()
        try:
            per_category = floats(pd.Series(values.cat.categories, dtype=object), path, column,
                                  finite, decimal, thousands)
        except ImportFailed:  # again row by row, for the message's row number
            return floats(values.astype(object), path, column, finite, decimal, thousands)
        out = np.full(len(values), np.nan)
        known = codes >= 0
        out[known] = per_category.to_numpy()[codes[known]]
        return pd.Series(out, index=values.index, dtype="float64")
    s = numbers_as_text(values, decimal, thousands)
    na = s.isin(NA_STRINGS)
    num = pd.to_numeric(s.where(~na, None), errors="coerce")
    bad = num.isna() & ~na
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise ImportFailed(f"{path.name}: column {column}, {data_row(s, i)}: "
                           f"{s.iloc[i][:40]!r} is not a number", HINT_CSV)
    num = num.astype("float64")
    if finite and np.isinf(num.to_numpy()).any():
        i = int(np.flatnonzero(np.isinf(num.to_numpy()))[0])
        raise ImportFailed(f"{path.name}: column {column}, {data_row(s, i)}: "
                           f"{s.iloc[i][:40]!r} is not a finite number", HINT_CSV)
    return num


def non_finite_to_missing(values: pd.Series) -> tuple[pd.Series, int]:
    """``values`` with inf/-inf/NaN as NaN, and how many cells were inf or NaN."""
    bad = ~np.isfinite(values.to_numpy(dtype="float64"))
    return values.where(~bad, np.nan), int(bad.sum())


def typed_param(values: pd.Series, decimal: str = ".") -> pd.Series:
    """int64 when every value is a whole number that fits, else finite float64, else str."""
    s = as_text(values)
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
    """Text of a column (already stripped by :func:`parse_csv`) as plain objects.

    Raises:
        ImportFailed: ``required`` and a cell is empty.
    """
    s = as_text(values)
    if required and (s == "").any():
        i = int(np.flatnonzero((s == "").to_numpy())[0])
        raise ImportFailed(f"{path.name}: column {column} is empty in {data_row(s, i)}",
                           HINT_CSV)
    return s


def units(frame: pd.DataFrame) -> pd.Series:
    """The Unit column; for 0.9.x files (no Unit) the obvious units are inferred:
    ns for ``*__time_duration*``, % for ``*pct*`` metrics; otherwise None. Worked out once per
    distinct metric and unit, then mapped onto the rows."""
    def infer(metric: str) -> str | None:
        return "ns" if "__time_duration" in metric else "%" if ".pct" in metric else None

    metric = frame[C.METRIC].astype(object)
    given = frame[C.UNIT].astype(object) if C.UNIT in frame.columns else \
        pd.Series(None, index=frame.index, dtype=object)
    pairs = pd.MultiIndex.from_arrays([metric, given.fillna("")])
    table = {(m, u): (u if u and u not in NA_STRINGS else infer(str(m)))
             for m, u in pairs.unique()}
    return pd.Series([table[p] for p in pairs], index=frame.index, dtype=object)


def kernels(frame: pd.DataFrame) -> pd.Series:
    """Kernels combined into one nsight-python row: its ``Kernel`` names joined by ``|``."""
    if C.KERNEL not in frame.columns:
        return pd.Series(1, index=frame.index, dtype="int64")
    return per_distinct(frame[C.KERNEL], lambda k: str(k).count("|") + 1).astype("int64")


def per_distinct(values: pd.Series, fn) -> pd.Series:  # type: ignore[no-untyped-def]
    """``fn`` of every cell, computed once per distinct text (a CSV repeats its names)."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        mapped = pd.Series([fn(c) for c in values.cat.categories])
        codes = values.cat.codes.to_numpy()
        return pd.Series(mapped.to_numpy()[codes], index=values.index)
    return values.map(fn)


def as_text(values: pd.Series) -> pd.Series:
    """A text column as Python strings (a categorical's rows share its category strings)."""
    return values.astype(object) if isinstance(values.dtype, pd.CategoricalDtype) \
        else values.astype(str).astype(object)
