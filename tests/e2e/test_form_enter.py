"""Enter in a job-form field does not start a job; only Run does (a new user's trial made three
jobs by pressing Enter after each field, the first with the default runs)."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import AppServer, get_by_key, open_app

pytestmark = pytest.mark.e2e


def test_enter_in_a_field_submits_nothing(page, app_server: AppServer) -> None:  # type: ignore[no-untyped-def]
    open_app(page, app_server.url)
    box = get_by_key(page, "builder-sizes").locator("input, textarea").first
    box.fill("64, 128")
    box.press("Enter")
    page.wait_for_timeout(3000)  # a submitted job would be listed in the panel by now
    assert page.locator("[class*='st-key-panel-job-']").count() == 0
    assert not list(app_server.results_dir.glob("*/spec.json"))
