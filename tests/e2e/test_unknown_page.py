"""A mistyped page path says so (issue 37: ``/nosuchpage`` silently showed the Size sweep), in
the app's banner only: Streamlit's own "Page not found" modal was drawn over it (a fresh
user's find)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import AppServer, open_app

pytestmark = pytest.mark.e2e


def test_an_unknown_page_path_is_named_not_found(page, app_server: AppServer) -> None:  # type: ignore[no-untyped-def]
    open_app(page, f"{app_server.url}/nosuchpage")
    expect(page.get_by_test_id("stMain").get_by_text("There is no page")).to_be_visible()
    expect(page.get_by_test_id("stMain")).to_contain_text("nosuchpage")
    page.wait_for_timeout(1_000)  # Streamlit's modal came with the first page's messages
    expect(page.get_by_role("dialog")).to_have_count(0)
    expect(page.get_by_text("Page not found")).to_have_count(0)
    open_app(page, f"{app_server.url}/stability")
    expect(page.get_by_test_id("stMain").get_by_text("There is no page")).to_have_count(0)
    expect(page.get_by_test_id("stHeading").filter(has_text="Stability").first).to_be_visible()
