"""Kernel names and rule savings as a reader sees them (issue 37): the Kernel counts table of
the ncu rules job shortens each ' + '-joined cuBLAS name in the middle (the ends that tell
them apart stay) and the rule digest ranks savings capped at the speed-of-light roof beside
Nsight Compute's own estimate. Screenshot: tests/artifacts/views/kernels-counts-and-rules.png."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from app.core.table_text import header
from tests.e2e.conftest import AppServer, open_app, wait_for_elements

pytestmark = pytest.mark.e2e
TIMEOUT_MS = 60_000


def test_kernel_counts_and_capped_rule_savings(page, bundled_app_server: AppServer,  # type: ignore[no-untyped-def]
                                               artifacts_dir: Path) -> None:
    open_app(page, f"{bundled_app_server.url}/kernels", "?job=h200-ncu-matmul-rules")
    wait_for_elements(page)
    main = page.get_by_test_id("stMain")
    counts = main.get_by_text("Kernel counts per annotation × config")
    expect(counts).to_be_visible(timeout=TIMEOUT_MS)
    rules = main.get_by_text("Nsight Compute rules across the job")
    expect(rules).to_be_visible(timeout=TIMEOUT_MS)
    expect(main).to_contain_text("launches, 366 rule results", timeout=TIMEOUT_MS)
    assert page.locator("[data-testid='stException']").count() == 0
    counts.scroll_into_view_if_needed()
    views = artifacts_dir / "views"
    views.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size({"width": 1400, "height": 1600})
    page.screenshot(path=str(views / "kernels-counts-and-rules.png"), full_page=True)


def test_the_run_audit_is_in_sight_in_the_kernels_table(browser, bundled_app_server: AppServer,  # type: ignore[no-untyped-def]
                                                        artifacts_dir: Path) -> None:
    """A fresh user's find: at 1400x900 the Kernels table's Run audit column was off screen,
    right of the long kernel names. It now follows Annotation, Config and n, inside the
    table's visible width; and so do the measured columns, MeanTimeUs and SharePct (a
    reviewer's find: they were off screen right of the names, which now come after them).
    Screenshot: tests/artifacts/views/kernels-table-1400x900.png."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    try:
        open_app(page, f"{bundled_app_server.url}/kernels", "?job=h200-ncu-matmul-sweep")
        wait_for_elements(page)
        page.get_by_test_id("stMain").get_by_text("Download chart (HTML)").first \
            .scroll_into_view_if_needed(timeout=TIMEOUT_MS)  # the table above it mounts
        frames = page.get_by_test_id("stDataFrame")
        frames.first.wait_for(timeout=TIMEOUT_MS)
        table = frames.filter(has=page.locator("th", has_text="Kernel")).first
        expect(table).to_be_visible(timeout=TIMEOUT_MS)
        table.scroll_into_view_if_needed()
        views = artifacts_dir / "views"
        views.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(views / "kernels-table-1400x900.png"))
        # the grid's accessible copy: the headers of the columns in sight, in the order drawn
        headers = [t.strip() for t in table.locator("table thead th").all_inner_texts()]
        assert headers.index("Run audit") == headers.index("n") + 1, headers
        assert headers.index("Run audit") < headers.index("Kernel"), headers
        for measured in map(header, ("MeanTimeUs", "SharePct")):  # in sight, before the names
            assert measured in headers and headers.index(measured) < headers.index("Kernel"), \
                headers
    finally:
        context.close()
