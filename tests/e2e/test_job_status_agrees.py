"""In a real browser the job panel reruns on its own every second while the page does not: the
page caption once stayed "queued" after Run while the panel said "running". The caption follows
the panel's state (the panel reruns the page when the job's state changes)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from profiling_worker.bundle.schema.manifest import JobStatus
from tests.e2e.conftest import AppServer, choose_option, fill_text, get_by_key, open_app

pytestmark = pytest.mark.e2e

JOB_ID = re.compile(r"[?&]job=([^&#]+)")
STATE_MS = 60_000  # a cold worker start on a shared 2-core machine


def _caption(page, job_id: str):  # type: ignore[no-untyped-def]
    """The page's caption naming the job (its id, its status, its backend ...)."""
    return page.get_by_test_id("stMain").get_by_test_id("stCaptionContainer").filter(
        has_text=job_id)


def _said(status: JobStatus) -> re.Pattern[str]:
    """``status``'s word, wherever a caption or the panel says it."""
    return re.compile(rf"\b{re.escape(status.value)}\b")


QUEUED, RUNNING, CANCELLED = (_said(s) for s in (JobStatus.QUEUED, JobStatus.RUNNING,
                                                  JobStatus.CANCELLED))


def _submit(page) -> str:  # type: ignore[no-untyped-def]
    """Run a long cpu matmul job from the form; returns its id (the page selects it)."""
    before = page.url
    get_by_key(page, "builder-submit").get_by_role("button").click()
    expect(page).not_to_have_url(before)
    return JOB_ID.search(page.url).group(1)  # type: ignore[union-attr]


def test_caption_follows_the_panel(page, app_server: AppServer) -> None:  # type: ignore[no-untyped-def]
    open_app(page, app_server.url)
    expect(get_by_key(page, "builder-submit")).to_be_visible()
    choose_option(page, "builder-backend", "cpu")
    fill_text(page, "builder-sizes", 256)
    fill_text(page, "builder-runs", 5000)  # long enough to be seen running
    first = _submit(page)
    expect(get_by_key(page, f"panel-job-{first}")).to_contain_text(RUNNING, timeout=STATE_MS)
    fill_text(page, "builder-sizes", 255)  # another spec: an identical one within 30 s asks first
    second = _submit(page)  # waits for the cpu lane: queued
    box = get_by_key(page, f"panel-job-{second}")
    expect(box).to_contain_text(QUEUED)
    expect(_caption(page, second)).to_contain_text(QUEUED)
    get_by_key(page, f"panel-job-{first}").get_by_role("button", name="Cancel").click()
    expect(box).to_contain_text(RUNNING, timeout=STATE_MS)  # the panel reran by itself
    expect(_caption(page, second)).to_contain_text(RUNNING, timeout=STATE_MS)
    box.get_by_role("button", name="Cancel").click()
    expect(box).to_contain_text(CANCELLED, timeout=STATE_MS)
    expect(_caption(page, second)).to_contain_text(CANCELLED, timeout=STATE_MS)
