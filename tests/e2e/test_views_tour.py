"""A tour of every view in a real browser, on the recorded H200 scenarios (tests/fixtures/bundles).

The server lists the scenarios as its bundled dir (no GPU here, so the app opens those H200 jobs).
Every page of the navigation bar is opened with a job that has data for it; the test waits
for the script run to finish, asserts no exception element, asserts that chart pages draw a
plotly chart, and saves a full-page screenshot to ``tests/artifacts/views/<page>.png`` (light
theme) plus a few in the dark theme (``<page>-dark.png``) for people to look at.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

from app.ui.navigation import SECTIONS
from tests.e2e.conftest import (AppServer, get_by_key, open_app, wait_for_app_run,
                                  wait_for_elements)

pytestmark = pytest.mark.e2e

#: url_path -> bundled job with data for that view ("" = the app's default job).
JOB_FOR = {
    "sweep": "h200-ncu-matmul-sweep",
    "stability": "h200-cupti-stability",
    "bound": "h200-ncu-roofline",
    "memory": "h200-ncu-elementwise",
    "cache-clock": "h200-ncu-elementwise",
    "clocks": "h200-cupti-stability",
    "kernels": "h200-ncu-matmul-sweep",
    "one-kernel": "h200-ncu-matmul-sweep",
    "results": "h200-ncu-matmul-sweep",
    "files": "h200-ncu-roofline",
    "deep-dive": "h200-ncu-deepdive-fp16-4096",  # a section-set report: its sections are drawn
}
#: Views that must draw at least one plotly chart with their default choices.
CHART_PAGES = {"sweep", "stability", "bound", "memory", "clocks", "kernels", "one-kernel",
               "compare", "backends", "cache-clock", "deep-dive"}
#: Views that must be in the navigation (an import page is visited too once it exists).
EXPECTED = CHART_PAGES | {"results", "files", "history", "environment"}
DARK_PAGES = ("sweep", "clocks", "one-kernel")
CHART_TIMEOUT_MS = 60_000


def _nav_paths(page) -> list[str]:  # type: ignore[no-untyped-def]
    """url paths of every page in the navigation bar above the page (the bar is drawn after the
    page, so its links are counted once all are there; links inside the page are not read)."""
    links = get_by_key(page, "nav-bar").get_by_test_id("stPageLink-NavLink")
    expect(links).to_have_count(sum(len(entries) for entries in SECTIONS.values()))
    paths = [urlparse(links.nth(i).get_attribute("href") or "").path.strip("/").rsplit("/", 1)[-1]
             for i in range(links.count())]
    return [p or "sweep" for p in paths]


def _visit(page, url: str, path: str) -> None:  # type: ignore[no-untyped-def]
    job = JOB_FOR.get(path)
    route = "" if path == "sweep" else path
    open_app(page, f"{url}/{route}", f"?job={job}" if job else "")
    wait_for_elements(page)
    main = page.get_by_test_id("stMain")
    expect(main.get_by_test_id("stHeading").first).to_be_visible()
    errors = page.locator("[data-testid='stException']")
    assert errors.count() == 0, f"{path}: {errors.first.inner_text()}"
    charts = main.get_by_test_id("stPlotlyChart")
    if path in CHART_PAGES:
        expect(charts.first).to_be_visible(timeout=CHART_TIMEOUT_MS)
    for i in range(charts.count()):  # every chart drawn, not just placed
        expect(charts.nth(i).locator(".js-plotly-plot .main-svg").first).to_be_attached(
            timeout=CHART_TIMEOUT_MS)


def _full_page_screenshot(page, path: Path) -> None:  # type: ignore[no-untyped-def]
    """Streamlit scrolls inside its main container, so grow the viewport to the content's height
    before the screenshot (``full_page`` alone would show one screen)."""
    height = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll("
        "'[data-testid=stMain], [data-testid=stAppViewContainer], [data-testid=stSidebarContent]')"
        "].map(e => e.scrollHeight), 1000)")
    page.set_viewport_size({"width": 1400, "height": min(int(height) + 40, 16_000)})
    wait_for_app_run(page)
    wait_for_elements(page)
    page.mouse.move(0, 0)
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size({"width": 1400, "height": 1000})


@pytest.fixture(scope="module")
def views_dir(artifacts_dir: Path) -> Path:
    out = artifacts_dir / "views"
    out.mkdir(parents=True, exist_ok=True)
    return out


def test_every_view_renders_on_bundled_h200_jobs(page, bundled_app_server: AppServer,
                                                 views_dir: Path) -> None:  # type: ignore[no-untyped-def]
    open_app(page, bundled_app_server.url)
    paths = _nav_paths(page)
    missing = EXPECTED - set(paths)
    assert not missing, f"not in the navigation: {sorted(missing)} (have {paths})"
    for path in paths:
        _visit(page, bundled_app_server.url, path)
        _full_page_screenshot(page, views_dir / f"{path}.png")


def test_views_in_dark_theme(browser, bundled_app_server: AppServer,
                             views_dir: Path) -> None:  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, color_scheme="dark")
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        for path in DARK_PAGES:
            _visit(page, bundled_app_server.url, path)
            background = page.get_by_test_id("stApp").evaluate(
                "e => getComputedStyle(e).backgroundColor")
            assert background != "rgb(255, 255, 255)", "the app did not follow the dark scheme"
            _full_page_screenshot(page, views_dir / f"{path}-dark.png")
    finally:
        context.close()
