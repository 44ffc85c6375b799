"""Issue 35: launches grouped by evidence (launch parameters, then work counters, then durations
with a spread test), never summed across grids, "partial" only from the file's structure, and
files that hold no measurement refused by kind with the command that makes one.

Inputs: files Nsight Compute 2025.3.1 wrote on the H200 (tests/fixtures/import_cases/
17-h200-issue35, README there). Expected values are recomputed here from the files (pandas,
ncu_report), never copied from the importer.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import ncu_report
import numpy as np
import pandas as pd
import pytest

from profiling_worker.bundle.loader import read_table
from profiling_worker.bundle.number_text import fitting_time_unit, fmt
from profiling_worker.bundle.errors import ImportFailed
from profiling_worker.importing import import_nsight_output
from profiling_worker.importing import launch_runs as L
from profiling_worker.importing.grouping import group_sources
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import read_manifest

CASE = Path(__file__).resolve().parents[4] / "tests" / "fixtures" / "import_cases" / \
    "17-h200-issue35"
INST = "smsp__inst_executed.sum"
VECTORIZED = "vectorized_elementwise_kernel"


def _raw(path: Path) -> tuple[pd.DataFrame, dict[str, str]]:
    """An ncu raw-page CSV parsed by pandas from its header on: (rows as text, units row)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    frame = pd.read_csv(path, dtype=str, keep_default_na=False, skiprows=start)
    return frame.iloc[1:].reset_index(drop=True), {str(k): str(v) for k, v in
                                                   frame.iloc[0].items()}


def _ns(frame: pd.DataFrame, units: dict[str, str]) -> np.ndarray:
    scale = {"nsecond": 1.0, "ns": 1.0, "usecond": 1e3, "us": 1e3}[units[C.GPU_TIME]]
    return frame[C.GPU_TIME].str.replace(",", "").astype(float).to_numpy() * scale


def _time_agg(bundle: Path) -> pd.DataFrame:
    agg = read_table(bundle, C.TABLE_AGGREGATED)
    return agg[agg[C.METRIC] == C.GPU_TIME].reset_index(drop=True)


def _messages(bundle: Path) -> list[str]:
    return [n["message"] for n in read_manifest(bundle)["notes"]]


# --- one kernel 41 times, one launch after an L2 thrash ---------------------------------------

def test_a_slow_launch_is_an_outlier_of_its_config_not_a_config(tmp_path: Path) -> None:
    path = CASE / "outlier_live_raw.csv"
    frame, units = _raw(path)
    times = _ns(frame, units)
    slow = int(np.argmax(times))
    rest = np.delete(times, slow)
    assert len(times) == 41 and times[slow] > L.DURATION_GAP * rest.max()  # the file's outlier
    assert frame[INST].nunique() == 1  # equal work on every launch
    bundle = import_nsight_output([path], tmp_path / "s", "o")
    t = _time_agg(bundle)
    assert t[C.NUM_RUNS].tolist() == [41] and t[C.AVG].tolist() == pytest.approx([times.mean()])
    note = next(m for m in _messages(bundle) if "outside the other runs' spread" in m)
    # every duration in the one unit that fits them (µs here), never "11,040 ns" (issue 37)
    assert fitting_time_unit(times) == ("µs", 1e3) and " ns" not in note
    assert note.startswith("scale: 1 of 41 runs of config 0")
    assert f"({fmt(times[slow] / 1e3)} µs)" in note
    assert f"({fmt(rest.min() / 1e3)} - {fmt(rest.max() / 1e3)} µs)" in note and INST in note
    how = read_manifest(bundle)["provenance"]["how_read"][path.name]
    assert how["grouping"] == f"kernel, grid, block; then {INST}; 1 outlier run kept in its config"


def test_durations_alone_keep_a_lone_slow_run_in_the_config() -> None:
    """The same file's durations with no counter to go by: the spread test, not a 1.25x cut."""
    frame, units = _raw(CASE / "outlier_live_raw.csv")
    times = _ns(frame, units)
    runs = [[i] for i in range(len(times))]
    configs, notes, count = L.configs_of("scale", runs, [("k", "4096", "128")] * len(times),
                                         {C.GPU_TIME: times})
    assert set(configs) == {0} and count == 1
    assert "no work counter in the file" in notes[0]


def test_the_issues_41_launches_are_one_config_of_41_runs() -> None:
    """The figures of issue 35's console text: 40 launches of 1,595 ns and one of 6,300 ns."""
    times = [1595.0] * 20 + [6300.0] + [1595.0] * 20
    configs, _, count = L.configs_of("k", [[i] for i in range(41)], [("k", "g", "b")] * 41,
                                     {C.GPU_TIME: times})
    assert set(configs) == {0} and count == 1
    assert round(float(np.mean(times)), 2) == 1709.76


