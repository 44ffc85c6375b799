"""A CUDA-events job keeps the configs it measured on the GPU (session 21's partial results ran on
the cpu backend only): a config that runs out of CUDA memory is skipped and the configs after it
still run (the error is not sticky), and a Cancel through the JobManager (SIGTERM, SIGKILL 5 s
later) leaves the whole configs measured before it as result tables the loader reads. A CUPTI
job keeps the nsight-python calls finished before a cancel (backends/cupti.py: calls of at most
about 2 s of runs, planned from the warm-up's times), and so does an Nsight Compute job
(backends/ncu_calls.py: calls of about a minute estimated, each call's report read before the
next starts)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from app import settings
from app.services.job_manager import JobManager
from profiling_worker.backends import cupti, ncu_calls
from profiling_worker.bundle.loader import load_bundle
from profiling_worker.bundle.schema import backends as B, columns as C, partial
from profiling_worker.bundle.schema.events import parse_line
from profiling_worker.bundle.schema.manifest import read_manifest
from profiling_worker.bundle.schema.spec import validate_spec
from profiling_worker.catalog.builtin import CATALOG
from profiling_worker.catalog.registry import load_registry

pytestmark = pytest.mark.gpu
KERNELS = Path(__file__).parents[1] / "fixtures" / "kernel_files_gpu"


def _manager(tmp_path: Path) -> JobManager:
    return JobManager(tmp_path / "results", os.environ.get("KPROF_WORKER_PYTHON", sys.executable),
                      env=settings.worker_env(), kill_grace_s=5.0)


def test_an_out_of_memory_config_is_skipped_and_the_next_still_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KPROF_KERNEL_DIRS", str(KERNELS))
    manager = _manager(tmp_path)
    job = manager.submit(validate_spec({"kernels": ["understated_alloc"], "runs": 2, "warmup": 1,
                                        "configs": [{"gib": 1}, {"gib": 4096}, {"gib": 2}],
                                        "backend": B.EVENTS}))
    assert manager.wait(job, 600) == "failed"
    manifest = read_manifest(manager.get(job).path)
    record = manifest[partial.CONFIGS_KEY]
    assert record["measured"] == [0, 2], record  # the config after the OOM ran on the same GPU
    (missing,) = record["not_measured"]
    assert missing["label"] == "gib=4096" and "out of memory" in missing["why"].lower()
    runs = load_bundle(manager.get(job).path).table(C.TABLE_RUNS)
    assert sorted(runs[C.CONFIG].unique()) == [0, 2]
    assert (runs[C.VALUE] > 0).all()


def test_a_cancel_keeps_the_configs_measured_before_it(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    job = manager.submit(validate_spec({"kernels": ["matmul"], "annotations": ["fp16"],
                                        "configs": [{"n": 1024}, {"n": 8192}], "runs": 3000,
                                        "warmup": 1, "backend": B.EVENTS}, CATALOG))
    deadline = time.monotonic() + 300
    while not ((manager.get(job).config or 0) >= 1 and manager.get(job).run):
        assert time.monotonic() < deadline, "the second config never started its runs"
        time.sleep(0.2)
    manager.cancel(job)
    assert manager.wait(job, 120) == "cancelled"
    manifest = read_manifest(manager.get(job).path)
    record = manifest[partial.CONFIGS_KEY]
    assert record["measured"] == [0] and record["cancelled"].startswith("SIGTERM at"), record
    runs = load_bundle(manager.get(job).path).table(C.TABLE_RUNS)
    assert sorted(runs[C.CONFIG].unique()) == [0]


def _logged(manager: JobManager, job: str, key: str, deadline: float) -> Any:
    """The ``key`` of the worker's first log event that has one (polled, no fixed wait); None
    when the job ended without one."""
    events = Path(manager.get(job).path) / "events.jsonl"
    while True:
        lines = events.read_text().splitlines() if events.exists() else []
        for event in filter(None, map(parse_line, lines)):  # a line being written: skipped
            if event["event"] == "log" and key in event:
                return event[key]
        if not manager.get(job).active:
            return None
        assert time.monotonic() < deadline, f"no log event with {key}"
        time.sleep(0.2)


def _plan(manager: JobManager, job: str, deadline: float) -> list[list[int]]:
    """The configs of each nsight-python call, from the worker's plan event (``calls``)."""
    calls = _logged(manager, job, "calls", deadline)
    assert calls is not None, "the job ended without a plan of calls"
    return calls


def _wait_for_run_of(manager: JobManager, job: str, config: int, deadline: float) -> None:
    """Until the worker's progress says a profiled run of ``config`` (or a later one) began."""
    while not ((manager.get(job).config or 0) >= config and manager.get(job).run is not None):
        assert manager.get(job).active and time.monotonic() < deadline, \
            f"config {config} never started its runs"
        time.sleep(0.2)


