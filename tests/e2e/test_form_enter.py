"""The job form in a real browser: Enter in a field does not start a job, only Run does (a new
user's trial made three jobs by pressing Enter after each field, the first with the default
runs); a runs value that is not a whole number is named, not cut to one."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from app.sidebar.job_builder import LABELS
from tests.e2e.conftest import AppServer, fill_text, get_by_key, open_app, wait_for_app_run

pytestmark = pytest.mark.e2e


def test_enter_in_a_field_submits_nothing(page, app_server: AppServer) -> None:  # type: ignore[no-untyped-def]
    open_app(page, app_server.url)
    box = get_by_key(page, "builder-sizes").locator("input, textarea").first
    box.fill("64, 128")
    box.press("Enter")
    page.wait_for_timeout(3000)  # a submitted job would be listed in the panel by now
    assert page.locator("[class*='st-key-panel-job-']").count() == 0
    assert not list(app_server.results_dir.glob("*/spec.json"))


@pytest.mark.parametrize("typed", ["1e6", "2.5"])
def test_runs_typed_as_a_non_whole_number_is_named_not_truncated(
        page, app_server: AppServer, typed: str) -> None:  # type: ignore[no-untyped-def]
    """The browser's integer field read "1e6" as 1 run and "2.5" as 2 without a word; the field
    is text now and the spec check names it."""
    open_app(page, app_server.url)
    fill_text(page, "builder-runs", typed)
    get_by_key(page, "builder-submit").get_by_role("button").click()
    wait_for_app_run(page)
    error = page.get_by_test_id("stSidebar").get_by_test_id("stAlertContentError")
    expect(error).to_contain_text(
        f"{LABELS['runs']}: '{typed}' is not a whole number from 1 to 10,000")
    expect(get_by_key(page, "builder-runs").locator("input")).to_have_value(typed)  # kept
    assert not list(app_server.results_dir.glob("*/spec.json"))
