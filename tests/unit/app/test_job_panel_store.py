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


def test_a_cancelled_job_that_kept_configs_is_listed_as_partial() -> None:
    """Session 22's fresh user read "cancelled" of a job whose 3 configs measured every page
    shows: the store list says partial and how many configs it kept; a cancelled job that
    kept none stays "cancelled"."""
    import dataclasses

    from app.core.markdown import esc
    from profiling_worker.bundle.schema import partial

    info = _info(JobStatus.CANCELLED)
    kept = {**info.manifest, partial.CONFIGS_KEY: {"measured": [0, 1, 2], "total": 6,
                                                   "not_measured": []}}
    line = store_line(dataclasses.replace(info, manifest=kept))
    said = partial.status_text(JobStatus.CANCELLED, kept)
    assert said == "cancelled, partial: 3 of 6 configs"
    assert f"**{esc(said)}** · matmul · cpu" in line, line  # Markdown-escaped as shown
    assert "**cancelled** ·" in store_line(info)
