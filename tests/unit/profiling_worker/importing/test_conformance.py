"""Issue 10's cases 1-10 on real files: the values each import must produce, and its messages.

Inputs: tests/fixtures/h200_import (recorded on the H200, README there), tests/fixtures/
import_cases (shared cases, README there), the h200-ncu-j1-fp16 scenario's report (tests/fixtures/bundles).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from profiling_worker.bundle.loader import read_table
from profiling_worker.bundle.errors import ImportFailed, ImportInternalError
from profiling_worker.importing import import_nsight_output
from profiling_worker.importing import nsight_values
from profiling_worker.importing.refusals import HINT_IMPORTABLE
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import read_manifest
from tests.scenarios import SCENARIOS, scenario_report

FIX = Path(__file__).resolve().parents[4] / "tests" / "fixtures"
H200 = FIX / "h200_import"
PLAIN = H200 / "ncu_plain"
NSPY = H200 / "nspy096"
CASES = FIX / "import_cases"
J1 = scenario_report("h200-ncu-j1-fp16")
DRAM_PCT = "dram__throughput.avg.pct_of_peak_sustained_elapsed"
SM_PCT = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
CLOCK = "gpc__cycles_elapsed.avg.per_second"
MUL = "vectorized_elementwise_kernel (MulFunctor)"
ADD = "vectorized_elementwise_kernel (CUDAFunctor_add)"


def _import(tmp_path: Path, *sources: Path, name: str = "job") -> Path:
    return import_nsight_output(list(sources), tmp_path / "store", name)


def _agg(bundle: Path, metric: str) -> pd.DataFrame:
    agg = read_table(bundle, C.TABLE_AGGREGATED)
    return agg[agg[C.METRIC] == metric].reset_index(drop=True)


def _raw_page_times(path: Path) -> dict[str, list[float]]:
    """Per-kernel gpu__time_duration.sum of an ncu raw-page export, in ns (independent
    parse with pandas: the units row gives the scale)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    frame = pd.read_csv(path, dtype=str, skiprows=start)
    unit = frame[C.GPU_TIME].iloc[0]
    scale = {"ns": 1.0, "us": 1e3, "ms": 1e6}[unit]
    data = frame.iloc[1:]
    out: dict[str, list[float]] = {}
    for kernel, value in zip(data["Kernel Name"], data[C.GPU_TIME]):
        out.setdefault(kernel, []).append(float(value.replace(",", "")) * scale)
    return out


# --- case 1: a plain report, no NVTX ------------------------------------------------------

@pytest.fixture(scope="module")
def plain_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return import_nsight_output([PLAIN / "plain.ncu-rep.gz"], tmp_path_factory.mktemp("s"), "p")


def test_case1_plain_report_regions_are_kernels_and_launches_are_runs(plain_report: Path):
    t = _agg(plain_report, C.GPU_TIME).set_index(C.ANNOTATION)
    assert set(t.index) == {MUL, ADD, "nvjet_sm90_hsh_128x64_64x8_1x2_h_bz_NNT",
                            "distribution_elementwise_grid_stride_kernel (#1)",
                            "distribution_elementwise_grid_stride_kernel (Half)"}
    assert t.loc[MUL, C.NUM_RUNS] == 3 and t.loc[ADD, C.NUM_RUNS] == 3  # 3 iterations of a+b*c
    # The report's durations are the ones ncu exported from it, launch for launch.
    exported = _raw_page_times(PLAIN / "raw_units_base.csv")
    launches = read_table(plain_report, C.TABLE_LAUNCHES)
    mul = launches[(launches[C.ANNOTATION] == MUL) & (launches[C.METRIC] == C.GPU_TIME)]
    expected = next(v for k, v in exported.items() if "MulFunctor" in k)
    assert mul.sort_values(C.RUN)[C.VALUE].tolist() == expected
    assert t.loc[MUL, C.AVG] == pytest.approx(np.mean(expected))
    dram = _agg(plain_report, DRAM_PCT)
    assert ((dram[C.AVG] >= 0) & (dram[C.AVG] <= 100)).all()
    m = read_manifest(plain_report)
    assert m["environment"]["gpu_name"] == "NVIDIA H200"
    assert any("launch parameters" in n for n in m["import_notes"])
    # kernels launched as often as the program did: no run count to fall short of
    assert not [n for n in m["notes"] if n["check"] == "runs_missing"]


