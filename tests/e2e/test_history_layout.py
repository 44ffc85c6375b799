"""History at 1400x900 in a real browser: every filter box shows its content whole (its
placeholder, "Any" or, without options, "None yet"; a chip of the longest status) instead of
cutting it off (Streamlit's own "No options to select" read "No options to sele").
The screenshot goes to ``tests/artifacts/layout/history-filters-1400x900.png``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from playwright.sync_api import expect

from profiling_worker.bundle.schema.manifest import JobStatus, update_manifest
from tests.e2e.conftest import AppServer, get_by_key, open_app, open_list, wait_for_app_run
from tests.scenarios import SCENARIOS

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
BUNDLED = "h200-ncu-j1-fp16"
CUT_OFF = "el => el.scrollWidth > el.clientWidth"  # text-overflow: ellipsis hides the rest
#: Whether an input's placeholder is wider than its box: the text measured in the input's font.
PLACEHOLDER_CUT_OFF = """el => {
  const ctx = document.createElement("canvas").getContext("2d");
  ctx.font = getComputedStyle(el).font;
  return ctx.measureText(el.placeholder).width > el.clientWidth;
}"""


def test_filter_boxes_show_their_content(browser, app_server: AppServer,
                                         artifacts_dir: Path) -> None:  # type: ignore[no-untyped-def]
    job = app_server.results_dir / BUNDLED
    shutil.copytree(SCENARIOS / BUNDLED, job)
    update_manifest(job, lambda m: {**m, "status": str(JobStatus.INTERRUPTED)})
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        open_app(page, app_server.url, "/history")
        backends = get_by_key(page, "history-backends").get_by_role("combobox")
        expect(backends).to_have_attribute("placeholder", "Any")
        assert not backends.evaluate(PLACEHOLDER_CUT_OFF), "Backend placeholder cut off"
        tags = get_by_key(page, "history-tags").get_by_role("combobox")  # no job has a tag
        expect(tags).to_have_attribute("placeholder", "None yet")
        assert not tags.evaluate(PLACEHOLDER_CUT_OFF), "Tag placeholder cut off"
        statuses = get_by_key(page, "history-statuses")
        open_list(statuses.get_by_role("combobox"))
        page.get_by_role("option", name=str(JobStatus.INTERRUPTED)).click()
        page.keyboard.press("Escape")
        wait_for_app_run(page)
        chip = statuses.get_by_test_id("stMultiSelectTagsContainer").locator("[data-tag] span")
        expect(chip.first).to_have_text(str(JobStatus.INTERRUPTED))
        assert not chip.first.evaluate(CUT_OFF), "Status chip cut off"
        out = artifacts_dir / "layout"
        out.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(out / "history-filters-1400x900.png"))
    finally:
        context.close()
