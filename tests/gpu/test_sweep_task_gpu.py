"""The per-task path of a cluster sweep on the GPU, without Slurm: submitit's local executor
runs :func:`profiling_worker.sweep.task.run_task` with one GPU (it sets the task's
CUDA_VISIBLE_DEVICES, as Slurm's --gres=gpu:1 does), on the cupti backend: the reference kernel
first, then the task's configs, merged into the sweep's bundle.

    PYTHONPATH=<repo>:<nsight-python 1.1 + cupti + submitit wheels> python3 -m pytest -m gpu \\
        tests/gpu/test_sweep_task_gpu.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu


def test_one_sweep_task_on_the_gpu_under_submitit_local(tmp_path: Path) -> None:
    pytest.importorskip("submitit", reason="carry submitit and cloudpickle wheels")
    from profiling_worker.bundle.loader import load_bundle
    from app.services.slurm_executor import SlurmExecutor
    from app.services.sweep_plan import SweepOptions
    from profiling_worker.bundle.schema import columns as C
    from profiling_worker.bundle.schema.manifest import JobStatus
    from profiling_worker.bundle.schema.spec import validate_spec

    spec = validate_spec({"kernels": ["matmul"], "annotations": ["fp16"],
                          "configs": [{"n": 1024}, {"n": 2048}], "runs": 5, "backend": "cupti"})
    executor = SlurmExecutor(tmp_path, sys.executable, poll_s=0.5)
    job_id = executor.submit(spec, SweepOptions(cluster="local", gpus_per_task=1,
                                                configs_per_task=2))
    status = executor.wait(job_id, 400)
    job = executor.get(job_id)
    assert job is not None
    assert status == JobStatus.DONE, (job.tasks, job.warnings, job.error)
    bundle = load_bundle(job.path)
    (task,) = bundle.manifest["sweep"]["tasks"]
    print(json.dumps(task, indent=1))
    assert task["slurm"]["CUDA_VISIBLE_DEVICES"] == "0"  # set by submitit for the task
    assert task["gpu_uuid"].startswith("GPU-") and "H200" in task["gpu_model"]
    assert task["reference"]["avg_ns"] > 0 and task["versions"]["nsight_python"]
    agg = bundle.table(C.TABLE_AGGREGATED)
    assert sorted(agg["n"].unique()) == [1024, 2048] and (agg[C.AVG] > 0).all()
