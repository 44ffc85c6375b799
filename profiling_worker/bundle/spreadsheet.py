"""CSV cells that a spreadsheet would run as formulas are neutralised (CSV injection).

Excel, LibreOffice and Google Sheets treat a cell that starts with ``= + - @`` (or a tab or
carriage return before one) as a formula, so an annotation named ``=HYPERLINK(...)`` in an
imported file would become a live link in a downloaded CSV. The OWASP advice is followed:
such **text** cells get a leading ``'``, which spreadsheets show as text. Numbers (negative
ones included) stay numbers; Parquet files are written from the frame unchanged.
"""

from __future__ import annotations

import pandas as pd

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _safe(value: object) -> object:
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every text cell (and column name) that starts with ``= + - @``, tab or
    carriage return prefixed by ``'``; numeric columns untouched. Returns ``frame`` itself when
    nothing needs changing, else a copy."""
    text_cols = [c for c, dtype in frame.dtypes.items()
                 if dtype == object or pd.api.types.is_string_dtype(dtype)]
    hit = [c for c in text_cols  # a plain loop: Series.map took most of a warm job's CSV time
           if any(_safe(v) is not v for v in frame[c].to_numpy().ravel())]
    renamed = {c: _safe(c) for c in frame.columns if _safe(c) is not c}
    if not hit and not renamed:
        return frame
    out = frame.copy()
    for col in hit:
        out[col] = pd.Series([_safe(v) for v in frame[col]], index=frame.index,
                             dtype=frame[col].dtype)  # map() would turn None into NaN
    return out.rename(columns=renamed)
