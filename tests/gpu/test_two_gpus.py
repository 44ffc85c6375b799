"""Two GPUs of one host (device kind nvidia-h200-x2): the job manager runs one job per GPU at the
same time, each pinned to its GPU, and each bundle records its GPU's UUID (issue 5)."""

from __future__ import annotations

import os
from datetime import datetime
import sys
from pathlib import Path

import pytest

from profiling_worker.bundle.schema.manifest import read_manifest

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
    from profiling_worker.catalog.builtin import CATALOG
    from profiling_worker.bundle.schema.spec import validate_spec

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


def _run_cupti_job(tmp_path: Path, name: str, gpu: int, visible: str | None) -> dict:
    """A CUPTI fp32 matmul job run by the worker with this CUDA_VISIBLE_DEVICES (None: unset)."""
    import json
    import subprocess

    job = tmp_path / name
    job.mkdir()
    (job / "spec.json").write_text(json.dumps(
        {"kernels": ["matmul"], "annotations": ["fp32"], "configs": [{"n": 8192}], "runs": 60,
         "backend": "cupti", "gpu": gpu, "nvml_interval_ms": 20}))
    env = {k: v for k, v in os.environ.items()
           if k not in ("CUDA_VISIBLE_DEVICES", "KPROF_VISIBLE_DEVICES")}
    if visible is not None:
        env["CUDA_VISIBLE_DEVICES"] = visible
    subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(job)], env=env,
                   timeout=300, check=False)
    return read_manifest(job)


@pytest.mark.skipif(_gpu_count() < 2, reason="needs two GPUs (nvidia-h200-x2)")
@pytest.mark.parametrize(("gpu", "visible"), [(1, None), (0, "1")], ids=["gpu1", "cvd1-gpu0"])
def test_a_job_on_the_second_gpu_runs_samples_and_records_that_gpu(
        tmp_path: Path, gpu: int, visible: str | None) -> None:
    """Issue 11 case 3: the manifest's UUID is the UUID of the CUDA device the kernels ran on
    (torch's get_device_properties in the worker) and of NVML device 1; the NVML trace shows
    that GPU busy (SM clock far above the 345 MHz idle clock) while GPU 0 stays idle."""
    import pandas as pd
    import pynvml

    pynvml.nvmlInit()
    uuids = [pynvml.nvmlDeviceGetUUID(pynvml.nvmlDeviceGetHandleByIndex(i)) for i in (0, 1)]
    manifest = _run_cupti_job(tmp_path, f"job-{gpu}-{visible}", gpu, visible)
    assert manifest["status"] == "done", manifest.get("error")
    cuda_uuid = manifest["backend"]["cuda_device"]["uuid"]
    trace = pd.read_parquet(tmp_path / f"job-{gpu}-{visible}" / "tables" / "nvml_trace.parquet")
    print(gpu, visible, manifest["gpu"], cuda_uuid, "trace max SM MHz",
          trace["SmClockMHz"].max(), "max power W", trace["PowerW"].max(), "GPU uuids", uuids)
    assert manifest["gpu"]["uuid"] == uuids[1] == f"GPU-{cuda_uuid}"
    assert manifest["gpu"]["nvml_index"] == 1 and manifest["gpu"]["visible_devices"] == visible
    assert len(trace) >= 5 and trace["SmClockMHz"].max() > 1000
