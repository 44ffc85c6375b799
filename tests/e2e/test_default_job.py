"""In headless Chromium: a fresh tab with no ``?job=`` opens on the result store's last job to
finish, not on a bundled example (a fresh user's find), puts it in the URL and the Job box, and
says above the page which job it is and why; a link's ``?job=`` opens its own job, unexplained.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import AppServer, get_by_key, open_app
from tests.scenarios import SCENARIOS

pytestmark = pytest.mark.e2e

WHY = "the last job of this result store to finish with results"
#: Two copies of a recorded job in the result store: (id, created, finished), oldest first.
JOBS = (("20261206-210000-softmax-0001", "2026-12-06T21:00:00+00:00",
         "2026-12-06T21:05:00+00:00"),
        ("20261206-220000-softmax-0002", "2026-12-06T22:00:00+00:00",
         "2026-12-06T22:05:00+00:00"))


def _job_box(page):  # type: ignore[no-untyped-def]
    """The sidebar's Job box (its value: the selected job's label)."""
    return get_by_key(page, "sidebar-job").get_by_role("combobox")


def test_a_fresh_tab_opens_on_the_newest_finished_job(  # type: ignore[no-untyped-def]
        browser, own_bundled_app_server: AppServer, artifacts_dir: Path) -> None:
    for job_id, created, finished in JOBS:
        dest = own_bundled_app_server.results_dir / job_id
        shutil.copytree(SCENARIOS / "h200-ncu-softmax", dest)
        manifest = json.loads((dest / "manifest.json").read_text())
        manifest.update(job_id=job_id, created_at=created, started_at=created,
                        finished_at=finished)
        (dest / "manifest.json").write_text(json.dumps(manifest))
    newest, older = JOBS[1][0], JOBS[0][0]
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        open_app(page, own_bundled_app_server.url)
        expect(_job_box(page)).to_have_value(re.compile(f"^{newest} · "))
        assert f"job={newest}" in page.url
        note = page.get_by_test_id("stMain").get_by_test_id("stCaptionContainer").filter(
            has_text=WHY)
        expect(note).to_have_count(1)
        expect(note).to_contain_text(newest)
        expect(note).to_be_visible()
        out = artifacts_dir / "views"
        out.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(out / "default-job.png"))
        open_app(page, own_bundled_app_server.url, f"?job={older}")  # a link's job wins
        expect(_job_box(page)).to_have_value(re.compile(f"^{older} · "))
        expect(page.get_by_test_id("stMain")).not_to_contain_text(WHY)
    finally:
        context.close()
