"""A fresh tab opens where the user left off (a fresh user's find: it opened on the bundled
matmul sweep after they had run a job): the result store's last job to finish, else a bundled
example; a link's ``?job=`` always wins; a line above the page says which job is shown and why
until the user picks one. A real result store of two jobs of the real worker (cpu backend), the
recorded H200 jobs as the bundled examples."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from apptest_helpers import texts
from app.sidebar.job_selector import FIRST_BUNDLED_JOB
from profiling_worker.bundle.number_text import when_text
from tests.scenarios import SCENARIOS

OLDER, NEWER = "20261206-210000-matmul-0001", "20261206-220000-matmul-0002"
WHY_STORE = "the last job of this result store to finish with results"
WHY_EXAMPLE = ("an example shipped with the app: no job of this result store has finished with "
               "results yet")


def _plant(results: Path, src: Path, job_id: str, created: str, finished: str) -> None:
    """A copy of the worker's done job ``src`` as ``job_id``, created and finished then."""
    dest = results / job_id
    shutil.copytree(src, dest)
    manifest = json.loads((dest / "manifest.json").read_text())
    manifest.update(job_id=job_id, created_at=created, started_at=created, finished_at=finished)
    (dest / "manifest.json").write_text(json.dumps(manifest))


@pytest.fixture
def two_jobs(store, monkeypatch, cpu_bundle_src) -> dict[str, Path]:
    """The store with two done jobs, ``NEWER`` submitted and finished last, and the bundled
    examples (the matmul sweep among them)."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    _plant(store["results"], cpu_bundle_src, OLDER, "2026-12-06T21:00:00+00:00",
           "2026-12-06T21:01:00+00:00")
    _plant(store["results"], cpu_bundle_src, NEWER, "2026-12-06T22:00:00+00:00",
           "2026-12-06T22:01:00+00:00")
    return store


def test_a_fresh_tab_opens_on_the_newest_finished_job_and_says_why(two_jobs, app) -> None:
    at = app()
    assert not at.exception, at.exception
    assert at.selectbox(key="sidebar-job").value == NEWER
    assert at.query_params["job"] == NEWER  # a reload keeps it
    shown = [c.value for c in at.caption if WHY_STORE in c.value]
    ended = when_text("2026-12-06T22:01:00+00:00")  # as the page writes a time, never ISO
    assert len(shown) == 1 and NEWER in shown[0] and ended in shown[0]
    # the user picks a job: the page no longer says why it opened on another
    at.selectbox(key="sidebar-job").set_value(OLDER).run()
    assert not at.exception, at.exception
    assert at.query_params["job"] == OLDER
    assert WHY_STORE not in texts(at)


def test_the_job_that_finished_last_is_shown_not_the_one_submitted_last(two_jobs, app,
                                                                        cpu_bundle_src) -> None:
    """A ``kernel-sweep`` submitted before a quick job ends after it: the sweep is where the
    user left off."""
    _plant(two_jobs["results"], cpu_bundle_src, "20261206-200000-sweep-0003",
           "2026-12-06T20:00:00+00:00", "2026-12-06T22:30:00+00:00")
    at = app()
    assert not at.exception, at.exception
    assert at.selectbox(key="sidebar-job").value == "20261206-200000-sweep-0003"


def test_a_links_job_wins(two_jobs, app) -> None:
    at = app(query={"job": OLDER})
    assert not at.exception, at.exception
    assert at.selectbox(key="sidebar-job").value == OLDER
    assert WHY_STORE not in texts(at) and WHY_EXAMPLE not in texts(at)


def test_a_store_with_no_finished_job_opens_on_the_bundled_example(store, monkeypatch,
                                                                    app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app()
    assert not at.exception, at.exception
    assert at.selectbox(key="sidebar-job").value == FIRST_BUNDLED_JOB
    assert f"Showing `{FIRST_BUNDLED_JOB}`, {WHY_EXAMPLE}" in texts(at)


def test_compare_takes_the_newest_job_as_the_users_own(two_jobs, app) -> None:
    """Compare opened on a bundled pair whatever the user had run (it took the app's default
    for an example to replace); the store's newest job is theirs: the candidate, against the
    job most like it (the other run of the same spec) as baseline."""
    at = app("compare")
    assert not at.exception, at.exception
    assert at.selectbox(key="compare-candidate").value == NEWER
    assert at.selectbox(key="compare-baseline").value == OLDER
