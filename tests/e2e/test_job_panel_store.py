"""In headless Chromium: a server's job panel lists the jobs of its result store that it did
not queue (recorded jobs copied in, as a restart finds the jobs of before it), newest first, the
newest ``SHOW_LAST`` and a link to History for the rest, which opens History."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from playwright.sync_api import expect

from app.services.result_store import read_info
from app.sidebar import job_panel
from tests.e2e.conftest import AppServer, open_app, wait_for_app_run
from tests.scenarios import SCENARIOS

pytestmark = pytest.mark.e2e

COPIED = 10


def test_the_store_jobs_are_listed_with_a_link_to_history(browser, app_server: AppServer,
                                                          artifacts_dir: Path) -> None:  # type: ignore[no-untyped-def]
    names = sorted(p.name for p in SCENARIOS.iterdir() if p.is_dir())[:COPIED]
    for name in names:
        shutil.copytree(SCENARIOS / name, app_server.results_dir / name)
    infos = sorted((read_info(app_server.results_dir / n, "local") for n in names),
                   key=lambda b: (b.created_at, b.job_id), reverse=True)
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        open_app(page, app_server.url)
        sidebar = page.get_by_test_id("stSidebar")
        listing = sidebar.get_by_test_id("stMarkdown").filter(has_text="In the result store")
        expect(listing).to_have_count(1)
        items = listing.locator("li")
        expect(items).to_have_count(job_panel.SHOW_LAST)
        for item, info in zip(items.all(), infos):  # newest first
            expect(item).to_contain_text(info.job_id)
        expect(sidebar).not_to_contain_text(job_panel.EMPTY_TEXT)
        more = sidebar.get_by_test_id("stPageLink-NavLink").filter(
            has_text=job_panel.more_text(COPIED - job_panel.SHOW_LAST))
        expect(more).to_have_count(1)
        out = artifacts_dir / "views"
        out.mkdir(parents=True, exist_ok=True)
        listing.screenshot(path=str(out / "job-panel-store.png"))
        more.click()
        wait_for_app_run(page)
        expect(page.get_by_test_id("stMain").get_by_test_id("stHeading").first).to_contain_text(
            "History")
    finally:
        context.close()
