"""Writing the tables of a result bundle (``tables/<name>.parquet``), and their CSVs on demand.

The one writer of bundles: the worker's run path and the importer both write their tables with
:func:`write_table` and finish with :func:`finish_bundle`. The rules:

* Parquet (pyarrow, no index) is what the app reads and the one file of a table. The CSV
  (UTF-8, no index, full float precision) that users download is made from it when asked
  (:func:`write_table_csv`; issue 40: a bundle written before holds ``tables/<name>.csv`` too,
  the same text). It holds the same rows and columns; text cells that a spreadsheet would run
  as a formula (``=``, ``+``, ``-``, ``@``) start with ``'``.
* Each file is written to a temporary name in the same directory and moved into place with
  ``os.replace``, so a reader never sees half a file; ``manifest.json`` is written last
  (:func:`profiling_worker.bundle.schema.manifest.write_manifest`), and a bundle without a manifest
  is not a result.
"""

from __future__ import annotations

import csv
import functools
import io
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from profiling_worker.bundle.arrow_frame import columns_to_arrow, to_arrow
from profiling_worker.bundle.file_mode import temp_file
from profiling_worker.bundle.loader import read_table_file
from profiling_worker.bundle.schema import columns as C, intervals, plausibility
from profiling_worker.bundle.schema.manifest import (RESULT_READY_KEY, JobStatus, now_iso,
                                                     write_manifest)
from profiling_worker.bundle.spreadsheet import formula_columns, spreadsheet_safe

#: The manifest key naming the method of ``tables/aggregated.*``'s CI95 columns (issue 34).
CI95_METHOD_KEY = "ci95_method"
_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$")
#: Rows up to which a table's Parquet file is made in memory before it is written (issue 40:
#: a few-row table's cost is its file's opening and writes); a larger table streams to it.
IN_MEMORY_ROWS = 100_000


def table_columns(name: str, param_names: Sequence[str] = ()) -> list[str]:
    """The column layout of a bundle table (see :mod:`profiling_worker.bundle.schema.columns`).

    Args:
        name: one of ``columns.TABLES`` or ``columns.OPTIONAL_TABLES``.
        param_names: the config parameter names, in spec order.

    Returns:
        Column names in order.

    Raises:
        KeyError: unknown table name.
    """
    p = list(param_names)
    layouts = {
        C.TABLE_LAUNCHES: [C.ANNOTATION, C.CONFIG, *p, C.RUN, C.LAUNCH, C.KERNEL, C.GRID, C.BLOCK,
                           C.METRIC, C.VALUE, C.UNIT],
        C.TABLE_RUNS: [C.ANNOTATION, C.CONFIG, *p, C.RUN, C.METRIC, C.VALUE, C.UNIT, C.KERNELS,
                       C.COMBINE_RULE],
        C.TABLE_AGGREGATED: [C.ANNOTATION, C.CONFIG, *p, C.METRIC, C.UNIT, C.NUM_RUNS, C.AVG,
                             C.STD, C.MIN, C.MAX, C.MEDIAN, C.CI95_LOWER, C.CI95_UPPER, C.RSD,
                             C.STABLE, C.KERNELS, C.KERNELS_VARY],
        C.TABLE_WORK: [C.ANNOTATION, C.CONFIG, *p, C.FLOPS, C.BYTES, C.DTYPE],
        C.TABLE_NVML: [C.TIME_S, C.SM_CLOCK_MHZ, C.MEM_CLOCK_MHZ, C.TEMP_C, C.POWER_W,
                       C.THROTTLE_REASONS],
        C.TABLE_COLLECTORS: [C.CONFIG, *p, C.RUN, C.COLLECTOR, C.VALUE, C.UNIT],
        C.TABLE_UNATTRIBUTED: [C.ANNOTATION, C.CONFIG, C.KERNEL, C.GRID, C.BLOCK, C.METRIC,
                               C.VALUE, C.UNIT, C.REASON],
        C.TABLE_LAUNCH_TIMES: [C.ANNOTATION, C.CONFIG, *p, C.RUN, C.LAUNCH, C.KERNEL, C.START_NS,
                               C.END_NS],
        C.TABLE_RUN_AUDIT: [C.ANNOTATION, C.CONFIG, C.RUN, C.CHECK, C.RESULT, C.EVIDENCE,
                            C.EVIDENCE_TEMPLATE, C.EVIDENCE_VALUE_NS, C.EVIDENCE_REFERENCE_NS],
    }
    return layouts[name]


