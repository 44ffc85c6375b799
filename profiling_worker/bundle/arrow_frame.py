"""A bundle table's frame as the pyarrow Table its Parquet file is written from (issue 40).

``pa.Table.from_pandas(frame, preserve_index=False)`` gives the table, but on the few-row
tables of a warm job it costs more than the Parquet writer: it makes a Series of every column
and inspects it several times over (0.25-0.7 ms a table, 5 ms of a warm J1 job's 8 tables on
the 2-core machine). :func:`to_arrow` makes one decision, :func:`own_columns`: where it can, it
converts the columns itself, each once, with pyarrow's own conversion of the column's values
(``pa.array(..., from_pandas=True)``, what ``from_pandas`` calls per column), and writes the
same ``pandas`` schema metadata (pyarrow's ``construct_metadata`` without an index: each
column's name, pandas and numpy type); any other frame goes through ``from_pandas`` itself.
The two give equal tables, metadata included (tests/unit/profiling_worker/test_bundle_writer.py,
on every table of the recorded bundles and frames of every other dtype).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from pyarrow.pandas_compat import get_logical_type

#: numpy dtypes converted here: pyarrow takes their values as they are (NaN as null)
_NUMPY = frozenset(np.dtype(t) for t in ("bool", "int8", "int16", "int32", "int64", "uint8",
                                         "uint16", "uint32", "uint64", "float32", "float64"))

#: A table of more rows than this per column has its columns converted on threads by
#: ``from_pandas`` (its own rule): it goes to it.
_THREADED_ROWS_PER_COLUMN = 100


def to_arrow(frame: pd.DataFrame) -> pa.Table:
    """``pa.Table.from_pandas(frame, preserve_index=False)``, equal to it with its schema
    metadata: built from :func:`own_columns` where they convert the frame, else by
    ``from_pandas`` itself.

    Raises:
        pyarrow.ArrowException: as ``from_pandas`` raises (a column mixing types that Arrow
            cannot hold in one array): such a frame is handed to it.
    """
    columns = own_columns(frame)
    if columns is None:  # the one decision: a frame this module does not convert
        return pa.Table.from_pandas(frame, preserve_index=False)
    dtypes, arrays = columns
    return pa.Table.from_arrays(arrays, schema=_schema(
        tuple(frame.columns.tolist()), tuple(dtypes), tuple(a.type for a in arrays)))


@functools.lru_cache(maxsize=256)
def _schema(names: tuple[str, ...], dtypes: tuple[Any, ...],
            types: tuple[pa.DataType, ...]) -> pa.Schema:
    """The schema of columns ``names`` of these dtypes (the frame's) and Arrow types, with
    :func:`_pandas_metadata`: made once per layout in a process (issue 40: a warm worker writes
    the same eight layouts every job, and the fields and the metadata's JSON cost 30-60 µs a
    table)."""
    return pa.schema([pa.field(name, kind) for name, kind in zip(names, types)],
                     metadata=_pandas_metadata(list(names), list(dtypes), list(types)))


def columns_to_arrow(columns: Mapping[str, Any]) -> pa.Table | None:
    """``to_arrow(pd.DataFrame(columns))``, equal to it with its schema metadata, without making
    the frame (issue 40: the aggregated table is on disk before its frame is made), or None
    where the frame must be made: a column whose dtype in a frame is not plain here, columns of
    unequal lengths, or a frame :func:`own_columns` would hand to ``from_pandas``.

    Plain columns (:func:`_frame_column`): a numpy array of a number or bool dtype, pandas'
    numpy-backed array of one, pandas' pyarrow-backed string array, a Series of object dtype,
    and a list of strings (a frame infers its dtype as a Series of it does)."""
    names = list(columns)
    held = [_frame_column(values) for values in columns.values()]
    if (not names or not all(isinstance(name, str) for name in names)
            or any(column is None for column in held)):
        return None
    lengths = {len(column) for column in held}
    if len(lengths) > 1 or lengths.pop() > _THREADED_ROWS_PER_COLUMN * len(names):
        return None
    converted = _converted(held)
    if converted is None:
        return None
    dtypes, arrays = converted
    return pa.Table.from_arrays(arrays, schema=_schema(
        tuple(names), tuple(dtypes), tuple(a.type for a in arrays)))


def _frame_column(values: Any) -> Any:
    """``values`` as the column a frame of them holds (a numpy array of a number or bool
    dtype, pandas' pyarrow-backed string array, an object numpy array), or None where its dtype
    there is not plain here (:func:`columns_to_arrow`)."""
    if isinstance(values, np.ndarray):
        return values if values.dtype in _NUMPY else None
    if isinstance(values, pd.arrays.NumpyExtensionArray):
        array = values.to_numpy()
        return array if array.dtype in _NUMPY else None
    if isinstance(values, pd.Series):
        return values.to_numpy() if values.dtype == object else None
    if isinstance(values, list):
        if not all(isinstance(v, str) for v in values):
            return None
        values = pd.Series(values).array  # the dtype a frame infers for them
    if isinstance(values, pd.arrays.ArrowStringArray):
        return values if _values(values) is not None else None
    return None


def own_columns(frame: pd.DataFrame) -> tuple[list[Any], list[pa.Array]] | None:
    """The columns' dtypes and their values converted here, or None where ``from_pandas`` must
    convert the frame: a frame with attrs, no columns, a column name that is no string or more rows
    than ``from_pandas`` converts without threads; a column of another dtype than a numpy
    number or bool, object or pandas' pyarrow-backed strings; values ``pa.array`` refuses (its
    message, which names the column, comes from ``from_pandas``); decimals (``from_pandas``
    records their precision)."""
    names = frame.columns.tolist()  # an Index of arrow strings is slow to iterate
    if (frame.attrs or not names or not all(isinstance(name, str) for name in names)
            or len(frame) > _THREADED_ROWS_PER_COLUMN * len(names)):
        return None
    return _converted(_column_arrays(frame))


def _converted(held: list[Any]) -> tuple[list[Any], list[pa.Array]] | None:
    """The dtypes and Arrow arrays of columns as a frame holds them (:func:`_column_arrays`),
    each converted by ``pa.array`` as ``from_pandas`` converts it; None where ``from_pandas``
    must (:func:`own_columns`)."""
    dtypes: list[Any] = []
    arrays: list[pa.Array] = []
    for column in held:
        values = _values(column)
        if values is None:
            return None
        try:
            arrays.append(pa.array(values, from_pandas=True))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            return None
        dtypes.append(column.dtype)
    return None if any(pa.types.is_decimal(a.type) for a in arrays) else (dtypes, arrays)


def _column_arrays(frame: pd.DataFrame) -> list[Any]:
    """Each column's values as the frame holds them: a numpy array for a numpy dtype, else
    pandas' extension array (``Series.to_numpy()``, ``Series.array``). Through the public
    ``items()``: pandas' private ``_iter_column_arrays`` skips the Series per column (0.05-0.15
    ms a table of a warm job, issue 40) but may change under any pandas release."""
    return [column.to_numpy() if isinstance(column.dtype, np.dtype) else column.array
            for _, column in frame.items()]


def _values(column: Any) -> Any:
    """A column's values (:func:`_column_arrays`) as ``from_pandas`` hands them to
    ``pa.array``: a numpy array of a number, bool or object dtype, pandas' arrow-backed string
    array; None for another dtype."""
    dtype = column.dtype
    if isinstance(dtype, np.dtype):
        return column if dtype in _NUMPY or dtype == object else None
    if isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
        return column
    return None


def _pandas_metadata(names: list[str], dtypes: list[Any],
                     types: list[pa.DataType]) -> dict[bytes, bytes]:
    """The ``pandas`` schema metadata pyarrow's ``construct_metadata`` writes for these columns
    (``types``: their Arrow types) without an index (key order and JSON as it writes them)."""
    columns = [{"name": name, "field_name": name, **_types(dtype, kind), "metadata": None}
               for name, dtype, kind in zip(names, dtypes, types)]
    return {b"pandas": json.dumps({
        "index_columns": [], "column_indexes": [], "columns": columns, "attributes": {},
        "creator": {"library": "pyarrow", "version": pa.__version__},
        "pandas_version": pd.__version__}).encode("utf8")}


@functools.lru_cache(maxsize=256)
def _types(dtype: Any, arrow_type: pa.DataType) -> dict[str, str]:
    """A column's ``pandas_type`` and ``numpy_type`` as pyarrow's ``get_column_metadata``
    names them (each pair once per process: naming a numpy dtype is slow)."""
    return {"pandas_type": get_logical_type(arrow_type), "numpy_type": str(dtype)}
