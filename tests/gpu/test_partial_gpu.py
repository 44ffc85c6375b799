"""A CUDA-events job keeps the configs it measured on the GPU (session 21's partial results ran on
the cpu backend only): a config that runs out of CUDA memory is skipped and the configs after it
still run (the error is not sticky), and a Cancel through the JobManager (SIGTERM, SIGKILL 5 s
later) leaves the whole configs measured before it as result tables the loader reads. A CUPTI
job keeps the nsight-python calls finished before a cancel (backends/cupti.py: calls of at most
about 2 s of runs, planned from the warm-up's times)."""

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
from profiling_worker.backends import cupti
from profiling_worker.bundle.loader import load_bundle
from profiling_worker.bundle.schema import backends as B, columns as C, partial
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


def _plan(manager: JobManager, job: str, deadline: float) -> list[list[int]]:
    """The configs of each nsight-python call, from the worker's plan event (``calls``)."""
    events = Path(manager.get(job).path) / "events.jsonl"
    while True:
        lines = events.read_text().splitlines() if events.exists() else []
        for event in map(json.loads, lines):
            if event.get("event") == "log" and "calls" in event:
                return event["calls"]
        assert manager.get(job).active and time.monotonic() < deadline, "no plan of calls"
        time.sleep(0.2)


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