_INT_COLS = {C.CONFIG, C.RUN, C.LAUNCH, C.NUM_RUNS, C.START_NS, C.END_NS}
_BOOL_COLS = {C.STABLE, C.KERNELS_VARY}
_STR_COLS = {C.ANNOTATION, C.KERNEL, C.GRID, C.BLOCK, C.METRIC, C.UNIT, C.COMBINE_RULE, C.DTYPE,
             C.COLLECTOR, C.REASON, C.CHECK, C.RESULT, C.EVIDENCE, C.EVIDENCE_TEMPLATE}


def empty_table(name: str, param_names: Sequence[str] = ()) -> pd.DataFrame:
    """An empty frame with the layout of table ``name`` and sensible dtypes.

    Config parameter columns of an empty table are typed ``int64`` (sizes); key columns int64,
    flags bool, names string (object), everything else float64.

    Raises:
        KeyError: unknown table name.
    """
    cols = table_columns(name, param_names)

    def dtype(c: str) -> str:
        if c in _INT_COLS or c in param_names:
            return "int64"
        if c in _BOOL_COLS:
            return "bool"
        if c in _STR_COLS:
            return "object"
        return "float64"

    # empty arrays: a frame of the same dtypes and index as of empty Series, in a quarter of
    # the time (a warm job makes one for its collectors)
    return pd.DataFrame({c: np.array([], dtype=dtype(c)) for c in cols})


def _atomic_write(path: Path, write: Callable[[str], object]) -> None:
    fd, tmp = temp_file(path.parent, f".{path.name}-")  # with open()'s mode: no chmod
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _atomic_write_bytes(path: Path, data: bytes | memoryview | pa.Buffer) -> None:
    """``data`` written to ``path`` as :func:`_atomic_write` writes (a temporary name, then
    ``os.replace``), through the descriptor the temporary file was made with: one ``write``
    call, where pyarrow's file (or ``open()``) would open the file again and write a small
    table in several calls (issue 40: 0.3-0.5 ms of a 40-row table's files)."""
    fd, tmp = temp_file(path.parent, f".{path.name}-")
    try:
        view = memoryview(data)
        while view.nbytes:  # a regular file takes it all at once; os.write may write less
            view = view[os.write(fd, view):]
        os.close(fd)
        fd = -1
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        Path(tmp).unlink(missing_ok=True)
        raise


def _csv_cells(dtype: Any, column: pa.ChunkedArray) -> Any:
    """A column's cells as ``DataFrame.to_csv`` hands them to :mod:`csv` (pandas 3's
    ``get_values_for_csv`` with its defaults: floats as numpy's ``str``, missing as ""), read
    from its arrow column (``dtype``: the frame's); None for a pairing left to pandas."""
    kind = column.type
    if dtype == np.float64 and pa.types.is_float64(kind):
        numbers = column.to_numpy()
        cells = numbers.astype(str).astype(object)
        cells[np.isnan(numbers)] = ""
        return cells
    if ((dtype == np.bool_ and pa.types.is_boolean(kind))
            or (isinstance(dtype, np.dtype) and dtype.kind in "iu" and pa.types.is_integer(kind))
            or ((dtype == object or isinstance(dtype, pd.StringDtype))
                and (pa.types.is_string(kind) or pa.types.is_large_string(kind)
                     or pa.types.is_null(kind)))):
        return column.to_pylist()  # csv writes None as "", as pandas writes a missing cell
    return None


