"""A CUDA-events job keeps the configs it measured on the GPU (session 21's partial results ran on
the cpu backend only): a config that runs out of CUDA memory is skipped and the configs after it
still run (the error is not sticky), and a Cancel through the JobManager (SIGTERM, SIGKILL 5 s
later) leaves the whole configs measured before it as result tables the loader reads."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from app import settings
from app.services.job_manager import JobManager
from profiling_worker.bundle.loader import load_bundle
from profiling_worker.bundle.schema import backends as B, columns as C, partial
from profiling_worker.bundle.schema.manifest import read_manifest
from profiling_worker.bundle.schema.spec import validate_spec
from profiling_worker.catalog.builtin import CATALOG

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
