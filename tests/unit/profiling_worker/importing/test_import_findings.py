"""An independent tester's inputs (tests/fixtures/import_findings, README there): config
parameters found by the columns' names and nsight-python's version, not by their position."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from profiling_worker.bundle_writer import read_table
from profiling_worker.importing import import_nsight_output
from profiling_worker.importing.raw_columns import split_raw_columns
from profiling_worker.schema import columns as C
from profiling_worker.schema.manifest import read_manifest

FINDINGS = Path(__file__).resolve().parents[4] / "tests" / "fixtures" / "import_findings"
FILE = "profiled_data-mm-0.csv"


def _bundle(tmp_path: Path, case: str) -> Path:
    return import_nsight_output([FINDINGS / case / FILE], tmp_path / "store", case)


def _times(bundle: Path) -> pd.DataFrame:
    agg = read_table(bundle, C.TABLE_AGGREGATED)
    return agg[agg[C.METRIC] == C.GPU_TIME].set_index("n")


def _expected(case: str) -> pd.DataFrame:
    """Mean and count of the file's own gpu__time_duration.sum values per n (pandas)."""
    raw = pd.read_csv(FINDINGS / case / FILE)
    return raw[raw["Metric"] == C.GPU_TIME].groupby("n")["Value"].agg(["mean", "size"])


@pytest.mark.parametrize("case", ["1x_ns", "1x_run_collectors", "1x_row_dropped", "value_last"])
def test_parameter_n_is_found_by_name(tmp_path, case):
    bundle = _bundle(tmp_path, case)
    assert read_manifest(bundle)["provenance"]["parameters"] == ["n"]
    times, expected = _times(bundle), _expected(case)
    assert times[C.AVG].tolist() == pytest.approx(expected["mean"].tolist(), rel=1e-12)
    assert times[C.NUM_RUNS].tolist() == expected["size"].tolist()
    assert times.loc[1024, C.AVG] == pytest.approx(61440.0)  # the tester's 61.440 µs
    assert times.loc[1024, C.RSD] == pytest.approx(0.138, abs=5e-4)


def test_row_dropped_keeps_the_other_runs(tmp_path):
    times = _times(_bundle(tmp_path, "1x_row_dropped"))
    assert times[C.NUM_RUNS].to_dict() == {1024: 3, 4096: 2}


def test_run_collectors_are_named_in_the_notes(tmp_path):
    bundle = _bundle(tmp_path, "1x_run_collectors")
    manifest = read_manifest(bundle)
    assert {"gpu_temp_c", "timestamp"} <= set(manifest["provenance"]["collectors"])
    note = next(n for n in manifest["import_notes"] if "info-collector" in n)
    assert "gpu_temp_c" in note and "timestamp" in note
    runs = read_table(bundle, C.TABLE_RUNS)
    assert "timestamp" not in runs.columns and runs[C.CONFIG].nunique() == 2
    coll = read_table(bundle, C.TABLE_COLLECTORS)
    assert len(coll[coll[C.COLLECTOR] == "timestamp"]) == 6  # 2 configs x 3 runs


def _collector_frame() -> pd.DataFrame:
    return pd.read_csv(FINDINGS / "1x_run_collectors" / FILE, dtype=str)


def test_collectors_in_another_order_are_still_collectors():
    """1.1 orders collector columns by a Python set: the time stamp may come first."""
    frame = _collector_frame()
    header = [c for c in frame.columns if c != "timestamp"]
    header.insert(header.index("Unit") + 1, "timestamp")
    split = split_raw_columns(header, frame[header])
    assert split.params == ["n"]
    assert set(split.collectors) == {"gpu_temp_c", "timestamp"}


def test_two_parameters_of_single_runs_are_not_taken_for_collectors():
    """runs=1 and two parameters: n differs on every row of a dtype, yet it is a parameter."""
    frame = _collector_frame().drop(columns=["gpu_temp_c", "timestamp"])
    frame["dtype"] = ["f16", "f32", "bf16"] * 2
    header = list(frame.columns)
    split = split_raw_columns(header, frame)
    assert split.params == ["n", "dtype"] and split.collectors == {}


def test_files_without_unit_take_every_other_column_as_parameter():
    frame = pd.read_csv(FINDINGS / "value_last" / FILE, dtype=str)
    split = split_raw_columns(list(frame.columns), frame)
    assert split.params == ["n"] and split.collectors == {}
