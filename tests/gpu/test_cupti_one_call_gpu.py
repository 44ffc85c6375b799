"""One nsight-python call of all configs on the CUPTI backend, on the GPU (issue 24): kept when
every run launches the same kernels (its files under ``nsight/all/``), measured again one
config per call when the count depends on the config (tests/fixtures/kernel_files_gpu/
launch_count.py: 1 kernel at n = 1024, 2 at n = 4096), with the job's events saying why. A job
of J1's size (4 configs x 10 runs, 16 ms of kernels) stays one call, cold and warm: the calls
of at most about 2 s of runs (backends/cupti.py, plan_calls) do not split it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pandas as pd
import pytest

from app import settings
from app.services.job_manager import JobManager
from profiling_worker.catalog.registry import load_registry
from profiling_worker.bundle.schema.manifest import read_manifest
from profiling_worker.bundle.schema.spec import validate_spec

pytestmark = pytest.mark.gpu
KERNELS = Path(__file__).parents[1] / "fixtures" / "kernel_files_gpu"


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: dict) -> Path:
    monkeypatch.setenv("KPROF_KERNEL_DIRS", str(KERNELS))
    manager = JobManager(tmp_path / "results", os.environ.get("KPROF_WORKER_PYTHON",
                                                              sys.executable),
                         env=settings.worker_env())
    job = manager.submit(validate_spec({**spec, "backend": "cupti"}, load_registry().kernels))
    status = manager.wait(job, 600)
    path = manager.get(job).path
    assert status == "done", read_manifest(path).get("error")
    return path


def _kernels_per_run(bundle: Path) -> dict[int, list[int]]:
    launches = pd.read_parquet(bundle / "tables" / "launches.parquet")
    return launches.groupby(["Config", "Run"]).size().groupby("Config").apply(list).to_dict()


def test_equal_counts_are_one_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = _run(tmp_path, monkeypatch, {"kernels": ["matmul"], "annotations": ["fp16"],
                                          "configs": [{"n": 256}, {"n": 512}], "runs": 3})
    assert sorted(p.name for p in (bundle / "nsight").iterdir()) == ["all"]
    assert _kernels_per_run(bundle) == {0: [1, 1, 1], 1: [1, 1, 1]}


def test_counts_that_differ_by_config_are_measured_per_config(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = _run(tmp_path, monkeypatch, {"kernels": ["launch_count"],
                                          "configs": [{"n": 1024}, {"n": 4096}], "runs": 3})
    assert sorted(p.name for p in (bundle / "nsight").iterdir()) == ["c0", "c1"]
    assert _kernels_per_run(bundle) == {0: [1, 1, 1], 1: [2, 2, 2]}
    assert "one call of all configs not kept" in (bundle / "events.jsonl").read_text()


#: Job J1 of benchmarks/warm_stages.py.
J1 = {"kernels": ["matmul"], "annotations": ["fp16"], "backend": "cupti",
      "configs": [{"n": n} for n in (1024, 2048, 4096, 8192)], "runs": 10}


def _plans(bundle: Path) -> list[list[list[int]]]:
    """The ``calls`` of the job's plan events (the configs of each nsight-python call)."""
    events = [json.loads(line) for line in (bundle / "events.jsonl").read_text().splitlines()]
    return [e["calls"] for e in events if e.get("event") == "log" and "calls" in e]


def test_a_j1_sized_job_is_one_call_cold_and_warm(tmp_path: Path) -> None:
    """A warm worker's first job (its libraries' first use in the warm-up) and its second."""
    manager = JobManager(tmp_path / "results", os.environ.get("KPROF_WORKER_PYTHON",
                                                              sys.executable),
                         env=settings.worker_env(), kill_grace_s=5.0, warm=True)
    try:
        jobs = [manager.submit(validate_spec(J1, load_registry().kernels)) for _ in range(2)]
        statuses = [manager.wait(job, 600) for job in jobs]
        bundles = [Path(manager.get(job).path) for job in jobs]
    finally:
        manager.shutdown()
    assert statuses == ["done", "done"], [read_manifest(b).get("error") for b in bundles]
    for bundle in bundles:
        assert _plans(bundle) == [[[0, 1, 2, 3]]]
        assert sorted(p.name for p in (bundle / "nsight").iterdir()) == ["all"]
        per_run = _kernels_per_run(bundle)
        assert sorted(per_run) == [0, 1, 2, 3] and all(len(r) == 10 for r in per_run.values())
