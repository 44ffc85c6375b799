"""JobBook.forget: a job deleted from History leaves the book (issue 37: it stayed in the job
panel until the server restarted); one still queued or running stays (it has a worker)."""

from __future__ import annotations

from pathlib import Path

from profiling_worker.bundle.schema.manifest import JobStatus
from profiling_worker.bundle.schema.spec import JobSpec
from app.services.executor import Executors
from app.services.job_book import JobBook
from app.services.job_model import Job


def _book(*statuses: JobStatus) -> JobBook:
    book = JobBook(process="test")
    for i, status in enumerate(statuses):
        book._jobs[f"j{i}"] = Job(job_id=f"j{i}", path=Path("."), lane="cpu", status=status,
                                  spec=JobSpec(kernels=(), configs=()))
    return book


def test_an_ended_job_is_forgotten_and_an_active_one_kept() -> None:
    book = _book(JobStatus.DONE, JobStatus.RUNNING)
    assert book.forget("j0") and book.get("j0") is None
    assert not book.forget("j1") and book.get("j1") is not None
    assert not book.forget("nope")


def test_executors_forget_in_the_one_that_has_it() -> None:
    here, there = _book(JobStatus.FAILED), _book()
    both = Executors(here, there)
    assert both.forget("j0") and both.snapshot() == []
    assert not both.forget("j0")
