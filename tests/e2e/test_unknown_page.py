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


@pytest.mark.parametrize("path", ["import_files", "xstability"])
def test_an_unknown_path_ending_in_a_pages_path_is_named_whole(  # type: ignore[no-untyped-def]
        page, app_server: AppServer, artifacts_dir, path: str) -> None:
    """A fresh user's find (s20): ``/import_files`` was named ``import_``: Streamlit's
    ``st.context.url`` cuts a page's path (``files``) off its end. The banner names the path
    the browser asked for."""
    open_app(page, f"{app_server.url}/{path}")
    banner = page.get_by_test_id("stMain").get_by_text("There is no page")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text(f"There is no page {path}: this is")
    page.screenshot(path=str(artifacts_dir / f"unknown-page-{path}.png"))


def test_a_nested_unknown_path_shows_the_same_banner(page, cli_app_server: AppServer) -> None:  # type: ignore[no-untyped-def]
    """A fresh user's find: ``/compare/extra`` drew a blank page (script MIME errors). The
    page shell of ``kernel-dashboard`` (app/streamlit_patches/page_shell.py) sends it to one
    segment, so the app loads and its banner names the path. A plain ``streamlit run`` has no
    page shell: there the nested path stays blank (docs/troubleshooting.md)."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    open_app(page, f"{cli_app_server.url}/compare/extra")
    main = page.get_by_test_id("stMain")
    expect(main.get_by_text("There is no page")).to_be_visible()
    expect(main).to_contain_text("compare/extra")
    expect(page.get_by_text("Page not found")).to_have_count(0)
    assert not [e for e in errors if "MIME" in e], errors