def test_case1_an_internal_error_is_not_blamed_on_the_file(tmp_path, monkeypatch):
    def broken(*_a, **_k):
        raise TypeError("a bug")

    monkeypatch.setattr("profiling_worker.importing.report_job.launches_to_runs", broken)
    with pytest.raises(ImportInternalError) as exc:
        _import(tmp_path, PLAIN / "plain.ncu-rep.gz")
    assert exc.value.kind == "import_internal"
    assert "fault of the importer, not of the files" in exc.value.message


# --- case 2: ncu --csv exports --------------------------------------------------------------

@pytest.mark.parametrize("name", ["raw.csv", "raw_units_base.csv", "details.csv",
                                  "details_units_base.csv", "live_raw.csv", "live_details.csv"])
def test_case2_ncu_csv_exports_import(tmp_path, name):
    b = _import(tmp_path, PLAIN / name)
    t = _agg(b, C.GPU_TIME).set_index(C.ANNOTATION)
    assert t.loc[MUL, C.NUM_RUNS] == 3 and t.loc[ADD, C.NUM_RUNS] == 3
    exported = next(v for k, v in _raw_page_times(
        PLAIN / ("live_raw.csv" if name.startswith("live") else "raw_units_base.csv")).items()
        if "MulFunctor" in k)
    # raw.csv / details.csv round to the display unit (usecond, 2 decimals): within 10 ns;
    # live_details.csv is a profile of its own (another run of the script): within 5 %
    tolerance = {"rel": 0.05} if name == "live_details.csv" else {"abs": 10.0}
    assert t.loc[MUL, C.AVG] == pytest.approx(np.mean(exported), **tolerance)
    clock = _agg(b, CLOCK).set_index(C.ANNOTATION)
    assert 1.0e9 < clock.loc[MUL, C.AVG] < 2.0e9  # Hz, the H200's SM clock range
    assert read_manifest(b)["provenance"]["formats"][name] in ("ncu_raw", "ncu_details")


@pytest.mark.parametrize("name, rounded", [("details.csv", True), ("details_units_base.csv", False),
                                           ("raw.csv", False)])
def test_case2_rounded_details_values_are_noted(tmp_path, name, rounded):
    """A tester's find: the details page prints durations in us rounded to 2 decimals (6.05 us
    for 6,048 ns), up to about 0.1 % off the raw page, with no note."""
    notes = " ".join(read_manifest(_import(tmp_path, PLAIN / name))["warnings"])
    assert ("rounded as printed (6.05 us for 6,048 ns" in notes) == rounded, notes

