"""A job of the result store in the sidebar's job panel (one line of its store list): a queued
or running one names the process its manifest names as owner, an ended one names none."""

from __future__ import annotations

from pathlib import Path

from profiling_worker.bundle.schema.manifest import JobStatus

from app.services.result_store import SOURCE_LOCAL, BundleInfo
from app.sidebar.job_panel import store_line


def _info(status: JobStatus, **owner: object) -> BundleInfo:
    manifest = {"status": status.value, **({"server": owner} if owner else {})}
    return BundleInfo(job_id="20261206-120000-matmul-abcd", path=Path("x"), source=SOURCE_LOCAL,
                      status=status, kernels=("matmul",), backend="cpu", created_at="",
                      gpu_name="", label="", manifest=manifest)


def test_a_queued_job_of_another_process_names_its_owner() -> None:
    line = store_line(_info(JobStatus.QUEUED, process="agent door", pid=12, host="h"))
    assert line.startswith("◷ **queued** · matmul · cpu · ")
    assert line.endswith("owned by the agent door pid 12 on host h")


def test_a_running_job_without_an_owner_says_so() -> None:
    assert store_line(_info(JobStatus.RUNNING)).endswith("its manifest names no owner")


def test_an_ended_job_names_no_owner() -> None:
    line = store_line(_info(JobStatus.DONE, process="agent door", pid=12, host="h"))
    assert "owned" not in line and line.startswith("✓ **done**")