def _write_csv(frame: pd.DataFrame, arrow: pa.Table | None, out: TextIO) -> None:
    """``frame.to_csv(path, index=False, encoding="utf-8")``'s text, written to ``out`` (a text
    stream that leaves line ends as they are). With ``arrow`` (``frame`` as pyarrow holds it)
    the cells come from it and :mod:`csv` writes them as pandas does (minimal quoting, "\\n"
    lines), without pandas' per-call cost on a table of a few rows; pandas writes a table with
    another dtype, or without ``arrow``."""
    cells = ([_csv_cells(dtype, column) for dtype, column in zip(frame.dtypes, arrow.columns)]
             if arrow is not None and arrow.num_columns == frame.shape[1] else [None])
    names = frame.columns.tolist()  # once, as a list: an Index of arrow strings iterates slowly
    if any(c is None for c in cells) or not all(isinstance(c, str) for c in names):
        frame.to_csv(out, index=False)
        return
    rows = csv.writer(out, lineterminator="\n")
    rows.writerow(names)
    rows.writerows(zip(*cells))


def _write_parquet(tables: Path, name: str, arrow: pa.Table) -> Path:
    """``<name>.parquet`` of ``arrow`` in ``tables``; its path. A table of at most
    :data:`IN_MEMORY_ROWS` rows is made in memory (:func:`_parquet_bytes`) and written in one
    call (:func:`_write_bytes`); a larger one streams to its file."""
    if arrow.num_rows > IN_MEMORY_ROWS:
        parquet_path = tables / f"{name}.parquet"
        _atomic_write(parquet_path, lambda tmp: pq.write_table(arrow, tmp))
        return parquet_path
    return _write_bytes(tables, name, _parquet_bytes(arrow))


def _parquet_bytes(arrow: pa.Table) -> pa.Buffer:
    """The Parquet file of ``arrow``, made in memory."""
    sink = pa.BufferOutputStream()
    pq.write_table(arrow, sink)
    return sink.getvalue()


def _write_bytes(tables: Path, name: str, parquet: pa.Buffer) -> Path:
    """``<name>.parquet`` in ``tables``, of ``parquet``'s bytes (:func:`_atomic_write_bytes`);
    its path."""
    parquet_path = tables / f"{name}.parquet"
    _atomic_write_bytes(parquet_path, parquet)
    return parquet_path


def write_table_csv(bundle_dir: str | os.PathLike[str], name: str, out: TextIO) -> bool:
    """The CSV of table ``name`` (UTF-8 text, no index, full float precision, formula cells
    started with ``'``), made from its Parquet file and written to ``out`` (a text stream that
    leaves line ends as they are): byte for byte the ``tables/<name>.csv`` that the writer
    wrote beside it before it stopped writing CSV copies (issue 40). The rows are read whole;
    the text is written as it is made.

    Returns:
        False when the bundle has no ``tables/<name>.parquet`` (nothing written).

    Raises:
        TableUnreadable: the Parquet file cannot be read, or leads out of the bundle.
    """
    frame = read_table_file(bundle_dir, name)
    if frame is None:
        return False
    arrow = to_arrow(frame)
    # the CSV is for spreadsheets; Parquet stays exact. pyarrow finds the columns to look in
    csv_frame = spreadsheet_safe(frame, formula_columns(arrow))
    # nothing made safe: the arrow table holds the CSV's cells too
    _write_csv(csv_frame, arrow if csv_frame is frame else None, out)
    return True


def table_csv(bundle_dir: str | os.PathLike[str], name: str) -> bytes | None:
    """:func:`write_table_csv`'s text as UTF-8 bytes, held whole (a comparison's; a download
    writes it to a file); None when the bundle has no ``tables/<name>.parquet``.

    Raises:
        TableUnreadable: as :func:`write_table_csv`.
    """
    text = io.StringIO(newline="")
    return text.getvalue().encode("utf-8") if write_table_csv(bundle_dir, name, text) else None