def test_case2_an_export_cut_short_is_refused_with_the_reason(tmp_path):
    text = (PLAIN / "details.csv").read_text(encoding="utf-8")
    cut = tmp_path / "details.csv"
    cut.write_text(text[:len(text) // 2], encoding="utf-8")  # ends inside a row
    with pytest.raises(ImportFailed) as exc:
        _import(tmp_path, cut)
    assert "details.csv: not the CSV its header promises" in exc.value.message
    assert "truncated" in exc.value.message and "ncu --csv" in exc.value.hint  # what, then fix


def test_case2_raw_and_details_of_one_profile_are_read_once(tmp_path):
    b = _import(tmp_path, PLAIN / "raw.csv", PLAIN / "details.csv")
    assert _agg(b, C.GPU_TIME).set_index(C.ANNOTATION).loc[MUL, C.NUM_RUNS] == 3
    assert any("read once" in n for n in read_manifest(b)["import_notes"])


# --- case 3: file names -----------------------------------------------------------------------

def test_case3_output_prefix_files_are_found_in_a_folder(tmp_path):
    b = _import(tmp_path, CASES / "01-output-prefix")
    agg = read_table(b, C.TABLE_AGGREGATED)
    assert len(agg) == 12 and not agg.duplicated([C.ANNOTATION, C.CONFIG, C.METRIC]).any()
    assert read_manifest(b)["spec"]["kernels"] == ["smem_ops"]


def test_case3_browser_renamed_pair_is_paired_by_content(tmp_path):
    b = _import(tmp_path, CASES / "02-browser-renamed")
    agg = read_table(b, C.TABLE_AGGREGATED)
    assert len(agg) == 6 and not agg.duplicated([C.ANNOTATION, C.CONFIG, C.METRIC]).any()
    runs = read_table(b, C.TABLE_RUNS)
    first = runs[(runs[C.CONFIG] == 0) & (runs[C.METRIC] == C.GPU_TIME)][C.VALUE]
    half = stats.t.ppf(0.975, 2) * first.std(ddof=1) / np.sqrt(3)
    assert _agg(b, C.GPU_TIME)[C.CI95_UPPER][0] == pytest.approx(first.mean() + half)
    assert any("paired with the per-run rows" in s
               for s in read_manifest(b)["provenance"]["aggregated"])


def test_case3_real_output_prefix_folder(tmp_path):
    b = _import(tmp_path, NSPY / "combine")
    assert set(read_table(b, C.TABLE_RUNS)[C.ANNOTATION]) == {"unfused", "fused"}


def test_case3_tuple_and_dtype_configs(tmp_path):
    b = _import(tmp_path, CASES / "06-tuple-dtype-configs")
    configs = read_manifest(b)["spec"]["configs"]
    assert {"shape": "(2048, 2048)", "dtype": "torch.float16"} in configs


# --- case 4: per-run rows combined across kernels -------------------------------------------

def test_case4_summed_percentages_and_clocks_are_never_values(tmp_path):
    b = _import(tmp_path, NSPY / "combine")
    runs = read_table(b, C.TABLE_RUNS)
    unfused = runs[runs[C.ANNOTATION] == "unfused"]
    for metric in (SM_PCT, CLOCK):  # no input in the file re-derives them: left out
        assert unfused[unfused[C.METRIC] == metric][C.VALUE].isna().all(), metric
    # Durations and bytes add: kept as nsight-python summed them.
    t = unfused[unfused[C.METRIC] == C.GPU_TIME][C.VALUE]
    assert t.iloc[0] == 10208.0
    # DRAM %: re-derived from the summed bytes and duration against the H200's 4.8 TB/s
    raw = pd.read_csv(NSPY / "combine" / "bench_profiled_data-combined-0.csv")
    u = raw[(raw["Annotation"] == "unfused") & (raw["n"] == 1048576)]
    by = {m: u[u["Metric"] == m]["Value"].to_numpy() for m in set(u["Metric"])}
    expected = 100 * (by["dram__bytes_read.sum"] + by["dram__bytes_write.sum"]) / (
        by[C.GPU_TIME] * 1e-9) / 4800e9
    dram = unfused[(unfused[C.METRIC] == DRAM_PCT) & (unfused[C.CONFIG] == 0)][C.VALUE]
    assert np.allclose(dram.to_numpy(), expected, rtol=1e-12)
    assert (dram > 30).all() and (dram < 40).all()  # nsight-python's sums read 67-69 %
    assert set(runs[runs[C.METRIC] == DRAM_PCT].dropna(subset=[C.VALUE])[C.VALUE]
               .between(0, 100)) == {True}
    notes = " ".join(read_manifest(b)["import_notes"])
    for metric in (SM_PCT, CLOCK):
        assert f"{metric}: nsight-python summed it over the kernels of 6 runs" in notes
    assert "datasheet DRAM bandwidth 4,800 GB/s" in notes


def test_case4_a_report_beside_the_csvs_is_placed_launch_by_launch(tmp_path):
    """The path that recomputes combined rows per launch: the report's launches get the CSVs'
    configs and runs by launch order (here one kernel per run, so nothing is recombined)."""
    b = _import(tmp_path, NSPY / "normalized")
    m = read_manifest(b)
    assert m["provenance"]["launches"]["attribution"].startswith("config and run by launch order")
    launches = read_table(b, C.TABLE_LAUNCHES)
    runs = read_table(b, C.TABLE_RUNS)
    keys = [C.ANNOTATION, C.CONFIG, "n", C.RUN]
    both = launches[launches[C.METRIC] == C.GPU_TIME].merge(
        runs[runs[C.METRIC] == C.GPU_TIME], on=keys, suffixes=("_launch", "_run"))
    assert len(both) == 12  # 2 annotations x 2 sizes x 3 runs
    assert (both[C.VALUE + "_launch"] == both[C.VALUE + "_run"]).all()


# --- case 5: columns with a meaning -----------------------------------------------------------

def test_case5_transformed_is_a_derived_metric_not_a_time(tmp_path):
    b = _import(tmp_path, CASES / "03-derived-0.9.5")
    agg = read_table(b, C.TABLE_AGGREGATED)
    assert set(agg[C.METRIC]) == {"compute_tflops"}
    assert agg[C.AVG].round(2).tolist() == [59.87, 60.01, 59.7]
    m = read_manifest(b)
    assert m["metric_roles"]["compute_tflops"]["role"] == "derived"
    assert m["metric_roles"]["compute_tflops"]["from"] == C.GPU_TIME
    assert m["provenance"]["nsight_python_version"].startswith("0.9.4-0.9.5")
    assert m["provenance"]["parameters"] == ["n"]


def test_case5_derived_metric_of_0_9_6(tmp_path):
    b = _import(tmp_path, NSPY / "derived")
    tf = _agg(b, "compute_tflops").set_index([C.ANNOTATION, C.CONFIG])
    raw = pd.read_csv(NSPY / "derived" / "profiled_data-matmul-0.csv")
    fp16 = raw[(raw["Annotation"] == "fp16") & (raw["Metric"] == "compute_tflops")
               & (raw["n"] == 1024)]["Value"]
    assert tf.loc[("fp16", 0), C.AVG] == pytest.approx(fp16.mean())
    assert read_manifest(b)["metric_roles"]["compute_tflops"]["role"] == "derived"


@pytest.mark.parametrize("folder,against,inplace", [(NSPY / "normalized", "torch", "inplace"),
                                                    (CASES / "04-normalized", "torch", "triton")])
def test_case5_normalised_values_are_ratios_and_times_stay_times(tmp_path, folder, against,
                                                                 inplace):
    b = _import(tmp_path, folder)
    name = f"{C.GPU_TIME} relative to {against}"
    ratio = _agg(b, name)
    times = _agg(b, C.GPU_TIME)
    assert set(ratio[C.UNIT]) == {"ratio"} and ratio[C.STD].isna().all()
    both = ratio.merge(times, on=[C.ANNOTATION, C.CONFIG], suffixes=("", "_t"))
    base = both[both[C.ANNOTATION] == against].set_index(C.CONFIG)[C.AVG + "_t"]
    other = both[both[C.ANNOTATION] == inplace].set_index(C.CONFIG)
    assert np.allclose(other[C.AVG], other[C.AVG + "_t"] / base, rtol=1e-9)
    assert (times[C.AVG] > 1000).all()  # ns, never the 1.0 of the ratio
    assert read_manifest(b)["metric_roles"][name]["role"] == "normalised"


def test_case5_two_calls_of_one_function_stay_apart(tmp_path):
    b = _import(tmp_path, NSPY / "two_calls")
    t = _agg(b, C.GPU_TIME)
    assert set(t[C.ANNOTATION]) == {"torch [scale-0]", "torch [scale-1]",
                                    "inplace [scale-0]", "inplace [scale-1]"}
    assert (t[C.NUM_RUNS] == 3).all()
    one = t[(t[C.ANNOTATION] == "torch [scale-1]") & (t[C.CONFIG] == 0)][C.AVG].iloc[0]
    assert one == pytest.approx(4384.0)  # processed_data-scale-1.csv's AvgValue


def test_case5_info_collectors_reach_the_collectors_table(tmp_path):
    folder = SCENARIOS / "h200-cupti-stability" / "nsight" / "c0"
    b = _import(tmp_path, folder)
    coll = read_table(b, C.TABLE_COLLECTORS)
    assert set(coll[C.COLLECTOR]) == {"sm_clock", "temperature", "power"}
    assert (coll[coll[C.COLLECTOR] == "sm_clock"][C.VALUE] <= 1980).all()
    m = read_manifest(b)
    assert m["provenance"]["parameters"] == ["n"]
    assert any("collected_info.pkl" in s for s in m["provenance"]["ignored"])


# --- case 6: a processed CSV alone ------------------------------------------------------------

def test_case6_processed_alone_gets_a_student_t_interval(tmp_path):
    b = _import(tmp_path, CASES / "02-browser-renamed" / "processed_data-mm-0.csv")
    row = _agg(b, C.GPU_TIME).iloc[0]
    assert row[C.AVG] - row[C.CI95_LOWER] == pytest.approx(210.3, abs=0.05)
    assert any(nsight_values.CI_METHOD_T in s
               for s in read_manifest(b)["provenance"]["aggregated"])


# --- case 7: a report alone for a multi-size job ----------------------------------------------

def test_case7_configs_recovered_from_launch_parameters(tmp_path):
    b = _import(tmp_path, NSPY / "normalized" / "ncu-output-scale-0.ncu-rep.gz")
    t = _agg(b, C.GPU_TIME)
    assert sorted(t[C.CONFIG].unique()) == [0, 1]  # n = 2^20 and 2^22
    assert (t[C.NUM_RUNS] == 3).all()
    by = t.set_index([C.ANNOTATION, C.CONFIG])[C.AVG]
    assert by[("torch", 1)] > 2 * by[("torch", 0)]  # 4x the elements
    assert any("launch parameters" in n for n in read_manifest(b)["import_notes"])


def test_case7_worker_report_keeps_its_configs(tmp_path):
    b = _import(tmp_path, J1)
    assert sorted(_agg(b, C.GPU_TIME)[C.CONFIG]) == [0, 1, 2, 3]


# --- case 8: inf / NaN ------------------------------------------------------------------------

def test_case8_inf_cells_are_missing_with_a_note(tmp_path):
    b = _import(tmp_path, CASES / "05-derived-inf")
    ratio = _agg(b, "ld_per_st").set_index([C.ANNOTATION, C.CONFIG])
    assert ratio.loc[("matmul", 0), C.AVG] == 8.0
    assert np.isnan(ratio.loc[("elementwise", 0), C.AVG])
    notes = read_manifest(b)["import_notes"]
    assert any("6 Value cells held inf (a derived metric divided by a zero counter?): "
               "ld_per_st" in n for n in notes)


def test_a_text_cell_for_no_value_is_not_blamed_on_a_zero_counter(tmp_path):
    """A new user's find: "N/A" in a duration's Value cell was noted as "inf or NaN (... a
    derived metric divided by a zero counter?)". It held no number, and the note says so."""
    import pandas as pd

    src = NSPY / "derived"
    frame = pd.read_csv(src / "profiled_data-matmul-0.csv")
    first = frame.index[frame[C.METRIC] == C.GPU_TIME][0]
    frame[C.VALUE] = frame[C.VALUE].astype(object)
    frame.loc[first, C.VALUE] = "N/A"
    frame.to_csv(tmp_path / "profiled_data-matmul-0.csv", index=False)
    notes = read_manifest(_import(tmp_path, tmp_path / "profiled_data-matmul-0.csv"))[
        "import_notes"]
    said = [n for n in notes if "shown as missing" in n]
    assert len(said) == 1 and "1 Value cell held no number" in said[0]
    assert f": {C.GPU_TIME};" in said[0] and "zero counter" not in said[0]


# --- case 9: a report cut short ---------------------------------------------------------------

def test_case9_report_cut_inside_a_config_is_marked_partial(tmp_path):
    data = gzip.decompress(J1.read_bytes())
    cut = tmp_path / "cut.ncu-rep"
    cut.write_bytes(data[:len(data) // 2])  # an interrupted copy: 19 of 40 launches
    b = _import(tmp_path, cut)
    m = read_manifest(b)
    assert m["partial"] and "cut short" in m["partial"][0]
    launches = read_table(b, C.TABLE_LAUNCHES)
    runs_in_1 = launches[launches[C.CONFIG] == 1][C.RUN].nunique()
    assert 0 < runs_in_1 < 10
    assert f"config 1 of fp16 ({runs_in_1} of the 10 runs" in m["partial"][0]
    # a bundle-wide warning note: every page that shows notes shows it
    assert {"check": "import", "severity": "warning", "scope": "bundle", "annotation": None,
            "config": None, "metric": None, "message": m["partial"][0]} in m["notes"]


def test_case9_report_cut_before_any_launch_is_refused(tmp_path):
    data = gzip.decompress((NSPY / "normalized" / "ncu-output-scale-0.ncu-rep.gz").read_bytes())
    cut = tmp_path / "cut.ncu-rep"
    cut.write_bytes(data[:len(data) // 2])
    with pytest.raises(ImportFailed, match="cut short"):
        _import(tmp_path, cut)


# --- case 10: a CSV re-saved by a spreadsheet -------------------------------------------------

def test_case10_spreadsheet_resave_gives_the_same_values(tmp_path):
    a = read_table(_import(tmp_path, CASES / "02-browser-renamed", name="a"),
                   C.TABLE_AGGREGATED)
    b = read_table(_import(tmp_path, CASES / "10-spreadsheet-resave", name="b"),
                   C.TABLE_AGGREGATED)
    pd.testing.assert_frame_equal(a, b)


# --- the whole kind ---------------------------------------------------------------------------

def test_a_file_not_understood_says_what_it_is(tmp_path):
    path = tmp_path / "results.csv"
    path.write_text(json.dumps({"a": 1}))
    with pytest.raises(ImportFailed) as exc:
        _import(tmp_path, path)
    assert "JSON" in exc.value.message and exc.value.hint == HINT_IMPORTABLE  # one fix


def test_import_onto_a_bundled_id_is_refused(tmp_path):
    with pytest.raises(ImportFailed, match="bundled with the dashboard"):
        import_nsight_output([CASES / "02-browser-renamed"], tmp_path, "h200-ncu-j1-fp16",
                             reserved_ids={"h200-ncu-j1-fp16"})


def test_report_and_its_raw_csv_export_number_runs_alike(tmp_path: Path) -> None:
    """Runs of a kernel are 0..k-1 in launch order from the report and from its raw.csv
    export (the report once gave 0, 8, 16: every metric row counted as a launch)."""
    def durations(name: str) -> pd.DataFrame:
        runs = read_table(import_nsight_output([PLAIN / name], tmp_path, name.split(".")[0]),
                          C.TABLE_RUNS)
        out = runs[runs[C.METRIC] == C.GPU_TIME][[C.ANNOTATION, C.CONFIG, C.RUN, C.VALUE]]
        return out.sort_values([C.ANNOTATION, C.CONFIG, C.RUN]).reset_index(drop=True)

    rep, csv = durations("plain.ncu-rep.gz"), durations("raw.csv")
    for _, sub in rep.groupby([C.ANNOTATION, C.CONFIG]):
        assert list(sub[C.RUN]) == list(range(len(sub)))
    pd.testing.assert_frame_equal(rep[[C.ANNOTATION, C.CONFIG, C.RUN]],
                                  csv[[C.ANNOTATION, C.CONFIG, C.RUN]], check_dtype=False)
    np.testing.assert_allclose(rep[C.VALUE].to_numpy(float), csv[C.VALUE].to_numpy(float),
                               rtol=1e-3)
