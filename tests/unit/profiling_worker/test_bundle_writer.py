"""write_table: the Parquet file (its CSV made on demand, the same rows), atomic replace,
layouts."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from profiling_worker.bundle.writer import (empty_table, table_columns, table_csv,
                                            write_empty_table, write_table)
from profiling_worker.bundle.loader import read_table
from profiling_worker.bundle.schema import columns as C


def sample_runs():
    return pd.DataFrame({
        C.ANNOTATION: ["matmul", "matmul", "µ-kernel ✓"],
        C.CONFIG: [0, 0, 1],
        "n": [1024, 1024, 4096],
        C.RUN: [0, 1, 0],
        C.METRIC: [C.GPU_TIME] * 3,
        C.VALUE: [61344.0, 61472.123456789012, float("nan")],
        C.UNIT: ["ns", "ns", None],
        C.KERNELS: [1, 1, 2],
        C.COMBINE_RULE: ["single", "single", "sum"],
    })


def test_round_trip_parquet_and_csv(tmp_path):
    frame = sample_runs()
    path = write_table(tmp_path, C.TABLE_RUNS, frame)
    assert path == tmp_path / C.TABLES_DIR / "runs.parquet"
    back = read_table(tmp_path, C.TABLE_RUNS)
    pd.testing.assert_frame_equal(back, frame)
    csv = pd.read_csv(io.BytesIO(table_csv(tmp_path, C.TABLE_RUNS) or b""))
    assert list(csv.columns) == list(frame.columns)
    assert csv[C.VALUE].iloc[1] == frame[C.VALUE].iloc[1]  # full float precision
    assert csv[C.ANNOTATION].iloc[2] == "µ-kernel ✓"


def test_replaces_and_leaves_no_temporary_files(tmp_path):
    write_table(tmp_path, C.TABLE_RUNS, sample_runs())
    write_table(tmp_path, C.TABLE_RUNS, sample_runs().head(1))
    assert len(read_table(tmp_path, C.TABLE_RUNS)) == 1
    names = sorted(p.name for p in (tmp_path / C.TABLES_DIR).iterdir())
    assert names == ["runs.parquet"]  # no CSV copy (issue 40)


def test_failed_write_keeps_the_old_file(tmp_path):
    write_table(tmp_path, C.TABLE_RUNS, sample_runs())
    bad = sample_runs().astype({C.VALUE: object})
    bad.loc[0, C.VALUE] = "text"  # ints/strings mixed in one column: Parquet refuses
    with pytest.raises(Exception):
        write_table(tmp_path, C.TABLE_RUNS, bad)
    assert len(read_table(tmp_path, C.TABLE_RUNS)) == 3
    assert sorted(p.name for p in (tmp_path / C.TABLES_DIR).iterdir()) == ["runs.parquet"]


@pytest.mark.parametrize("name", ["../evil", "a/b", "", ".hidden", "x" * 200])
def test_rejects_bad_names(tmp_path, name):
    with pytest.raises(ValueError):
        write_table(tmp_path, name, sample_runs())


def test_rejects_duplicate_columns(tmp_path):
    frame = pd.DataFrame([[1, 2]], columns=["a", "a"])
    with pytest.raises(ValueError, match="duplicate"):
        write_table(tmp_path, "x", frame)


@pytest.mark.parametrize("name", C.TABLES)
def test_empty_tables_have_the_schema_layout(tmp_path, name):
    frame = empty_table(name, ["n", "dtype_"])
    assert list(frame.columns) == table_columns(name, ["n", "dtype_"])
    write_table(tmp_path, name, frame)
    back = read_table(tmp_path, name)
    assert list(back.columns) == list(frame.columns) and back.empty


@pytest.mark.parametrize("params", [(), ("n",), ("-m", "=k")])
def test_an_empty_table_written_from_made_bytes_is_write_tables_files(tmp_path, params):
    """write_empty_table makes the file's bytes once per layout (issue 40): every write of it,
    the first and the later ones, gives the file write_table gives, byte for byte (Parquet
    metadata included, so its CSV's spreadsheet-safe names too), and returns the empty
    table."""
    write_table(tmp_path / "by_write_table", C.TABLE_COLLECTORS,
                empty_table(C.TABLE_COLLECTORS, params))
    for i in range(2):
        frame = write_empty_table(tmp_path / f"made-{i}", C.TABLE_COLLECTORS, params)
        pd.testing.assert_frame_equal(frame, empty_table(C.TABLE_COLLECTORS, params))
        assert (sorted(p.name for p in (tmp_path / f"made-{i}" / C.TABLES_DIR).iterdir())
                == [f"{C.TABLE_COLLECTORS}.parquet"])
        name = f"{C.TABLE_COLLECTORS}.parquet"
        assert ((tmp_path / f"made-{i}" / C.TABLES_DIR / name).read_bytes()
                == (tmp_path / "by_write_table" / C.TABLES_DIR / name).read_bytes())
    with pytest.raises(KeyError):
        write_empty_table(tmp_path, "../x")


def test_layouts_match_columns_module_docstring():
    assert table_columns(C.TABLE_RUNS, ["n"]) == [
        "Annotation", "Config", "n", "Run", "Metric", "Value", "Unit", "Kernels", "CombineRule"]
    assert table_columns(C.TABLE_LAUNCHES, ["m", "k"])[:4] == ["Annotation", "Config", "m", "k"]
    with pytest.raises(KeyError):
        table_columns("nope")


def test_written_aggregated_table_holds_cut_lower_bounds_and_names_the_method(tmp_path):
    """Issue 34: a downloaded table holds what the pages show. The runs of an H200 bundle
    recorded before the cut (h200-ncu-elementwise-cache-none's dram__bytes_write.sum, whose
    stored CI95_Lower reads -211 bytes), aggregated and written by the worker today: 0 in both
    the parquet and the CSV, and the manifest names the method."""
    import json

    from profiling_worker.bundle.writer import CI95_METHOD_KEY, finish_bundle
    from profiling_worker.bundle.stats.aggregate import aggregate_runs
    from profiling_worker.bundle.schema import intervals
    from tests.scenarios import scenario_dir

    src = scenario_dir("h200-ncu-elementwise-cache-none")
    runs = read_table(src, C.TABLE_RUNS)
    stored = read_table(src, C.TABLE_AGGREGATED)
    assert stored[C.CI95_LOWER].min() < -200
    agg = aggregate_runs(runs, ["n"])
    write_table(tmp_path, C.TABLE_AGGREGATED, agg)
    for back in (read_table(tmp_path, C.TABLE_AGGREGATED),
                 pd.read_csv(io.BytesIO(table_csv(tmp_path, C.TABLE_AGGREGATED) or b""))):
        writes = back[back[C.METRIC] == "dram__bytes_write.sum"]
        assert (writes[C.CI95_LOWER] >= 0).all() and (writes[C.CI95_LOWER] == 0).sum() >= 4
    finish_bundle(tmp_path, {"job_id": "j"}, tables={C.TABLE_AGGREGATED: agg})
    manifest = json.loads((tmp_path / C.MANIFEST_FILE).read_text())
    assert manifest[CI95_METHOD_KEY] == intervals.CI_METHOD


def _recorded_and_odd_frames() -> tuple[list[pd.DataFrame], pd.DataFrame]:
    """Every table of the recorded scenario bundles plus a frame of odd cells (quotes, commas,
    a line break, None, non-ASCII, a formula, -0.0, 1e16, NaN) in the dtypes a table can have
    (float32, category, nullable Int64, all-None, no rows); and that odd frame."""
    import math

    from tests.scenarios import SCENARIOS

    frames = [pd.read_parquet(p) for p in sorted(SCENARIOS.glob("*/tables/*.parquet"))]
    odd = pd.DataFrame({
        C.ANNOTATION: ['he said "hi"', "a,b", "line\nbreak", None, "µ ✓", "=1+1", "plain"],
        C.VALUE: [-0.0, 1e16, 1e-5, math.nan, 0.1 + 0.2, 123456789.0, -1.5e-300],
        C.RUN: [1, -2, 3, 4, 5, 6, 7], C.STABLE: [True, False, True, True, False, True, False]})
    frames += [odd, odd.iloc[:0], odd.assign(Empty=None), odd.astype({C.VALUE: "float32"}),
               odd.astype({C.ANNOTATION: "category"}), odd.astype({C.RUN: "Int64"})]
    return frames, odd


def test_the_csv_is_pandas_to_csv_byte_for_byte(tmp_path):
    """The CSV made from write_table's Parquet file (issue 40: on demand) is written with csv
    from the arrow table's cells: the bytes of pandas' to_csv of the spreadsheet-safe frame
    given to write_table, for every table of every recorded bundle and frames with quotes,
    commas, line breaks, non-ASCII, NaN, None, -0.0, 1e16, float32, category, nullable and
    all-None columns, formula cells and no rows."""

    from profiling_worker.bundle.spreadsheet import spreadsheet_safe

    frames, odd = _recorded_and_odd_frames()
    frames += [odd.iloc[[0, 1, 2, 3, 4, 6]], odd.astype({C.ANNOTATION: "string"})]
    assert len(frames) > 150
    for frame in frames:
        write_table(tmp_path, "t", frame)
        spreadsheet_safe(frame).to_csv(tmp_path / "pandas.csv", index=False, encoding="utf-8")
        assert table_csv(tmp_path, "t") == (tmp_path / "pandas.csv").read_bytes(), frame.dtypes


def test_the_csv_reads_the_column_names_as_a_list_not_through_the_index(monkeypatch):
    """Issue 40: pandas 3's column labels are an Index of arrow strings, which iterates one
    pyarrow scalar at a time (about 1 us a name); the CSV's writer and the spreadsheet check
    take the names as a list once. The text is the same (the byte tests above)."""
    import io

    from profiling_worker.bundle import writer
    from profiling_worker.bundle.arrow_frame import to_arrow
    from profiling_worker.bundle.spreadsheet import spreadsheet_safe

    frame = sample_runs()
    arrow = to_arrow(frame)

    def refused(index):
        raise AssertionError("the column Index was iterated")

    with monkeypatch.context() as m:
        m.setattr(pd.Index, "__iter__", refused)
        assert spreadsheet_safe(frame, []) is frame
        out = io.StringIO(newline="")
        writer._write_csv(frame, arrow, out)
    assert out.getvalue() == frame.to_csv(index=False)


def test_a_table_made_in_memory_gives_the_file_a_streamed_one_gives(tmp_path, monkeypatch):
    """Issue 40: a table of at most IN_MEMORY_ROWS rows is made in memory and written in one
    call; the bytes are those of the streamed writer (pyarrow's file) that larger tables keep,
    for every table of the recorded bundles and the writer's odd frames."""
    from profiling_worker.bundle import writer
    from tests.scenarios import SCENARIOS

    frames = [pd.read_parquet(p) for p in sorted(SCENARIOS.glob("*/tables/*.parquet"))[:60]]
    frames += [sample_runs(), sample_runs().iloc[:0],
               sample_runs().assign(**{C.ANNOTATION: ["=1+1", "a,b", None]})]
    for i, frame in enumerate(frames):
        write_table(tmp_path / "memory", f"t{i}", frame)
        with monkeypatch.context() as m:
            m.setattr(writer, "IN_MEMORY_ROWS", -1)
            write_table(tmp_path / "streamed", f"t{i}", frame)
    for path in sorted((tmp_path / "memory" / C.TABLES_DIR).iterdir()):
        assert path.read_bytes() == (tmp_path / "streamed" / C.TABLES_DIR / path.name
                                     ).read_bytes(), path.name


def test_a_failed_rename_leaves_the_old_file_and_no_temporary_one(tmp_path, monkeypatch):
    import os

    write_table(tmp_path, C.TABLE_RUNS, sample_runs())
    before = (tmp_path / C.TABLES_DIR / "runs.parquet").read_bytes()

    def full(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(OSError):
        write_table(tmp_path, C.TABLE_RUNS, sample_runs().head(1))
    assert sorted(p.name for p in (tmp_path / C.TABLES_DIR).iterdir()) == ["runs.parquet"]
    assert (tmp_path / C.TABLES_DIR / "runs.parquet").read_bytes() == before


def test_the_arrow_table_is_pyarrows_from_pandas_with_its_metadata():
    """Issue 40: to_arrow builds the table the Parquet file is written from column by column;
    it equals pa.Table.from_pandas(frame, preserve_index=False), the pandas schema metadata
    included, on every table of the recorded bundles and frames of every other kind (float32,
    uint8, category, nullable, all-None, object and arrow strings, timestamps, an index, a long
    table); a column pyarrow refuses raises what from_pandas raises. Both ways are taken: the
    recorded tables are converted column by column (own_columns) but for the long ones, which
    from_pandas converts on threads; so are the odd frames of numpy, object and arrow-string
    columns, the others by from_pandas."""

    import numpy as np
    import pyarrow as pa

    from profiling_worker.bundle.arrow_frame import (_THREADED_ROWS_PER_COLUMN, own_columns,
                                                     to_arrow)

    frames, odd = _recorded_and_odd_frames()
    frames += [odd.astype({C.ANNOTATION: "string"}), odd.astype({C.ANNOTATION: object}),
               odd.astype({C.RUN: "uint8"}), odd.assign(T=pd.Timestamp("2020-01-01")),
               odd.set_index(C.RUN), odd.iloc[::-1], odd.assign(F=np.float16(1)),
               pd.concat([odd] * 200, ignore_index=True), sample_runs()]
    assert len(frames) > 150
    recorded = frames[:-15]  # _recorded_and_odd_frames' 6 odd frames and the 9 above follow
    assert [own_columns(frame) is None for frame in recorded] == [
        len(frame) > _THREADED_ROWS_PER_COLUMN * frame.shape[1] for frame in recorded]
    # odd, no rows, all-None, float32, category, Int64; string, object, uint8, timestamp,
    # an index, reversed, float16, long, sample_runs
    assert [own_columns(frame) is None for frame in frames[-15:]] == [
        False, False, False, False, True, True, False, False, False, True, False, False, True,
        True, False]
    for frame in frames:
        ours, theirs = to_arrow(frame), pa.Table.from_pandas(frame, preserve_index=False)
        assert ours.equals(theirs, check_metadata=True), frame.dtypes
        assert ours.schema.metadata == theirs.schema.metadata
    mixed = odd.assign(M=[1, "a", 2, 3, 4, 5, 6])
    with pytest.raises(pa.ArrowException) as ours_error:
        to_arrow(mixed)
    with pytest.raises(pa.ArrowException) as theirs_error:
        pa.Table.from_pandas(mixed, preserve_index=False)
    assert str(ours_error.value) == str(theirs_error.value)


def test_write_columns_writes_the_bytes_write_table_writes_of_their_frame(tmp_path):
    """Issue 40 (session 27): the run path writes runs and aggregated from their columns
    (runs_columns, aggregated_columns) without making a frame first; the Parquet file is byte
    for byte write_table's of ``pd.DataFrame(columns)``, on every recorded bundle's launches and
    on columns of every plain kind (numpy numbers and bools, pandas' numpy-backed and
    arrow-string arrays, object Series, lists of strings). Other columns (a list with None, a
    category, an Index) make the frame, which is returned."""
    import numpy as np

    from profiling_worker.bundle.arrow_frame import _THREADED_ROWS_PER_COLUMN
    from profiling_worker.bundle.loader import read_table_file
    from profiling_worker.bundle.stats.aggregate import (aggregated_columns, as_frame,
                                                         runs_columns)
    from profiling_worker.bundle.writer import write_columns
    from tests.scenarios import SCENARIOS

    tables = []
    for bundle in sorted(p.parent.parent for p in SCENARIOS.glob("*/tables/launches.parquet")):
        runs = runs_columns(read_table_file(bundle, C.TABLE_LAUNCHES))
        tables += [runs, aggregated_columns(as_frame(runs))]
    assert len(tables) > 20
    plain = {"A": pd.array(["x", None, "µ ✓"], dtype="str"),
             "I": pd.Series([1, 2, 3]).array, "F": np.array([0.1, np.nan, -0.0]),
             "B": np.array([True, False, True]), "O": pd.Series(["ns", None, "%"], dtype=object),
             "L": ["single", "sum", "mean"]}
    odd = [{**plain, "L": ["a", None, "b"]}, {**plain, "C": pd.Categorical(["a", "b", "a"])},
           {**plain, "X": pd.Index(["a", "b", "c"])}]
    for i, table in enumerate([*tables, plain, *odd]):
        made = write_columns(tmp_path / f"columns-{i}", "t", table)
        frame = as_frame(table)
        write_table(tmp_path / f"frame-{i}", "t", frame)
        assert ((tmp_path / f"columns-{i}/tables/t.parquet").read_bytes()
                == (tmp_path / f"frame-{i}/tables/t.parquet").read_bytes()), i
        # a dict of plain columns is written without a frame but for a long one (from_pandas
        # converts it on threads); the others make theirs
        assert (made is None) == (isinstance(table, dict) and i <= len(tables) and len(frame)
                                  <= _THREADED_ROWS_PER_COLUMN * frame.shape[1]), i
        if made is not None:
            pd.testing.assert_frame_equal(made, frame)
    # a frame the caller has is the one written where the columns do not convert
    given = as_frame(odd[0])
    assert write_columns(tmp_path / "given", "t", odd[0], given) is given
