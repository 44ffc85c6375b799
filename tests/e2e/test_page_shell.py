"""In a real browser, on a server started as the README starts it (``python -m app.cli``): the
page shell (app/streamlit_patches/page_shell.py, issue 25) has the browser request Streamlit's plotly chunk
before the app has drawn any element, and the first page is then drawn whole: its chart, the
link bar and the sidebar's job form. A plain ``streamlit run`` serves Streamlit's stock shell,
on which the chunk is requested only after elements are drawn. Screenshot:
``tests/artifacts/page-shell.png``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from app.ui.navigation import SECTIONS
from tests.e2e.conftest import AppServer, get_by_key, open_app

pytestmark = pytest.mark.e2e

#: ms since navigation start at which the app's main block first holds an element.
FIRST_ELEMENT = """
new MutationObserver((_, observer) => {
  if (document.querySelector("[data-testid='stMainBlockContainer'] [data-testid='stElementContainer']")) {
    window.__firstElement = performance.now(); observer.disconnect();
  }
}).observe(document, {subtree: true, childList: true});
"""
PLOTLY_REQUESTED = """() => performance.getEntriesByType('resource')
  .find(e => e.name.includes('/static/js/PlotlyChart.'))?.startTime ?? null"""


def _load(browser: Any, url: str) -> tuple[Any, Any, float, float]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.add_init_script(FIRST_ELEMENT)
    page = context.new_page()
    open_app(page, url)
    chart = page.get_by_test_id("stPlotlyChart").first
    expect(chart.locator(".main-svg .trace").first).to_be_visible(timeout=60_000)
    requested = page.evaluate(PLOTLY_REQUESTED)
    first = page.evaluate("window.__firstElement")
    assert requested is not None and first is not None
    return context, page, float(requested), float(first)


def test_the_shell_requests_plotly_before_anything_is_drawn_and_the_page_is_whole(
        browser: Any, cli_app_server: AppServer, artifacts_dir: Path) -> None:
    context, page, requested, first = _load(browser, cli_app_server.url)
    try:
        assert requested < first, (requested, first)
        links = page.get_by_test_id("stPageLink-NavLink")
        expect(links).to_have_count(sum(len(e) for e in SECTIONS.values()))
        expect(get_by_key(page, "builder-submit").locator("button")).to_be_visible()
        expect(page.get_by_test_id("stSidebar")).to_be_visible()
        page.screenshot(path=str(artifacts_dir / "page-shell.png"))
        # the prewarm thread's reads are taken by now (the chart needed one): it logged
        # "Thread 'kprof-imports': missing ScriptRunContext!" per read (issue 37)
        assert "missing ScriptRunContext" not in cli_app_server.log_path.read_text()
    finally:
        context.close()


def test_a_plain_streamlit_run_requests_plotly_only_with_the_chart(
        browser: Any, bundled_app_server: AppServer) -> None:
    context, _page, requested, first = _load(browser, bundled_app_server.url)
    context.close()
    assert requested > first, (requested, first)