def test_groups_of_runs_apart_by_duration_are_still_configs() -> None:
    """Two sizes of three runs each (no group holds most runs): two configs, no outlier."""
    found, told = L.split_by_work({C.GPU_TIME: np.array([1.0, 1.02, 0.99, 2.0, 2.05, 1.98])})
    assert found is not None and found.tolist() == [0, 0, 0, 1, 1, 1] and C.GPU_TIME in told
    assert L.outliers([1.0, 1.02, 0.99, 2.0, 2.05, 1.98]) == []


def test_the_report_of_41_launches_is_one_config(tmp_path: Path) -> None:
    plain = tmp_path / "outlier.ncu-rep"
    plain.write_bytes(gzip.decompress((CASE / "outlier.ncu-rep.gz").read_bytes()))
    report = ncu_report.load_report(str(plain))
    rng = report.range_by_idx(0)
    times = [float(rng.action_by_idx(a)["gpu__time_duration.sum"].value())
             for a in range(rng.num_actions())]
    assert report.num_ranges() == 1 and len(times) == 41
    bundle = import_nsight_output([CASE / "outlier.ncu-rep.gz"], tmp_path / "s", "r")
    t = _time_agg(bundle)
    assert t[C.NUM_RUNS].tolist() == [41] and t[C.AVG].tolist() == pytest.approx([np.mean(times)])
    m = read_manifest(bundle)
    assert not m.get("partial")
    assert INST in m["provenance"]["how_read"]["outlier.ncu-rep.gz"]["grouping"]


def test_the_utf16_console_text_reads_like_the_utf8_one(tmp_path: Path) -> None:
    """What Windows PowerShell's `>` writes (UTF-16 with a byte-order mark) of ncu's text."""
    text = gzip.decompress((CASE / "outlier_text.log.gz").read_bytes()).decode("utf-8")
    utf16 = tmp_path / "outlier_text.log"
    utf16.write_bytes(text.encode("utf-16"))
    t = _time_agg(import_nsight_output([utf16], tmp_path / "s", "u"))
    assert t[C.NUM_RUNS].tolist() == [41]


# --- a kernel at two grids in one stretch ------------------------------------------------------

def test_launches_of_two_grids_are_never_one_run(tmp_path: Path) -> None:
    path = CASE / "grids_raw.csv"
    frame, units = _raw(path)
    times = _ns(frame, units)
    vec = frame["Kernel Name"].str.contains(VECTORIZED)
    grids = frame.loc[vec, "Grid Size"]
    assert grids.nunique() == 2
    bundle = import_nsight_output([path], tmp_path / "s", "g")
    t = _time_agg(bundle)
    got = t[t[C.ANNOTATION] == VECTORIZED].sort_values(C.CONFIG)
    expected = [times[(vec & (frame["Grid Size"] == g)).to_numpy()].mean()
                for g in dict.fromkeys(grids)]
    assert got[C.NUM_RUNS].tolist() == [6, 6] and got[C.AVG].tolist() == pytest.approx(expected)
    runs = read_table(bundle, C.TABLE_RUNS)
    assert (runs.loc[runs[C.ANNOTATION] == VECTORIZED, C.KERNELS] == 1).all()
    messages = _messages(bundle)
    assert any("never summed into one run" in m for m in messages)
    assert not any("of the spec have no runs" in m for m in messages)  # regions differ in configs
    assert not read_manifest(bundle).get("partial")  # unequal runs per config are no cut


# --- a launch that fails ----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["launch_fails_text.log", "launch_fails_raw.csv"])
def test_a_failed_launch_is_named_and_the_measured_ones_read(tmp_path: Path, name: str) -> None:
    text = (CASE / name).read_text(encoding="utf-8")
    assert "==ERROR== LaunchFailed" in text
    bundle = import_nsight_output([CASE / name], tmp_path / "s", "f")
    t = _time_agg(bundle)
    assert t[C.NUM_RUNS].tolist() == [3]  # the three scale launches before the failure
    warning = next(w for w in read_manifest(bundle)["warnings"] if "ncu reported an error" in w)
    assert "LaunchFailed" in warning and "The launches it measured are read" in warning
    if name.endswith(".log"):  # the console text names the launch being profiled
        assert "write_through(float *) (ID 3)" in warning


# --- refused by kind, with the command that makes an importable file ---------------------------

