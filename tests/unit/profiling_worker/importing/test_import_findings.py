"""An independent tester's inputs (tests/fixtures/import_findings, README there): config
parameters found by the columns' names and nsight-python's version, not by their position."""

from __future__ import annotations

import itertools
from pathlib import Path

import pandas as pd
import pytest

from profiling_worker.bundle.loader import read_table
from profiling_worker.importing import ImportFailed, import_nsight_output
from profiling_worker.importing.raw_columns import split_raw_columns
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import read_manifest
from tests.scenarios import SCENARIOS

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


@pytest.mark.parametrize("case", ["1x_ns", "1x_run_collectors", "1x_row_dropped", "value_last",
                                  "index_resave", "1x_temperature"])
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


def test_a_collector_that_never_repeats_within_a_config_is_no_parameter(tmp_path):
    """Issue 35: gpu_temp_c rises a degree a run (45, 46, 47 / 46, 47, 48); as a parameter it
    would make every row a config of one run, tied on missing runs with `n` alone."""
    manifest = read_manifest(_bundle(tmp_path, "1x_temperature"))
    assert manifest["provenance"]["parameters"] == ["n"]
    note = next(n for n in manifest["import_notes"] if "info-collector" in n)
    assert "gpu_temp_c" in note and "changes from run to run within a config of n" in note


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


def test_usecond_durations_are_converted_to_ns(tmp_path):
    """The same runs written in usecond and in ns give the same bundle values, in ns."""
    micro, nano = _bundle(tmp_path, "1x_usecond"), _bundle(tmp_path, "1x_ns")
    times = _times(micro)
    assert set(times[C.UNIT]) == {"ns"}
    for column in (C.AVG, C.STD, C.MIN, C.MAX, C.CI95_LOWER, C.CI95_UPPER, C.RSD):
        assert times[column].tolist() == pytest.approx(_times(nano)[column].tolist(), rel=1e-9)
    assert times.loc[1024, C.AVG] == pytest.approx(61440.0)  # not 61.44 read as ns
    assert times.loc[4096, C.CI95_LOWER] == pytest.approx(2680354, abs=1)
    notes = read_manifest(micro)["import_notes"]
    assert any(n.startswith(f"{C.GPU_TIME}: {FILE}: values in usecond converted") for n in notes)


def _relabelled(tmp_path: Path, metric: str, unit: str, scale: float) -> Path:
    """The 1x_ns runs under another metric name and unit (values divided by ``scale``)."""
    raw = pd.read_csv(FINDINGS / "1x_ns" / FILE)
    raw["Metric"], raw["Unit"], raw["Value"] = metric, unit, raw["Value"] / scale
    path = tmp_path / unit.replace("/", "_") / FILE
    path.parent.mkdir()
    raw.to_csv(path, index=False)
    return path


def test_kbyte_values_are_converted_to_bytes(tmp_path):
    metric = "dram__bytes_read.sum"
    paths = [_relabelled(tmp_path, metric, u, f) for u, f in (("Kbyte", 1e3), ("byte", 1.0))]
    kilo, plain = (read_table(import_nsight_output([p], tmp_path / "s", p.parent.name),
                              C.TABLE_AGGREGATED) for p in paths)
    assert set(kilo[C.UNIT]) == {"byte"}
    assert kilo[C.AVG].tolist() == pytest.approx(plain[C.AVG].tolist(), rel=1e-12)


def test_a_duration_in_an_unknown_unit_is_refused_by_name(tmp_path):
    path = _relabelled(tmp_path, C.GPU_TIME, "psecond", 1e-3)
    with pytest.raises(ImportFailed, match="psecond") as exc:
        import_nsight_output([path], tmp_path / "s", "ps")
    assert C.GPU_TIME in exc.value.message and "usecond" in exc.value.message  # the units expected


def test_other_unknown_units_are_kept_with_a_note(tmp_path):
    path = _relabelled(tmp_path, "dram__bytes_read.sum", "Kbyte/block", 1.0)
    bundle = import_nsight_output([path], tmp_path / "s", "kb")
    assert set(read_table(bundle, C.TABLE_RUNS)[C.UNIT]) == {"Kbyte/block"}
    notes = read_manifest(bundle)["import_notes"]
    assert any(n.startswith("dram__bytes_read.sum:") and "Kbyte/block is not one" in n
               for n in notes)


def test_thousands_separators_are_read_as_in_ncu_csvs(tmp_path):
    """``"61,344"`` and ``"2,682,112.00"`` are the numbers of 1x_ns, not 'not a number'."""
    times, plain = _times(_bundle(tmp_path, "thousands")), _times(_bundle(tmp_path, "1x_ns"))
    assert times[C.AVG].tolist() == pytest.approx(plain[C.AVG].tolist(), rel=1e-12)
    assert times.loc[1024, C.AVG] == pytest.approx(61440.0)


