"""The fields a backend does not use, in a real browser: greyed out as soon as the backend is
picked (no Run), the Options' note saying which, and the pick written to the URL
(``?backend=``) so that a reload keeps it (a fresh user's finds)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import (AppServer, choose_option, get_by_key, open_app,
                                wait_for_app_run, wait_for_elements)

pytestmark = pytest.mark.e2e


def _input(page, key: str):  # type: ignore[no-untyped-def]
    return get_by_key(page, key).locator("input").first


def test_picking_a_backend_greys_out_what_it_does_not_send_and_keeps_it_in_the_url(
        page, app_server: AppServer, artifacts_dir) -> None:  # type: ignore[no-untyped-def]
    open_app(page, app_server.url)  # no GPU here: the cpu backend is the form's own
    wait_for_elements(page)
    get_by_key(page, "builder-options").get_by_text("Options", exact=True).click()
    wait_for_app_run(page)
    sidebar = page.get_by_test_id("stSidebar")
    expect(_input(page, "builder-gpu")).to_be_disabled()
    expect(_input(page, "builder-cpu_threads")).to_be_enabled()
    expect(sidebar).to_contain_text("The cpu backend runs on no GPU: the greyed-out fields (and "
                                    "Metrics above) are not sent with its jobs")
    assert "backend=" not in page.url
    page.screenshot(path=str(artifacts_dir / "backend-cpu.png"), full_page=True)
    choose_option(page, "builder-backend", "cupti")
    wait_for_app_run(page)
    expect(_input(page, "builder-cpu_threads")).to_be_disabled()  # at once: no Run
    expect(_input(page, "builder-gpu")).to_be_enabled()
    expect(sidebar).to_contain_text(
        "The cupti backend records its duration only (Metrics above, Extra metrics (Nsight "
        "Compute names)), does not apply Clock control or Replay mode and runs on a GPU (Torch "
        "threads (cpu backend)): the greyed-out fields are not sent with its jobs.")
    expect(_input(page, "builder-clock_control")).to_be_disabled()
    expect(_input(page, "builder-cache_control")).to_be_enabled()
    # no GPU here: the box marks it, and says why under it (the link's check)
    expect(get_by_key(page, "builder-backend").get_by_role("combobox")).to_have_value(
        "cupti ✕")
    expect(sidebar).to_contain_text("cupti cannot run here: no NVIDIA GPU visible to NVML")
    expect(page).to_have_url(re.compile(r"[?&]backend=cupti\b"))
    page.screenshot(path=str(artifacts_dir / "backend-cupti.png"), full_page=True)
    page.reload()  # a new session on this URL: the link's backend, checked as Run would
    wait_for_app_run(page)
    expect(sidebar.get_by_test_id("stAlertContentError")).to_contain_text(
        "cupti in the link cannot run here")  # no GPU here; on a GPU node the form takes it


@pytest.mark.parametrize("width,height", [(1000, 700), (1400, 900)])
def test_a_backend_that_cannot_run_here_reads_whole_in_the_narrow_box(
        browser, app_server: AppServer, artifacts_dir, width: int,  # type: ignore[no-untyped-def]
        height: int) -> None:
    """The half-width Backend box showed a picked unavailable backend as "cupti (canr…": its
    mark is short enough to read whole, the reason in the caption under the box."""
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        open_app(page, app_server.url)
        wait_for_elements(page)
        choose_option(page, "builder-backend", "cupti")
        wait_for_app_run(page)
        box = get_by_key(page, "builder-backend")
        shown = box.get_by_role("combobox")
        expect(shown).to_have_value("cupti ✕")
        assert shown.evaluate("e => e.scrollWidth <= e.clientWidth"), "the label is cut"
        expect(page.get_by_test_id("stSidebar")).to_contain_text(
            "cupti cannot run here: no NVIDIA GPU visible to NVML")
        box.screenshot(path=str(artifacts_dir / f"backend-box-{width}x{height}.png"))
    finally:
        context.close()
