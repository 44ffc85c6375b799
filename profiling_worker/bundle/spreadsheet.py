"""CSV cells that a spreadsheet would run as formulas are neutralised (CSV injection).

Excel, LibreOffice and Google Sheets treat a cell that starts with ``= + - @`` (or a tab or
carriage return before one) as a formula, so an annotation named ``=HYPERLINK(...)`` in an
imported file would become a live link in a downloaded CSV. The OWASP advice is followed:
such **text** cells get a leading ``'``, which spreadsheets show as text. Numbers (negative
ones included) stay numbers; Parquet files are written from the frame unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_FORMULA_RE = "^[=+@\\t\\r-]"  # FORMULA_START as one regular expression


def _safe(value: object) -> object:
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def spreadsheet_safe(frame: pd.DataFrame, look_in: Sequence[int] | None = None) -> pd.DataFrame:
    """``frame`` with every text cell (and column name) that starts with ``= + - @``, tab or
    carriage return prefixed by ``'``; numeric columns untouched. Returns ``frame`` itself when
    nothing needs changing, else a copy.

    Args:
        look_in: the positions of the only columns that may hold such a cell
            (:func:`formula_columns`); None: every text column is looked through.
    """
    # the names as a list: an Index of arrow strings (pandas 3's) iterates slowly
    renamed = {c: _safe(c) for c in frame.columns.tolist() if _safe(c) is not c}
    if look_in is not None and not look_in and not renamed:
        return frame  # the usual table: no column to look in, so not even its dtypes are read
    text_cols = [c for i, (c, dtype) in enumerate(frame.dtypes.items())
                 if (look_in is None or i in look_in)
                 and (dtype == object or pd.api.types.is_string_dtype(dtype))]
    hit = [c for c in text_cols  # a plain loop: Series.map took most of a warm job's CSV time
           if any(_safe(v) is not v for v in frame[c].to_numpy().ravel())]
    if not hit and not renamed:
        return frame
    out = frame.copy()
    for col in hit:
        out[col] = pd.Series([_safe(v) for v in frame[col]], index=frame.index,
                             dtype=frame[col].dtype)  # map() would turn None into NaN
    return out.rename(columns=renamed)


def formula_columns(table: pa.Table) -> list[int]:
    """The positions of ``table``'s columns that may hold a text cell :func:`spreadsheet_safe`
    changes: its string columns with such a cell (found by pyarrow, without a Python object per
    cell) and every column of a type that may hold text otherwise (dictionary, nested, ...);
    not its number, boolean, time and all-null columns."""
    out = []
    for i, column in enumerate(table.columns):
        kind = column.type
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            if pc.any(pc.match_substring_regex(column, _FORMULA_RE)).as_py():
                out.append(i)
        elif not (pa.types.is_integer(kind) or pa.types.is_floating(kind)
                  or pa.types.is_boolean(kind) or pa.types.is_null(kind)
                  or pa.types.is_temporal(kind)):
            out.append(i)
    return out