def test_a_cell_that_only_looks_grouped_is_still_refused(tmp_path):
    path = tmp_path / FILE
    text = (FINDINGS / "thousands" / FILE).read_text().replace('"61,344"', '"61,34"')
    path.write_text(text)
    with pytest.raises(ImportFailed, match="'61,34' is not a number"):
        import_nsight_output([path], tmp_path / "s", "bad")


def test_import_messages_count_data_rows_from_one(tmp_path):
    """New-user trial: "column AvgValue, data row 2: 'notanumber' is not a number" named the
    first data row (line 2 of the file). Every import message counts data rows from 1."""
    lines = (FINDINGS / "1x_ns" / FILE).read_text().splitlines(keepends=True)
    for row, cell, fault in ((1, ",61344.0,", "'notanumber' is not a number"),
                             (2, ",gpu__time_duration.sum,", "column Metric is empty")):
        path = tmp_path / str(row) / FILE
        path.parent.mkdir()
        lines_now = list(lines)
        lines_now[row] = lines_now[row].replace(cell, ",notanumber," if row == 1 else ",,", 1)
        path.write_text("".join(lines_now))
        with pytest.raises(ImportFailed) as failed:
            import_nsight_output([path], tmp_path / str(row) / "s", "bad")
        assert fault in str(failed.value), failed.value
        assert f"data row {row} (counted from 1 under the header)" in str(failed.value)


def test_a_pandas_index_column_is_dropped_with_a_note(tmp_path):
    bundle = _bundle(tmp_path, "index_resave")
    runs = read_table(bundle, C.TABLE_RUNS)
    assert "_index" not in runs.columns and "Unnamed: 0" not in runs.columns
    notes = read_manifest(bundle)["import_notes"]
    assert f"{FILE}: its first column has no name and holds row numbers" in " ".join(notes)


def test_an_unnamed_first_column_of_other_values_is_refused(tmp_path):
    path = tmp_path / FILE
    raw = pd.read_csv(FINDINGS / "1x_ns" / FILE)
    raw.index = [f"row{i}" for i in range(len(raw))]
    raw.to_csv(path)
    with pytest.raises(ImportFailed, match="empty column name"):
        import_nsight_output([path], tmp_path / "s", "bad")


