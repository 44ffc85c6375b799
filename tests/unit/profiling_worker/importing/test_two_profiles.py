"""Issue 20's case 13 and ``import --each`` of a folder: two profiles uploaded together are two
jobs, each with its own values; only exports of one profile (equal values) are read once, with a
note naming both files. Inputs recorded on the H200 (tests/fixtures/h200_import/ncu_plain: one
report's raw and details exports and two live runs; tests/fixtures/import_cases/13-...)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from profiling_worker.bundle.loader import read_table
from profiling_worker.importing import import_nsight_output
from profiling_worker.importing.grouping import group_sources, import_each
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import read_manifest

FIX = Path(__file__).resolve().parents[3] / "fixtures"
PLAIN = FIX / "h200_import" / "ncu_plain"
CASES = FIX / "import_cases"
LIVE = CASES / "13-two-runs-one-upload" / "live_raw.csv"
REPORT = CASES / "10-two-launches-per-pass" / "ranges.ncu-rep.gz"  # case 13's other run
TWO_CALLS = FIX / "h200_import" / "nspy096" / "two_calls"


def _times(path: Path) -> list[float]:
    """gpu__time_duration.sum of every launch of a raw-page export (ns; pandas, not the
    importer)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    frame = pd.read_csv(path, dtype=str, skiprows=start)
    scale = {"ns": 1.0, "usecond": 1e3, "us": 1e3}[frame[C.GPU_TIME].iloc[0]]
    return [float(v.replace(",", "")) * scale for v in frame[C.GPU_TIME].iloc[1:]]


def _launch_times(bundle: Path) -> list[float]:
    launches = read_table(bundle, C.TABLE_LAUNCHES)
    return sorted(launches[launches[C.METRIC] == C.GPU_TIME][C.VALUE].tolist())


def test_two_runs_of_one_program_are_two_groups_and_one_profile_is_one() -> None:
    one_profile = [PLAIN / n for n in ("raw.csv", "details.csv", "raw_units_base.csv",
                                       "details_units_base.csv")]
    assert [len(g) for g in group_sources(one_profile)] == [4]
    groups = group_sources([PLAIN / "raw.csv", PLAIN / "live_raw.csv", PLAIN / "details.csv"])
    assert [[p.name for p in g] for g in groups] == [["raw.csv", "details.csv"],
                                                     ["live_raw.csv"]]


def test_each_run_keeps_its_own_values(tmp_path: Path) -> None:
    events = list(import_each([PLAIN / "raw.csv", PLAIN / "live_raw.csv"], tmp_path, "two"))
    assert [e["event"] for e in events] == ["result", "result"]
    for event, source in zip(events, ("raw.csv", "live_raw.csv")):
        assert event["files"] == [source]
        assert _launch_times(Path(event["bundle"])) == sorted(_times(PLAIN / source))
    assert _times(PLAIN / "raw.csv") != _times(PLAIN / "live_raw.csv")  # two runs indeed


def test_a_csv_and_a_report_of_two_runs_are_two_jobs(tmp_path: Path) -> None:
    events = list(import_each([LIVE, REPORT], tmp_path, "case13"))
    assert [(e["event"], e["files"]) for e in events] == [("result", [LIVE.name]),
                                                          ("result", [REPORT.name])]
    csv_job, report_job = (Path(e["bundle"]) for e in events)
    assert _launch_times(csv_job) == sorted(_times(LIVE))
    assert _launch_times(report_job) != _launch_times(csv_job)


def test_without_each_another_run_is_named_not_read_never_dropped(tmp_path: Path) -> None:
    b = import_nsight_output([PLAIN / "raw.csv", PLAIN / "live_raw.csv"], tmp_path, "x")
    m = read_manifest(b)
    note = next(n for n in m["import_notes"] if n.startswith("live_raw.csv: "))
    assert "the same launches as raw.csv with other values" in note and "not read" in note
    assert m["provenance"]["not_read"] == ["live_raw.csv"]
    assert any(n["severity"] == "warning" and n["message"] == note for n in m["notes"])
    assert _launch_times(b) == sorted(_times(PLAIN / "raw.csv"))


def test_one_profile_exported_twice_is_read_once_with_both_names(tmp_path: Path) -> None:
    b = import_nsight_output([PLAIN / "raw_units_base.csv", PLAIN / "details.csv"], tmp_path,
                             "once")
    notes = read_manifest(b)["import_notes"]
    assert any("the same launches and values as" in n and "raw_units_base.csv" in n
               and "details.csv" in n for n in notes)


@pytest.mark.parametrize("extra", [False, True], ids=["calls", "calls-and-a-stray-file"])
def test_each_of_a_folder_of_two_calls_makes_a_bundle_per_call(tmp_path: Path,
                                                                extra: bool) -> None:
    folder = tmp_path / "out"
    shutil.copytree(TWO_CALLS, folder)
    if extra:
        (folder / "notes.txt").write_text("profiled on the H200\n", encoding="utf-8")
    events = list(import_each([folder], tmp_path / "store", "calls"))
    assert [e["event"] for e in events] == ["result", "result"]
    assert [e["files"] for e in events] == [
        sorted(p.name for p in TWO_CALLS.iterdir() if f"scale-{k}." in p.name) for k in (0, 1)]
    if extra:
        ignored = read_manifest(Path(events[0]["bundle"]))["provenance"]["ignored"]
        assert any(i.startswith("out/notes.txt: ") for i in ignored)
