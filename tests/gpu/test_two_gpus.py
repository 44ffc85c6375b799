"""Two GPUs of one host (device kind nvidia-h200-x2): the job manager runs one job per GPU at the
same time, each pinned to its GPU, and each bundle records its GPU's UUID (issue 5)."""

from __future__ import annotations

import os
from datetime import datetime
import sys
from pathlib import Path

import pytest

from profiling_worker.schema.manifest import read_manifest

pytestmark = pytest.mark.gpu


def _gpu_count() -> int:
    try:
        import pynvml

        pynvml.nvmlInit()
        return pynvml.nvmlDeviceGetCount()
    except Exception:
        return 0


def _span(manifest: dict) -> tuple[datetime, datetime]:
    return (datetime.fromisoformat(manifest["started_at"]),
            datetime.fromisoformat(manifest["finished_at"]))


@pytest.mark.skipif(_gpu_count() < 2, reason="needs two GPUs (nvidia-h200-x2)")
def test_one_job_per_gpu_in_parallel(tmp_path: Path) -> None:
    from app.services.job_manager import JobManager
    from profiling_worker.catalog.specs import CATALOG
    from profiling_worker.schema.spec import validate_spec

    manager = JobManager(tmp_path, sys.executable, env=dict(os.environ))
    ids = [manager.submit(validate_spec(
        {"kernels": ["matmul"], "annotations": ["fp32"], "configs": [{"n": 8192}], "runs": 150,
         "backend": "cupti", "gpu": gpu, "label": f"gpu{gpu}"}, CATALOG)) for gpu in (0, 1)]
    statuses = [manager.wait(job_id, 400) for job_id in ids]
    manager.shutdown()
    manifests = [read_manifest(tmp_path / job_id) for job_id in ids]
    print(statuses, [(m["gpu"], m["wall_s"]) for m in manifests])
    assert statuses == ["done", "done"]
    uuids = [m["gpu"]["uuid"] for m in manifests]
    assert uuids[0] != uuids[1] and all(u.startswith("GPU-") for u in uuids)
    (a0, a1), (b0, b1) = (_span(m) for m in manifests)
    print("job spans", a0, a1, b0, b1)
    assert a0 < b1 and b0 < a1  # the two jobs ran at the same time