def test_a_cupti_cancel_keeps_the_calls_finished_before_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nine configs of about 0.5 s of runs each (100 runs of a 5 ms spin kernel): several
    nsight-python calls. The cancel comes once the second call runs its second config (its
    first, if it has one): the first call's configs are kept whole, the cut call's are not."""
    monkeypatch.setenv("KPROF_KERNEL_DIRS", str(KERNELS))
    manager = _manager(tmp_path)
    configs: list[dict[str, Any]] = [{"mcycles": 10, "tag": t} for t in range(9)]
    job = manager.submit(validate_spec({"kernels": ["gpu_spin"], "configs": configs,
                                        "runs": 100, "warmup": 1, "backend": B.CUPTI},
                                       load_registry().kernels))
    deadline = time.monotonic() + 300
    calls = _plan(manager, job, deadline)
    assert len(calls) >= 2 and sum(calls, []) == list(range(9)), calls
    second = calls[1]
    _wait_for_run_of(manager, job, second[min(1, len(second) - 1)], deadline)
    manager.cancel(job)
    assert manager.wait(job, 120) == "cancelled"
    path = Path(manager.get(job).path)
    record = read_manifest(path)[partial.CONFIGS_KEY]
    assert record["cancelled"].startswith("SIGTERM at"), record
    kept = [c for c in calls if set(c) <= set(record["measured"])]
    assert kept and kept == calls[:len(kept)] and len(kept) < len(calls), (calls, record)
    assert record["measured"] == sum(kept, [])  # whole calls, nothing of the cut one
    cut = [m["config"] for m in record["not_measured"] if m["why"].startswith("cut mid-way")]
    if cut:  # the configs the cut call had finished are named as lost
        cut_call = calls[len(kept)]
        finished = cut_call[:cut_call.index(cut[0])]
        assert all(partial.config_label(configs[i]) in record["lost"] for i in finished)
    folders = sorted(p.name for p in (path / C.NSIGHT_DIR).iterdir())
    assert folders == sorted(cupti.call_dir(c, 9) if len(c) > 1 else f"c{c[0]}"
                             for c in kept)
    runs = load_bundle(path).table(C.TABLE_RUNS)
    per_config = runs.groupby(C.CONFIG)[C.RUN].nunique().to_dict()
    assert per_config == {i: 100 for i in record["measured"]}


#: nsight-python for the Nsight Compute worker, where the tests' own is not the one this ncu
#: needs (scripts/gpu_check.sh passes NCU_PATH: 0.9.6 launch mode for ncu < 2026.2.1, while
#: pytest runs with 1.1 for CUPTI).
NCU_PYTHONPATH = "KPROF_NCU_PYTHONPATH"
#: Runs of each config of the ncu cancel test: one config's estimate alone is over half of
#: ncu_calls.CALL_BUDGET_S, so each config is a call of its own.
NCU_RUNS = 160


def _ncu_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kernel: str, warmup: int
             ) -> tuple[JobManager, str, list[dict[str, Any]]]:
    """A job manager whose worker takes :data:`NCU_PYTHONPATH`, and the job of two Nsight
    Compute calls (a config each, tags 0 and 1, :data:`NCU_RUNS` runs of 1 Mcycle) of
    ``kernel`` (tests/fixtures/kernel_files_gpu) it was given: (manager, job id, configs)."""
    monkeypatch.setenv("KPROF_KERNEL_DIRS", str(KERNELS))
    env = settings.worker_env()
    if os.environ.get(NCU_PYTHONPATH):
        env["PYTHONPATH"] = os.environ[NCU_PYTHONPATH]
    manager = JobManager(tmp_path / "results",
                         os.environ.get("KPROF_WORKER_PYTHON", sys.executable), env=env,
                         kill_grace_s=5.0)
    configs: list[dict[str, Any]] = [{"mcycles": 1, "tag": t} for t in range(2)]
    spec = validate_spec({"kernels": [kernel], "configs": configs, "runs": NCU_RUNS,
                          "warmup": warmup, "thermal_mode": "off", "backend": B.NCU},
                         load_registry().kernels)
    assert ncu_calls.plan(spec) == [[0], [1]]  # the premise: a call per config
    return manager, manager.submit(spec), configs


def _skip_or_fail(manager: JobManager, job: str, when: str) -> None:
    """Skip where the worker says ncu cannot run here, else fail: the job ended ``when``."""
    manifest = read_manifest(manager.get(job).path)
    error = manifest.get("error") or {}
    if error.get("kind") in ("backend_unavailable", "counter_permission"):
        pytest.skip(f"ncu cannot run in this environment ({NCU_PYTHONPATH} "
                    f"{os.environ.get(NCU_PYTHONPATH)!r}): {error.get('message')}")
    pytest.fail(f"the job ended {manifest.get('status')} {when}: {error}")


def test_an_ncu_cancel_keeps_the_calls_finished_before_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two configs of 160 runs of a 1 Mcycle spin kernel (about 0.5 ms): two Nsight Compute
    calls. The cancel comes once the worker logged the first call's report read (the second
    call's ncu is then starting or running): the first config is kept with its GPU times, the
    bundle says partial and how the cancel came, and the cut call left no file."""
    manager, job, configs = _ncu_job(tmp_path, monkeypatch, "gpu_spin", warmup=1)
    deadline = time.monotonic() + 240
    read = _logged(manager, job, "ncu_call_read", deadline)
    if read is None:
        _skip_or_fail(manager, job, "before its first call was read")
    assert read == [0]
    manager.cancel(job)
    assert manager.wait(job, 120) == "cancelled", "the cancel came after the second call"
    path = Path(manager.get(job).path)
    manifest = read_manifest(path)
    record = manifest[partial.CONFIGS_KEY]
    assert manifest[partial.PARTIAL_KEY] and record["measured"] == [0], record
    assert record["cancelled"].startswith("SIGTERM at"), record
    assert [m["config"] for m in record["not_measured"]] == [1]
    if record["lost"]:  # launch mode: the cut call's configs are named
        assert partial.config_label(configs[1]) in record["lost"]
    nsight = sorted(p.name for p in (path / C.NSIGHT_DIR).iterdir())
    assert any(n.startswith("configs0-0-") and n.endswith(".ncu-rep") for n in nsight), nsight
    # the worker stops the cut call's ncu (ncu_calls.stop_ncu) before it removes its files
    assert not [n for n in nsight if n.startswith("configs1-1-")], nsight
    summary = json.loads((path / C.REPORT_SUMMARY_FILE).read_text())
    assert summary["launches"] == NCU_RUNS
    runs = load_bundle(path).table(C.TABLE_RUNS)
    assert sorted(runs[C.CONFIG].unique()) == [0]
    times = runs[runs[C.METRIC] == C.GPU_TIME][C.VALUE]  # ns, one a run
    assert len(times) == NCU_RUNS
    # 1e6 cycles: 0.5 ms at 2 GHz; any SM clock from 0.33 to 3.3 GHz passes
    assert (times > 0).all() and 3e5 < times.median() < 3e6, times.describe()


