"""Issue 40's "result ready, tables pending" state: the worker writes runs and aggregated, then
a manifest with ``result_ready`` and the status still ``running``, then the rest of the bundle
and its final manifest. Real cpu jobs run in-process through ``runner.run_job``; the runner's
hook between the two manifest writes (``runner.AFTER_RESULT_READY``) reads the bundle there, or
raises as a worker that dies there (no sleep, no race)."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from app.services.job_book import JobBook
from app.services.job_model import Job
from app.services import job_recovery, other_jobs
from app.ui.job_status import page_state
from profiling_worker.backends.channel import Channel
from profiling_worker.bundle.loader import load_bundle
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.events import WRITING_STAGE, parse_line
from profiling_worker.bundle.schema.manifest import (RESULT_READY_KEY, JobStatus, read_manifest,
                                                     update_manifest, write_manifest)
from profiling_worker.bundle.schema.spec import load_spec
from profiling_worker.bundle.writer import finish_bundle, mark_result_ready, write_table
from profiling_worker.job import runner

SPEC = {"kernels": ["matmul"], "annotations": ["fp32"], "configs": [{"n": 16}, {"n": 32}], "runs": 3, "backend": "cpu"}
#: What a result-ready bundle lacks until the worker writes the rest: the required tables
#: other than runs and aggregated.
LATER = tuple(t for t in C.TABLES if t not in (C.TABLE_RUNS, C.TABLE_AGGREGATED))


class WorkerDied(BaseException):
    """A worker that dies at the hook: no handler of the run path takes a BaseException."""


def _job(tmp_path: Path) -> Path:
    job = tmp_path / "results" / "20270101-000000-matmul-0001"
    job.mkdir(parents=True)
    (job / C.SPEC_FILE).write_text(json.dumps(SPEC), encoding="utf-8")
    return job


@pytest.fixture
def hook(monkeypatch: pytest.MonkeyPatch):
    """``hook(fn)``: ``fn(job_dir)`` runs between the two manifest writes of this test's jobs."""
    def set_hook(fn):
        monkeypatch.setattr(runner, "AFTER_RESULT_READY", fn)
    return set_hook


def load_spec_from(spec: dict, folder: Path):
    """``spec`` as the job manager holds it, through a ``spec.json`` in ``folder``."""
    (folder / C.SPEC_FILE).write_text(json.dumps(spec), encoding="utf-8")
    return load_spec(str(folder / C.SPEC_FILE))


def _utc(text: str) -> dt.datetime:
    when = dt.datetime.fromisoformat(text)
    assert when.utcoffset() == dt.timedelta(0)
    return when


def test_mark_result_ready_writes_running_and_the_time(tmp_path: Path) -> None:
    manifest = {"job_id": tmp_path.name, "started_at": "2027-01-01T00:00:00+00:00"}
    at = mark_result_ready(tmp_path, manifest)
    written = read_manifest(tmp_path)
    assert written["status"] == JobStatus.RUNNING.value
    assert written[RESULT_READY_KEY] == manifest[RESULT_READY_KEY] == at
    _utc(at)
    finish_bundle(tmp_path, {**manifest, "status": JobStatus.DONE.value}, tables={})
    assert read_manifest(tmp_path)[RESULT_READY_KEY] == at  # the final write keeps it


def test_a_failed_ready_write_claims_nothing(tmp_path: Path) -> None:
    manifest = {"job_id": "x"}
    with pytest.raises(OSError):
        mark_result_ready(tmp_path / "gone", manifest)
    assert RESULT_READY_KEY not in manifest


def test_the_bundle_between_the_two_writes_is_result_ready(tmp_path: Path, hook) -> None:
    seen = {}

    def look(job_dir: Path) -> None:
        seen["manifest"] = read_manifest(job_dir)
        seen["tables"] = sorted(p.name for p in (job_dir / C.TABLES_DIR).iterdir())
        seen["bundle"] = load_bundle(job_dir)

    hook(look)
    job = _job(tmp_path)
    assert runner.run_job(job, Channel(job, None)) == 0
    assert seen["manifest"]["status"] == JobStatus.RUNNING.value
    assert seen["tables"] == sorted(f"{t}.parquet" for t in (C.TABLE_AGGREGATED, C.TABLE_RUNS))
    pending = seen["bundle"]
    assert pending.result_ready == seen["manifest"][RESULT_READY_KEY]
    assert pending.pending == LATER and pending.missing == ()
    assert pending.table_problems == ()  # pending tables are no fault
    assert len(pending.table(C.TABLE_RUNS)) == 2 * 3  # configs x runs
    assert len(pending.table(C.TABLE_AGGREGATED)) == 2
    assert pending.backend == "cpu" and pending.host_timer
    done = load_bundle(job)  # the final write: done, every table, the mark kept
    assert done.status == JobStatus.DONE
    assert done.result_ready == pending.result_ready
    assert done.unwritten == done.pending == done.missing == ()
    assert _utc(done.manifest["finished_at"]) >= _utc(done.result_ready)
    events = [parse_line(line) for line in (job / C.EVENTS_FILE).read_text().splitlines()]
    ready = [e for e in events if e and e.get("result_ready")]
    assert [(e["event"], e["stage"], e["result_ready"]) for e in ready] == [
        ("progress", WRITING_STAGE, done.result_ready)]


def _died_at_the_hook(tmp_path: Path, hook) -> Path:
    def die(_job_dir: Path) -> None:
        raise WorkerDied

    hook(die)
    job = _job(tmp_path)
    with pytest.raises(WorkerDied):
        runner.run_job(job, Channel(job, None))
    assert read_manifest(job)["status"] == JobStatus.RUNNING.value  # no final write
    return job


