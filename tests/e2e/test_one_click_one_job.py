"""One submission per intent, in a real browser (issue 37): a double click on Run queued the
same job twice, the second waiting behind the first. The second click of an identical spec now
asks first and queues nothing."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import AppServer, fill_text, get_by_key, open_app, wait_for_app_run

pytestmark = pytest.mark.e2e


def test_a_double_click_on_run_queues_one_job(page, app_server: AppServer) -> None:  # type: ignore[no-untyped-def]
    """Whether the two clicks reach the server as one script run or two depends on the load
    (two: the second is asked about; one: nothing more to do), so what is asserted holds either
    way: one job queued, and a later Run of the same spec, from a tab of its own (no answer
    pending there), is asked about rather than queued."""
    open_app(page, app_server.url)
    fill_text(page, "builder-sizes", "32")
    fill_text(page, "builder-runs", "2")
    get_by_key(page, "builder-submit").get_by_role("button").dblclick()
    expect(page.locator("[class*='st-key-panel-job-']").first).to_be_visible(timeout=60_000)
    wait_for_app_run(page)
    other = page.context.new_page()
    open_app(other, app_server.url)
    fill_text(other, "builder-sizes", "32")
    fill_text(other, "builder-runs", "2")
    get_by_key(other, "builder-submit").get_by_role("button").click()
    warning = other.get_by_test_id("stSidebar").get_by_test_id("stAlertContentWarning")
    expect(warning.filter(has_text="identical job")).to_be_visible(timeout=60_000)
    expect(warning.filter(has_text="Press Run again")).to_be_visible()
    # every click was handled by now: none but the first could queue without an answer
    assert len(list(app_server.results_dir.glob("*/spec.json"))) == 1
    expect(page.locator("[class*='st-key-panel-job-']")).to_have_count(1)