def write_table(bundle_dir: str | os.PathLike[str], name: str, frame: pd.DataFrame) -> Path:
    """Write ``frame`` as ``<bundle_dir>/tables/<name>.parquet`` (its CSV:
    :func:`write_table_csv`).

    Object columns holding only strings (and None/NaN) are stored as Parquet strings; the
    index is not stored. Columns are written in the frame's order; callers pass frames laid
    out by :func:`table_columns`.

    Args:
        bundle_dir: the bundle directory (``tables/`` is created inside it).
        name: table name, e.g. ``columns.TABLE_RUNS``; letters, digits, ``_ . -`` only.
        frame: the table.

    Returns:
        The path of the Parquet file.

    Raises:
        ValueError: a bad table name, or duplicate column names.
        pyarrow.ArrowException (ArrowInvalid / ArrowTypeError): a column mixes types that
            Parquet cannot store (e.g. ints and strings in one object column).
        OSError: the directory is not writable (disk full included); an existing file of the
            same name is left unchanged.
    """
    # plain values: pandas' Index operations cost more here
    tables = _tables_folder(bundle_dir, name, frame.columns.tolist())
    return _write_parquet(tables, name, to_arrow(frame))


def write_columns(bundle_dir: str | os.PathLike[str], name: str,
                  table: Mapping[str, Any] | pd.DataFrame,
                  frame: pd.DataFrame | None = None) -> pd.DataFrame | None:
    """Write ``table`` as :func:`write_table` writes ``pd.DataFrame(table)``, the same bytes,
    without making the frame where its columns convert to Arrow as they are
    (:func:`~profiling_worker.bundle.arrow_frame.columns_to_arrow`; issue 40: the aggregated
    table is on disk before its frame is made).

    Args:
        table: the columns in order (name -> values), or a frame.
        frame: ``pd.DataFrame(table)`` where the caller has made it (written where the columns
            do not convert, instead of a second one).

    Returns:
        The frame where one was made (or given) to write it, else None.

    Raises:
        ValueError, pyarrow.ArrowException, OSError: as :func:`write_table`.
    """
    arrow = None if isinstance(table, pd.DataFrame) else columns_to_arrow(table)
    if arrow is None:
        if frame is None:
            frame = table if isinstance(table, pd.DataFrame) else pd.DataFrame(table)
        write_table(bundle_dir, name, frame)
        return frame
    _write_parquet(_tables_folder(bundle_dir, name, list(table)), name, arrow)
    return None


def _tables_folder(bundle_dir: str | os.PathLike[str], name: str, names: list[Any]) -> Path:
    """``<bundle_dir>/tables``, made where missing, once ``name`` and the column ``names`` are
    checked (:func:`write_table`'s ValueError)."""
    if not _NAME_RE.match(name) or ".." in name:
        raise ValueError(f"table name {name!r} is not a plain file name")
    if len(set(names)) < len(names):
        dup = sorted({str(n) for n in names if names.count(n) > 1})
        raise ValueError(f"table {name}: duplicate column(s) {', '.join(dup)}")
    tables = Path(bundle_dir) / C.TABLES_DIR
    if not tables.is_dir():  # a stat; mkdir of an existing folder raises and catches
        tables.mkdir(parents=True, exist_ok=True)
    return tables


def write_empty_table(bundle_dir: str | os.PathLike[str], name: str,
                      param_names: Sequence[str] = ()) -> pd.DataFrame:
    """Write :func:`empty_table` ``(name, param_names)`` as :func:`write_table` writes it and
    return it. The file's bytes are made once per layout in a process (a warm worker's
    jobs without collectors write the same empty table every time: issue 40, 1 ms a job).

    Raises:
        KeyError: not a table of :func:`table_columns`' layouts.
        OSError: as :func:`write_table`.
    """
    frame = _empty_frame(name, tuple(param_names))
    _write_bytes(_tables_folder(bundle_dir, name, frame.columns.tolist()), name,
                 _empty_table_bytes(name, tuple(param_names)))
    # a shallow copy: copy-on-write keeps the one made once from a caller's changes
    return frame.copy(deep=False)


@functools.lru_cache(maxsize=64)
def _empty_frame(name: str, param_names: tuple[str, ...]) -> pd.DataFrame:
    """:func:`empty_table` ``(name, param_names)``, made once per layout (0.1 ms a job)."""
    return empty_table(name, param_names)


