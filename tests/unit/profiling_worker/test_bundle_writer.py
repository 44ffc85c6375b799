"""write_table: parquet + csv, same rows, atomic replace, layouts."""

from __future__ import annotations

import pandas as pd
import pytest

from profiling_worker.bundle_writer import empty_table, read_table, table_columns, write_table
from profiling_worker.schema import columns as C


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
    csv = pd.read_csv(tmp_path / C.TABLES_DIR / "runs.csv")
    assert list(csv.columns) == list(frame.columns)
    assert csv[C.VALUE].iloc[1] == frame[C.VALUE].iloc[1]  # full float precision
    assert csv[C.ANNOTATION].iloc[2] == "µ-kernel ✓"


def test_replaces_and_leaves_no_temporary_files(tmp_path):
    write_table(tmp_path, C.TABLE_RUNS, sample_runs())
    write_table(tmp_path, C.TABLE_RUNS, sample_runs().head(1))
    assert len(read_table(tmp_path, C.TABLE_RUNS)) == 1
    names = sorted(p.name for p in (tmp_path / C.TABLES_DIR).iterdir())
    assert names == ["runs.csv", "runs.parquet"]


def test_failed_write_keeps_the_old_file(tmp_path):
    write_table(tmp_path, C.TABLE_RUNS, sample_runs())
    bad = sample_runs().astype({C.VALUE: object})
    bad.loc[0, C.VALUE] = "text"  # ints/strings mixed in one column: Parquet refuses
    with pytest.raises(Exception):
        write_table(tmp_path, C.TABLE_RUNS, bad)
    assert len(read_table(tmp_path, C.TABLE_RUNS)) == 3
    assert sorted(p.name for p in (tmp_path / C.TABLES_DIR).iterdir()) == \
        ["runs.csv", "runs.parquet"]


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


def test_layouts_match_columns_module_docstring():
    assert table_columns(C.TABLE_RUNS, ["n"]) == [
        "Annotation", "Config", "n", "Run", "Metric", "Value", "Unit", "Kernels", "CombineRule"]
    assert table_columns(C.TABLE_LAUNCHES, ["m", "k"])[:4] == ["Annotation", "Config", "m", "k"]
    with pytest.raises(KeyError):
        table_columns("nope")