def _settled(job_dir: Path, returncode: int, cancelled: bool = False) -> Job:
    """The job manager's end of a job whose worker exited with ``returncode`` (JobBook)."""
    book = JobBook(process="dashboard server")
    job = Job(job_id=job_dir.name, path=job_dir, spec=load_spec(str(job_dir / C.SPEC_FILE)),
              lane="cpu", status=JobStatus.RUNNING, cancel_requested=cancelled)
    book._jobs[job.job_id] = job
    book._settle(job, returncode)
    return job


def test_a_worker_killed_between_the_writes_keeps_its_result(tmp_path: Path, hook) -> None:
    job_dir = _died_at_the_hook(tmp_path, hook)
    job = _settled(job_dir, -9)  # SIGKILL
    assert job.status == JobStatus.FAILED
    assert job.error is not None and job.error["kind"] == "worker_died"
    assert "signal 9" in job.error["message"]
    assert job_recovery.RESULT_KEPT in job.error["hint"]
    bundle = load_bundle(job_dir)
    assert bundle.status == JobStatus.FAILED
    assert bundle.missing == LATER and bundle.pending == ()
    assert len(bundle.table(C.TABLE_RUNS)) == 6 and len(bundle.table(C.TABLE_AGGREGATED)) == 2
    assert not (job_dir / job_recovery.PARTIAL_DIR).exists()  # not set aside


def test_a_cancelled_worker_killed_between_the_writes_keeps_its_result(tmp_path: Path,
                                                                       hook) -> None:
    job_dir = _died_at_the_hook(tmp_path, hook)
    assert _settled(job_dir, -9, cancelled=True).status == JobStatus.CANCELLED
    bundle = load_bundle(job_dir)
    assert bundle.missing == LATER and len(bundle.table(C.TABLE_AGGREGATED)) == 2


def test_a_worker_killed_before_the_mark_is_set_aside_as_before(tmp_path: Path) -> None:
    job_dir = tmp_path / "job"
    job_dir.mkdir()
    (job_dir / C.SPEC_FILE).write_text(json.dumps(SPEC), encoding="utf-8")
    write_manifest(job_dir, {"job_id": "job", "status": JobStatus.RUNNING.value})
    write_table(job_dir, C.TABLE_RUNS, pd.DataFrame({"a": [1]}))
    job = _settled(job_dir, -9)
    assert job.status == JobStatus.FAILED and "without writing a result" in job.error["message"]
    assert (job_dir / job_recovery.PARTIAL_DIR / C.TABLES_DIR / "runs.parquet").is_file()
    assert load_bundle(job_dir).unwritten == ()  # no mark: nothing named


def test_an_interrupted_job_with_its_result_ready_says_so(tmp_path: Path) -> None:
    error = job_recovery.interrupted_error(tmp_path, ready=True)
    assert error["kind"] == "interrupted" and job_recovery.RESULT_KEPT in error["hint"]
    assert job_recovery.RESULT_KEPT not in job_recovery.interrupted_error(tmp_path)["hint"]


def test_the_job_manager_takes_the_mark_from_the_progress_event(tmp_path: Path) -> None:
    book = JobBook(process="dashboard server")
    job = Job(job_id="j", path=tmp_path, spec=load_spec_from(SPEC, tmp_path), lane="cpu",
              status=JobStatus.RUNNING)
    before = page_state(job.status, job.result_ready)
    book._apply(job, [{"event": "progress", "done": 1, "total": 1, "stage": WRITING_STAGE}])
    assert job.result_ready is None
    book._apply(job, [{"event": "progress", "done": 1, "total": 1, "stage": WRITING_STAGE,
                       "result_ready": "2027-01-01T00:00:01+00:00"}])
    assert job.result_ready == "2027-01-01T00:00:01+00:00"
    assert job.stage == WRITING_STAGE  # a cancel now still waits for the writing
    # the page that drew the job running without its result is drawn again
    assert page_state(job.status, job.result_ready) != before
    assert page_state(JobStatus.DONE, job.result_ready) == page_state(JobStatus.DONE, None)


def test_a_job_whose_owner_is_gone_after_its_result_keeps_it(tmp_path: Path, hook) -> None:
    """Restart recovery (:func:`job_recovery.interrupt_orphaned`) of a job whose worker died
    between the writes: ended interrupted, its result kept, the rest named missing."""
    job_dir = _died_at_the_hook(tmp_path, hook)
    gone = subprocess.Popen(["true"])
    gone.wait()  # reaped: its pid names no process
    update_manifest(job_dir, lambda m: {**m, "worker": {**m["worker"], "pid": gone.pid}})
    assert job_recovery.interrupt_orphaned(job_dir, read_manifest(job_dir))
    bundle = load_bundle(job_dir)
    assert bundle.status == JobStatus.INTERRUPTED
    assert bundle.error is not None and job_recovery.RESULT_KEPT in bundle.error["hint"]
    assert bundle.missing == LATER and len(bundle.table(C.TABLE_RUNS)) == 6
    assert not (job_dir / job_recovery.PARTIAL_DIR).exists()


def test_a_job_of_another_process_takes_the_mark_from_its_manifest(tmp_path: Path) -> None:
    """A job another process runs is followed by its manifest (:func:`other_jobs.take`)."""
    job = Job(job_id="j", path=tmp_path, spec=load_spec_from(SPEC, tmp_path), lane="cpu")
    other_jobs.take(job, {"status": JobStatus.RUNNING.value})
    assert job.result_ready is None
    other_jobs.take(job, {"status": JobStatus.RUNNING.value,
                          RESULT_READY_KEY: "2027-01-01T00:00:01+00:00"})
    assert job.status == JobStatus.RUNNING and job.result_ready == "2027-01-01T00:00:01+00:00"