@functools.lru_cache(maxsize=64)
def _empty_table_bytes(name: str, param_names: tuple[str, ...]) -> pa.Buffer:
    """:func:`_parquet_bytes` of :func:`empty_table` ``(name, param_names)``."""
    return _parquet_bytes(to_arrow(_empty_frame(name, param_names)))


def bundle_files(bundle_dir: str | os.PathLike[str], leave_out: Sequence[str] = ()) -> list[str]:
    """Relative paths of every file in the bundle (the manifest excluded), sorted; the
    sub-folders ``leave_out`` (a sweep's task folders) are neither listed nor walked."""
    root = Path(bundle_dir)
    out = []
    for folder, dirs, files in os.walk(root):
        here = Path(folder).relative_to(root)
        dirs[:] = [d for d in dirs if str(here / d) not in leave_out]
        out += [str(here / f) for f in files
                if f != C.MANIFEST_FILE and not f.startswith(".manifest-")]
    return sorted(p.removeprefix("./") for p in out)


def finish_bundle(bundle_dir: str | os.PathLike[str], manifest: dict[str, Any],
                  leave_out: Sequence[str] = (),
                  tables: Mapping[str, pd.DataFrame] | None = None) -> Path:
    """Finalise a bundle: check its tables for plausibility
    (:mod:`profiling_worker.bundle.schema.plausibility`; the notes go under ``"notes"``), name the
    method of the aggregated table's CI95 columns (``"ci95_method"``:
    :data:`profiling_worker.bundle.schema.intervals.CI_METHOD`, lower bounds of non-negative
    quantities cut at 0 as written), list its files and write ``manifest.json`` last, atomically.

    Every bundle, run or imported, ends here, so checks on finished bundles belong here.

    Args:
        tables: every table of the bundle as the caller just wrote it with :func:`write_table`
            (name -> frame; the run path's): checked as given, not read back. None: the
            tables in ``tables/`` are read.

    Returns:
        The path of ``manifest.json``.

    Raises:
        OSError: the directory is not writable (disk full included).
    """
    # Notes the caller already has (the importer's) come first, then the checks of the tables.
    given = [n for n in manifest.get(plausibility.NOTES_KEY) or () if isinstance(n, dict)]
    notes = given + plausibility.check_bundle(
        bundle_tables(bundle_dir) if tables is None else tables, manifest)
    return write_manifest(bundle_dir, {**manifest, plausibility.NOTES_KEY: notes,
                                       CI95_METHOD_KEY: intervals.CI_METHOD,
                                       "files": bundle_files(bundle_dir, leave_out)})


def mark_result_ready(bundle_dir: str | os.PathLike[str], manifest: dict[str, Any]) -> str:
    """Say on disk that the bundle's runs and aggregated tables are written (issue 40: what the
    dashboard draws first, before the other tables, the run audit and the checks): write
    ``manifest.json`` with :data:`RESULT_READY_KEY` now (UTC, ISO) and the status still
    ``running``, atomically as :func:`finish_bundle` writes it (one small write), then set the
    key in ``manifest``, which the final write (:func:`finish_bundle`) keeps. Returns the time
    written.

    Raises:
        OSError: the directory is not writable (disk full included); the old manifest stays.
    """
    at = now_iso()
    write_manifest(bundle_dir, {**manifest, "status": JobStatus.RUNNING.value,
                                RESULT_READY_KEY: at})
    manifest[RESULT_READY_KEY] = at  # set once written: a failed write leaves no claim
    return at


def bundle_tables(bundle_dir: str | os.PathLike[str]) -> dict[str, pd.DataFrame]:
    """The tables a bundle has in Parquet (name -> frame); tables it lacks are left out.

    Raises:
        TableUnreadable: a table file cannot be read, or leads out of the bundle.
    """
    tables = {name: read_table_file(bundle_dir, name) for name in (*C.TABLES, *C.OPTIONAL_TABLES)}
    return {name: frame for name, frame in tables.items() if frame is not None}


__all__ = ["write_table", "write_columns", "write_table_csv", "table_csv", "write_empty_table",
           "table_columns", "empty_table", "bundle_files", "finish_bundle", "mark_result_ready"]