def test_run_collectors_shared_by_the_metrics_of_a_run():
    """The 0.9.6 reference (3 metrics per run) in 1.1's layout with RUN-scope time stamp and
    temperature, one run missing: n is the parameter, both others collectors."""
    ref = FINDINGS.parent / "reference" / "h200-nsight-0.9.6-matmul" / FILE
    raw = pd.read_csv(ref)
    raw.insert(raw.columns.get_loc("MemoryClock") + 1, "Unit", "ns")
    run = pd.RangeIndex(len(raw)) // raw["Metric"].nunique()
    raw.insert(raw.columns.get_loc("Unit") + 1, "ts", 1.7e9 + run * 0.37)
    raw.insert(raw.columns.get_loc("Unit") + 1, "temp", 45 + run // 2)
    frame = raw.iloc[:-1].astype(str).astype("category")  # as parse_csv reads it
    split = split_raw_columns(list(frame.columns), frame)
    assert split.params == ["n"] and set(split.collectors) == {"temp", "ts"}


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_real_1_1_collectors_are_told_by_their_values_in_any_order(tmp_path, order):
    """nsight-python 1.1 writes collector columns in the order of a Python set (another order
    in every process). The H200 per-run rows of a 1.1 CUPTI job (3 configs x 30 runs; sm_clock
    and temperature constant, power changing within n=256) with the collectors under names of
    the user's own (not this project's) in every order: n is the parameter each time."""
    job = SCENARIOS / "h200-cupti-stability"
    raw = pd.concat([pd.read_csv(job / "nsight" / c / "profiled_data-profiled-0.csv", dtype=str)
                     for c in ("c0", "c1", "c2")], ignore_index=True)
    names = {"sm_clock": "gpu_clock_mhz", "temperature": "gpu_temp", "power": "board_power_w"}
    raw = raw.rename(columns=names)
    custom = [list(names.values())[i] for i in order]
    fixed = [c for c in raw.columns if c not in names.values() and c != "n"]
    path = tmp_path / "profiled_data-profiled-0.csv"
    raw[[*fixed, *custom, "n"]].to_csv(path, index=False)
    bundle = import_nsight_output([path], tmp_path / "s", "c")
    manifest = read_manifest(bundle)
    assert manifest["provenance"]["parameters"] == ["n"]
    assert set(manifest["provenance"]["collectors"]) == set(names.values())
    times = read_table(bundle, C.TABLE_AGGREGATED).set_index("n")
    assert times[C.NUM_RUNS].to_dict() == {256: 30, 1024: 30, 8192: 30}
    note = next(n for n in manifest["import_notes"] if "info-collector" in n)
    assert "board_power_w (changes from run to run within a config of n)" in note
    assert "gpu_temp (one value in the whole file" in note


@pytest.mark.parametrize("name, drop, kind", [
    ("profiled_data-matmul-0.csv", C.METRIC, "nsight-python's per-run CSV (profiled_data)"),
    ("processed_data-matmul-0.csv", C.METRIC,
     "nsight-python's aggregated CSV (processed_data)"),
    ("profiled_data-matmul-0.csv", C.VALUE, "nsight-python's per-run CSV (profiled_data)"),
])
def test_a_csv_missing_one_required_column_names_it(tmp_path: Path, name: str, drop: str,
                                                    kind: str) -> None:
    """nsight-python 0.9.6's CSVs from the H200 with one required column removed (a new user
    removed Metric and got the generic "neither nsight-python's nor Nsight Compute's")."""
    src = Path(__file__).resolve().parents[4] / "tests" / "fixtures" / "h200_import" / \
        "nspy096" / "derived" / name
    cut = tmp_path / name
    pd.read_csv(src).drop(columns=[drop]).to_csv(cut, index=False)
    with pytest.raises(ImportFailed) as err:
        import_nsight_output([cut], tmp_path / "store", "cut")
    said = str(err.value)
    assert f"a table like {kind}" in said and f"but without its {drop} column" in said, said


#: nsight-python 1.1.0's two CSVs of one call (CUPTI, with info collectors), recorded on the H200.
CUPTI_11 = FINDINGS.parent / "h200_import" / "nspy110_cupti"
ADVICE = "the processed_data CSV of the same call names the parameters exactly"


def _collector_notes(tmp_path: Path, names: list[str]) -> list[str]:
    bundle = import_nsight_output([CUPTI_11 / n for n in names], tmp_path, "c")
    return [n["message"] for n in read_manifest(bundle)["notes"]
            if "info-collector values" in n["message"]]


def test_the_processed_data_advice_only_when_that_csv_was_not_given(tmp_path: Path) -> None:
    # issue 37: both CSVs uploaded together still advised importing the processed_data CSV
    (both,) = _collector_notes(tmp_path / "both", ["profiled_data-profiled-0.csv",
                                                   "processed_data-profiled-0.csv"])
    assert "sm_clock" in both and ADVICE not in both
    (alone,) = _collector_notes(tmp_path / "alone", ["profiled_data-profiled-0.csv"])
    assert ADVICE in alone


def test_an_imported_negative_duration_is_named_and_its_interval_cut(tmp_path):
    """A new user's find: a processed_data row ``fp32,64,gpu__time_duration.sum,-5,3,10`` made a
    "done" job without a note, its CI95 -7.15 .. -2.85 ns though the Import page says CI95 is
    cut at 0 for quantities that cannot be negative. The plausibility notes now name the row
    and its value (a warning every page drawing the metric shows), and the interval, wholly
    below 0, is none (a duration cannot be negative: no interval of possible values)."""
    from profiling_worker.bundle.schema import plausibility as P

    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "processed_data-x-0.csv").write_text(
        "Annotation,n,Metric,AvgValue,StdDev,NumRuns\n"
        "fp32,64,gpu__time_duration.sum,-5,3,10\nfp32,128,gpu__time_duration.sum,4,10,10\n")
    job = import_nsight_output([folder], tmp_path / "store", "negative")
    manifest = read_manifest(job)
    assert manifest["status"] == "done"
    notes = [n for n in manifest[P.NOTES_KEY] if n["check"] == P.NEGATIVE_VALUE]
    assert [(n["severity"], n["annotation"], n["config"], n["metric"]) for n in notes] == [
        (P.WARNING, "fp32", 0, C.GPU_TIME)]
    assert "gpu__time_duration.sum reads -5 ns" in notes[0]["message"]
    agg = read_table(job, C.TABLE_AGGREGATED).set_index("n")
    assert agg.loc[64, [C.CI95_LOWER, C.CI95_UPPER]].isna().all()
    assert agg.loc[128, C.CI95_LOWER] == 0 and agg.loc[128, C.CI95_UPPER] > 4  # cut at 0
