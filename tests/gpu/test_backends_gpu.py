"""The backends' run-side modules on the GPU (issue 12: profiling_worker/backends/ncu.py,
cupti.py, registry.py), run by the lead with ``pytest -m gpu`` (scripts/gpu_check.sh).

A warm CUPTI worker (serve.py: CuptiBackend.warm_up preloads libcupti and activates nsight-python's
CUPTI tool once) runs two jobs in turn; the second asks for replay_mode "range", which
nsight-python 1.1's CUPTI collector does not take, and its warnings say so.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from app import settings
from app.services.job_manager import JobManager
from profiling_worker.catalog.builtin import CATALOG
from profiling_worker.bundle.schema import backends as B
from profiling_worker.bundle.schema.manifest import read_manifest
from profiling_worker.bundle.schema.spec import validate_spec

pytestmark = pytest.mark.gpu
SMALL = {"kernels": ["matmul"], "annotations": ["fp16"], "configs": [{"n": 1024}], "runs": 3,
         "backend": B.CUPTI}


def test_a_warm_cupti_worker_runs_two_jobs_and_names_the_option_it_ignores(tmp_path: Path) -> None:
    manager = JobManager(tmp_path / "results", os.environ.get("KPROF_WORKER_PYTHON", sys.executable),
                         env=settings.worker_env(), kill_grace_s=5.0, warm=True)
    try:
        first = manager.submit(validate_spec(SMALL, CATALOG))
        assert manager.wait(first, 600) == "done", read_manifest(manager.get(first).path).get("error")
        second = manager.submit(validate_spec({**SMALL, "replay_mode": "range"}, CATALOG))
        status = manager.wait(second, 600)
        manifest = read_manifest(manager.get(second).path)
    finally:
        manager.shutdown()
    assert status == "done", manifest.get("error")
    assert manifest["backend"]["name"] == B.CUPTI
    assert manifest["backend"]["nsight_mode"] == B.CUPTI_BACKEND.nsight_mode
    assert "the cupti backend does not apply replay_mode 'range'; ignored" in manifest["warnings"]
    assert not any("does not accept" in w for w in manifest["warnings"])  # 1.1 takes every option
