"""A ``?job=`` that names no job: one box says so, which job is shown and why (session 22's fresh
user read this and the default job's note: two boxes saying one thing)."""

from __future__ import annotations

from app.sidebar.job_selector import unknown_job_text

WHY = ("Showing `h200-ncu-matmul-sweep`, an example shipped with the app: no job of this result "
       "store has finished with results yet. Run one with the sidebar's New job, or pick "
       "another in its Job box.")


def test_the_default_job_s_reason_is_said_in_the_same_box() -> None:
    text = unknown_job_text("does-not-exist", "h200-ncu-matmul-sweep", WHY)
    assert text.startswith("There is no job `does-not-exist` in the results")
    assert text.endswith(WHY) and text.count("h200-ncu-matmul-sweep") == 1
    assert text.count("Job box") == 1  # where to pick another: said once


def test_without_a_default_reason_the_shown_job_is_named() -> None:
    text = unknown_job_text("does-not-exist", "job-a")
    assert "`does-not-exist`" in text and "this is `job-a`" in text and "Job box" in text


def test_a_long_asked_id_is_cut() -> None:
    assert "x" * 81 not in unknown_job_text("x" * 200, "job-a")
