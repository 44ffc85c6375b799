"""PM sampling, worker side (issue 28), on the report Nsight Compute wrote on the H200 with
``--set full`` (fp16 matmul n = 4096, 3 runs: tests/fixtures/bundles). Every expected value is
read again here with ncu_report itself: the raw instances and their GPU timestamps, the
workload timestamps, and ncu_report's own alignment (ITimelines.aligned_metric)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import ncu_report
import pytest

from profiling_worker.extract import pm_sampling as PM
from profiling_worker.extract.ncu_sections import deep_dive
from tests.scenarios import scenario_dir, scenario_report

ROOT = Path(__file__).resolve().parents[3]
BUNDLE = scenario_dir("h200-ncu-deepdive-fp16-4096")
REPORT_GZ = scenario_report(BUNDLE.name)
TENSOR = "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed"
DEFAULT_SET = ROOT / "tests" / "fixtures" / "h200_import" / "ncu_plain" / "default_set.ncu-rep"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rep") / "full.ncu-rep"
    path.write_bytes(gzip.decompress(REPORT_GZ.read_bytes()))
    return path


_OPEN: list[object] = []  # ncu_report frees a report's actions with the report: keep it open


def _actions(path: Path) -> list[object]:
    ctx = ncu_report.load_report(str(path))
    _OPEN.append(ctx)
    return [ctx.range_by_idx(r).action_by_idx(a) for r in range(ctx.num_ranges())
            for a in range(ctx.range_by_idx(r).num_actions())]


def _stamp(action: object, name: str) -> int:
    return int(action[name].correlation_ids().as_uint64(0))  # type: ignore[index]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "profiling_worker", *args], capture_output=True,
                          text=True, timeout=120, check=False, env=os.environ.copy())


def test_every_series_is_placed_on_the_kernels_own_clock(report: Path) -> None:
    actions = _actions(report)
    assert len(actions) == 3
    for action in actions:
        series = {s["metric"]: s for s in PM.sampled_series(action)}
        start = _stamp(action, "profiler__timestamp_workload_start_0")
        end = _stamp(action, "profiler__timestamp_workload_end_0")
        interval = float(action["profiler__pmsampler_interval_time"].value())  # type: ignore[index]
        tensor = series[TENSOR]
        raw = action[f"TPC.TriageCompute.{TENSOR}"]  # type: ignore[index]
        ids = raw.correlation_ids()
        stamped = [(int(ids.as_uint64(i)), raw.as_double(i)) for i in range(raw.num_instances())
                   if ids.as_uint64(i)]
        inside = [(t - start, v) for t, v in stamped if t + interval > start and t < end]
        assert tensor["t_ns"] == [t for t, _ in inside]
        assert tensor["values"] == [v for _, v in inside]
        assert tensor["dropped"] == len(stamped) - len(inside) > 0
        assert tensor["duration_ns"] == end - start and tensor["origin"] == PM.FROM_KERNEL_START
        assert tensor["unit"] == "%" and tensor["interval_ns"] == interval
        # the kernel's window agrees with its measured duration (ncu's gpu__time_duration)
        duration = float(action["gpu__time_duration.sum"].value())  # type: ignore[index]
        assert abs(tensor["duration_ns"] - duration) / duration < 0.02
        # ncu_report's own alignment holds the same non-zero samples in the same order
        timelines = action.timelines()  # type: ignore[attr-defined]
        aligned = timelines.aligned_metric(raw)
        ours = [v for v in tensor["values"] if v]
        theirs = [aligned.as_double(i) for i in range(aligned.num_instances())
                  if aligned.as_double(i)]
        assert ours == theirs and len(ours) > 100
        names = [n for n in action.metric_names() if ".TriageCompute." in n]  # type: ignore[attr-defined]
        assert {s["name"] for s in series.values()} == set(names)


def test_deep_dive_carries_the_series_and_the_cli_prints_them_by_launch(report: Path,
                                                                         tmp_path: Path) -> None:
    written = deep_dive(report, other_ranges=False)
    assert {r["launch_id"] for r in written["pm_sampling"]} == {0, 1, 2}
    bundle = tmp_path / "job"
    shutil.copytree(BUNDLE, bundle)  # its written deep dive predates PM sampling: the report is read
    proc = _cli("pmsampling", str(bundle))
    assert proc.returncode == 0, proc.stderr
    printed = json.loads(proc.stdout)["pm_sampling"]
    key = lambda r: (r["launch_id"], r["name"])  # noqa: E731
    assert sorted(printed, key=key) == sorted(written["pm_sampling"], key=key)
    # a written deep dive that holds the series is answered without the report
    (bundle / "nsight" / REPORT_GZ.name).unlink()
    (bundle / "nsight" / "deep_dive.json.gz").write_bytes(
        gzip.compress(json.dumps(written, default=str).encode()))
    again = _cli("pmsampling", str(bundle))
    assert again.returncode == 0 and json.loads(again.stdout)["pm_sampling"] == json.loads(
        json.dumps(written["pm_sampling"]))


def test_no_report_and_no_written_series_says_so(tmp_path: Path) -> None:
    bundle = tmp_path / "job"
    shutil.copytree(BUNDLE, bundle)
    (bundle / "nsight" / REPORT_GZ.name).unlink()
    proc = _cli("pmsampling", str(bundle))
    assert proc.returncode == 1
    assert "no Nsight Compute report" in proc.stderr and "read from the report" in proc.stderr


def test_a_default_set_report_has_no_series() -> None:
    for action in _actions(DEFAULT_SET):
        assert not any(PM.is_series(n) for n in action.metric_names())  # type: ignore[attr-defined]
        assert PM.sampled_series(action) == []


def test_names_of_every_ncu_version() -> None:
    assert PM.base_name(f"TPC.TriageCompute.{TENSOR}") == TENSOR
    assert PM.base_name(f"pmsampling:{TENSOR}") == TENSOR
    assert PM.is_series("warpsampling:smsp__pcsamp_warps_issue_stalled_wait")
    assert not PM.is_series("smsp__pcsamp_warps_issue_stalled_wait")  # per PC, not per time
