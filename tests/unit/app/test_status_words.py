"""One source decides a job's status words at a given run of the app (issue 37): the sidebar's
Job box (its label and its entry), History's column and the job panel's card say the job
manager's state of a job this server's executors hold, while its manifest, which the manager
writes after it sets the state, still says the one before; a job they do not hold is said by
its manifest. The panel's words are the card's own function (``job_panel.status_text``)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from profiling_worker.bundle.schema import partial
from profiling_worker.bundle.schema.manifest import JobStatus, write_manifest
from profiling_worker.bundle.schema.spec import validate_spec

from app.services.job_model import Job
from app.services.result_store import SOURCE_LOCAL, BundleInfo
from app.sidebar import job_panel, job_selector
from app.ui import job_status, state

JOB_ID = "20261207-120000-matmul-abcd"
SPEC = validate_spec({"kernels": ["matmul"], "configs": [{"n": 64}, {"n": 128}],
                     "runs": 3, "backend": "cpu"})
#: The state a manifest still says while the manager has already set each state.
BEFORE = {JobStatus.QUEUED: JobStatus.QUEUED, JobStatus.RUNNING: JobStatus.QUEUED,
          JobStatus.DONE: JobStatus.RUNNING, JobStatus.FAILED: JobStatus.RUNNING,
          JobStatus.CANCELLED: JobStatus.RUNNING, JobStatus.INTERRUPTED: JobStatus.RUNNING}
#: A cancel that kept 1 of the 2 configs (the words then say partial, from the manifest).
KEPT = {partial.CONFIGS_KEY: {"measured": [0], "total": 2, "not_measured": [1]},
        "error": {"kind": "Cancelled", "message": "cancelled from the job panel"}}


def _pair(folder: Path, status: JobStatus) -> tuple[BundleInfo, Job]:
    """(the listed bundle, whose manifest says the state before ``status``; the job manager's
    job in ``status``, whose folder's manifest the manager has written since)."""
    folder.mkdir()
    final = {"job_id": JOB_ID, "status": status.value, "spec": SPEC.to_json(),
             **(KEPT if status == JobStatus.CANCELLED else {})}
    write_manifest(folder, final)
    listed = {**final, "status": BEFORE[status].value}
    listed.pop(partial.CONFIGS_KEY, None)
    info = BundleInfo(job_id=JOB_ID, path=folder, source=SOURCE_LOCAL, status=BEFORE[status],
                      kernels=("matmul",), backend="cpu", created_at="", gpu_name="",
                      label="", manifest=listed)
    return info, Job(JOB_ID, folder, SPEC, "cpu", status=status)


@pytest.mark.parametrize("status", list(JobStatus))
def test_the_job_box_and_history_say_the_panels_words_in_every_state(tmp_path: Path,
                                                                      status: JobStatus) -> None:
    info, job = _pair(tmp_path / JOB_ID, status)
    said = job_panel.status_text(job)  # the card's head
    assert said.startswith(status.value), said
    if status == JobStatus.CANCELLED:  # the manifest's record, read where the manager wrote it
        assert said == partial.status_text(status, {**info.manifest, **KEPT}), said
    box = job_selector.box_label(info, job)
    assert box.split(state.LABEL_SEP, 1)[1] == said, box
    entry = job_selector._label(info, job).split(state.LABEL_SEP)
    assert entry[0] == JOB_ID and entry[3] == said, entry
    history = job_status.status_words(info.status, info.manifest, job)  # History's Status
    assert history == job_status.job_words(job) == said, history


@pytest.mark.parametrize("status", list(JobStatus))
def test_a_job_no_executor_holds_is_said_by_its_manifest(tmp_path: Path,
                                                         status: JobStatus) -> None:
    """After a restart, or a job another process queued: the listed manifest's words."""
    info, _job = _pair(tmp_path / JOB_ID, status)
    info = dataclasses.replace(info, status=status, manifest={**info.manifest,
                                                              "status": status.value})
    said = partial.status_text(status, info.manifest)
    assert job_selector.box_label(info) == f"{job_selector.BOX_LABEL}{state.LABEL_SEP}{said}"
    assert job_status.status_words(info.status, info.manifest, None) == said
