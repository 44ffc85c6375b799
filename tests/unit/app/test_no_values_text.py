"""The sentence a page shows for a job with no values to draw (app.core.metrics.no_values_text):
the values in a reader's words, and when a queued or running job's values come."""

from __future__ import annotations

import pytest

from profiling_worker.bundle.schema.manifest import JobStatus
from app.core.metrics import DURATIONS, no_values_text


@pytest.mark.parametrize("status", list(JobStatus))
def test_each_status_names_the_values_and_the_state(status: JobStatus) -> None:
    text = no_values_text(DURATIONS, status, "the chart")
    assert text.startswith(f"No {DURATIONS}")
    if status is JobStatus.DONE:
        assert "none" in text
    else:  # the page's sentence names the state the caption above it names
        assert str(status) in text or status is JobStatus.FAILED and "failed" in text


@pytest.mark.parametrize("status", [JobStatus.QUEUED, JobStatus.RUNNING])
def test_an_unfinished_job_says_what_comes_and_when(status: JobStatus) -> None:
    """Session 21's fresh user read a running job's "(status: running)" as a fault."""
    text = no_values_text(DURATIONS, status, "the roofline")
    assert "the roofline comes" in text and "Run it again" not in text


@pytest.mark.parametrize("status", [JobStatus.FAILED, JobStatus.CANCELLED,
                                    JobStatus.INTERRUPTED])
def test_an_ended_job_says_to_run_it_again(status: JobStatus) -> None:
    assert no_values_text(DURATIONS, status).endswith("Run it again.")


def test_an_interrupted_job_does_not_say_it_recorded_nothing() -> None:
    """Session 22's fresh user: a job interrupted after 4,015 of 6,000 runs read "interrupted
    before it recorded any". It may have measured runs and kept none, or (session 23's fresh
    user: queued when the server stopped) never run: the sentence claims neither, the job's
    error box says which (``interrupted_error``)."""
    text = no_values_text(DURATIONS, JobStatus.INTERRUPTED)
    assert "before it recorded" not in text and "runs" not in text