@pytest.mark.parametrize(("name", "said", "fix"), [
    ("outlier_summary.log", "--print-summary", "--csv --page raw"),
    ("query_metrics_head.txt", "ncu --query-metrics", "--metrics gpu__time_duration.sum"),
    ("list_sets.txt", "ncu --list-sets", "--set basic -o report"),
])
def test_ncu_output_without_launch_values_is_refused_by_kind(tmp_path: Path, name: str,
                                                             said: str, fix: str) -> None:
    with pytest.raises(ImportFailed) as caught:
        import_nsight_output([CASE / name], tmp_path / "s", "x")
    assert said in caught.value.message and fix in caught.value.hint
    assert "not a file nsight-python or Nsight Compute writes" not in caught.value.message


#: Lines as the tools print them: ncu's permission error (its text, as NVIDIA's page
#: https://developer.nvidia.com/ERR_NVGPUCTRPERM quotes it), a Git LFS pointer (the spec's
#: example, https://github.com/git-lfs/git-lfs/blob/main/docs/spec.md) and the table heading
#: `nsys stats` prints; the recorded files above cover the kinds the H200 could write.
TOOL_LINES = {
    "perm.log": ("==PROF== Connected to process 343479 (app)\n==ERROR== ERR_NVGPUCTRPERM - The "
                 "user does not have permission to access NVIDIA GPU Performance Counters on "
                 "the target device 0.\n==PROF== Disconnected from process 343479\n",
                 "ERR_NVGPUCTRPERM", "NVreg_RestrictProfilingToAdminUsers=0"),
    "trace.nsys-rep": ("version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935"
                       "c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n",
                       "Git LFS pointer", "git lfs pull"),
    "stats.txt": (" ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):\n\n Time (%)  Total Time (ns)"
                  "  Instances  Avg (ns)  Name\n --------  ---------------  ---------  --------"
                  "  ----\n    100.0            7,265          1   7,265.0  add\n",
                  "Nsight Systems console output", "ncu --nvtx -o report"),
}


@pytest.mark.parametrize("name", sorted(TOOL_LINES))
def test_other_tools_output_is_refused_by_kind(tmp_path: Path, name: str) -> None:
    text, said, fix = TOOL_LINES[name]
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ImportFailed) as caught:
        import_nsight_output([path], tmp_path / "s", "x")
    assert said in caught.value.message and fix in caught.value.hint
    if name.endswith(".nsys-rep"):
        assert "Nsight Systems report" in caught.value.message


# --- notes that say what the file holds ---------------------------------------------------------

def test_a_file_without_durations_says_so(tmp_path: Path) -> None:
    """Case 03's nsight-python 0.9.5 files hold a derived TFLOP/s under the duration's name."""
    case = CASE.parent / "03-derived-0.9.5"
    bundle = import_nsight_output(sorted(case.glob("*.csv")), tmp_path / "s", "d")
    assert not (read_table(bundle, C.TABLE_AGGREGATED)[C.METRIC] == C.GPU_TIME).any()
    assert any(f"no {C.GPU_TIME} (kernel duration) in the file(s)" in m
               for m in _messages(bundle))


def test_exports_of_two_recordings_without_each_are_not_pooled_silently(tmp_path: Path) -> None:
    files = [CASE / "grids_raw.csv", CASE / "outlier_live_raw.csv"]
    bundle = import_nsight_output(files, tmp_path / "s", "two")
    note = next(m for m in _messages(bundle) if "separate recordings" in m)
    assert "grids_raw.csv" in note and "outlier_live_raw.csv" in note and "--each" in note


def test_the_cli_result_names_each_files_grouping_rule(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "profiling_worker", "import",
                          str(CASE / "outlier_live_raw.csv"), "--out", str(tmp_path / "c")],
                         capture_output=True, text=True, timeout=600, check=True)
    event = json.loads(out.stdout.strip().splitlines()[-1])
    assert event["grouping"] == {"outlier_live_raw.csv": f"kernel, grid, block; then {INST}; "
                                 "1 outlier run kept in its config"}


def test_a_report_with_its_own_export_is_one_job_naming_both(tmp_path: Path) -> None:
    """outlier_raw.csv is `ncu -i outlier.ncu-rep --csv --page raw`; outlier_live_raw.csv is
    another run of the program (other values): it stays a job of its own."""
    report, export, other = (CASE / n for n in ("outlier.ncu-rep.gz", "outlier_raw.csv",
                                                "outlier_live_raw.csv"))
    assert group_sources([report, export, other]) == [[report, export], [other]]
    bundle = import_nsight_output([report, export], tmp_path / "s", "one")
    m = read_manifest(bundle)
    assert any(msg.startswith("outlier_raw.csv: the launches and values of outlier.ncu-rep.gz "
                              "(exported from it: one profile); read once")
               for msg in _messages(bundle))
    assert not m["provenance"].get("not_read")