def test_an_ncu_kernel_that_raises_in_a_later_call_keeps_the_calls_before_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two Nsight Compute calls of 160 runs (gpu_spin_refusing, no warm-up), the kernel
    raising in the first run of the second (tag 1): the job ends failed, partial, with the
    first config kept with its GPU times, the second named failed with the kernel's own error
    (in the job's error too), its call's report gone and its ncu log named."""
    manager, job, configs = _ncu_job(tmp_path, monkeypatch, "gpu_spin_refusing", warmup=0)
    status = manager.wait(job, 300)
    path = Path(manager.get(job).path)
    manifest = read_manifest(path)
    if partial.CONFIGS_KEY not in manifest:
        _skip_or_fail(manager, job, "keeping no config")
    assert status == "failed", manifest.get("error")
    record = manifest[partial.CONFIGS_KEY]
    assert record["measured"] == [0] and record["cancelled"] is None, record
    (missing,) = record["not_measured"]
    refused = "tag 1 is refused by this kernel"
    assert missing["config"] == 1 and missing["why"].startswith("failed: "), missing
    assert refused in missing["why"] and refused in partial.note(manifest)
    error = manifest["error"]
    assert error["kind"] == "kernel_failed" and refused in error["message"], error
    assert partial.config_label(configs[1]) in record["lost"]
    nsight = sorted(p.name for p in (path / C.NSIGHT_DIR).iterdir())
    assert any(n.startswith("configs0-0-") and n.endswith(".ncu-rep") for n in nsight), nsight
    assert not [n for n in nsight if n.startswith("configs1-1-") and ".ncu-rep" in n], nsight
    for log in (n for n in nsight if n.startswith("configs1-1-") and n.endswith(".log")):
        assert f"{C.NSIGHT_DIR}/{log}" in record["lost"], (log, record["lost"])
    summary = json.loads((path / C.REPORT_SUMMARY_FILE).read_text())
    assert summary["launches"] == NCU_RUNS
    runs = load_bundle(path).table(C.TABLE_RUNS)
    assert sorted(runs[C.CONFIG].unique()) == [0]
    times = runs[runs[C.METRIC] == C.GPU_TIME][C.VALUE]  # ns, one a run
    assert len(times) == NCU_RUNS and (times > 0).all(), times.describe()
