"""A sweep whose record (queue.jsonl) cannot be written from the start is not submitted, on
submitit's local executor (no Slurm needed): nothing runs that a restarted dashboard could
not follow, and the job says which file and the fix."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app.services import slurm_executor
from app.services.job_model import claim_job_dir
from app.services.slurm_executor import SlurmExecutor
from app.services.sweep_plan import SweepOptions
from app.services.sweep_resume import QUEUE_FILE, RECORD_HINT
from profiling_worker.bundle.schema.manifest import JobStatus, read_manifest
from profiling_worker.bundle.schema.spec import validate_spec


def test_a_sweep_whose_queue_jsonl_cannot_be_written_is_not_submitted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full_record(*args, **kwargs):  # type: ignore[no-untyped-def]
        job_id, path = claim_job_dir(*args, **kwargs)
        (path / QUEUE_FILE).symlink_to("/dev/full")  # every write: ENOSPC, as a full disk
        return job_id, path

    monkeypatch.setattr(slurm_executor, "claim_job_dir", full_record)
    spec = validate_spec({"kernels": ["matmul"], "configs": [{"n": 16}, {"n": 32}], "runs": 2,
                          "backend": "cpu", "warmup": 0})
    executor = SlurmExecutor(tmp_path, sys.executable, poll_s=0.2)
    job_id = executor.submit(spec, SweepOptions(cluster="local", reference=False))
    assert executor.wait(job_id, 60) == JobStatus.FAILED
    job = executor.get(job_id)
    assert job is not None and job.error is not None
    assert job.error["kind"] == "sweep_unwritable"
    assert job.error["message"].startswith(
        f"Nothing was submitted to Slurm: cannot write {job.path / QUEUE_FILE}")
    assert "No space left on device" in job.error["message"]
    assert job.error["hint"] == RECORD_HINT
    assert read_manifest(job.path)["error"]["kind"] == "sweep_unwritable"  # on disk too
    assert not (job.path / "tasks").exists()  # no attempt folder, no pickle, no process
    assert [f.name for f in (job.path / ".submitit").iterdir()] == ["watch.lock"]
    executor.shutdown()
