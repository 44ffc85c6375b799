"""A table whose rows are in several units sorts by value (issue 37): One kernel's table of
every value (ns, %, Hz, byte rows, each unit with its own decimals) was text, and a click on
AvgValue's header (now headed in words) put "1,978,513,520" before "21,437.5". The numbers now stay numbers behind
each unit's text (app.ui.panels.styled). Screenshot: tests/artifacts/views/one-kernel-sorted.png."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from app.core.table_text import header
from profiling_worker.bundle.schema import columns as C
from tests.e2e.conftest import AppServer, open_app, wait_for_elements

pytestmark = pytest.mark.e2e
TIMEOUT_MS = 60_000
COLUMN = header(C.AVG)  # AvgValue, headed in words


def test_a_column_of_several_units_sorts_by_value(page, bundled_app_server: AppServer,  # type: ignore[no-untyped-def]
                                                  artifacts_dir: Path) -> None:
    page.set_viewport_size({"width": 1400, "height": 1200})
    open_app(page, f"{bundled_app_server.url}/one-kernel", "?job=h200-ncu-matmul-sweep")
    wait_for_elements(page)
    frames = page.get_by_test_id("stDataFrame")
    table = frames.filter(has=page.locator("th", has_text=COLUMN)).first
    expect(table).to_be_visible(timeout=TIMEOUT_MS)
    table.scroll_into_view_if_needed()
    headers = table.locator("table thead th")  # the grid's accessible copy: its text and order
    box = table.bounding_box()
    assert box is not None
    # the grid is drawn on a canvas: click along its header row until AvgValue is the column
    # sorted (each click sorts the column under it, or turns its order round; the accessible
    # copy follows a moment later)
    for x in range(int(box["x"]) + 30, int(box["x"] + box["width"]), 40):
        _click_header(page, headers, x, box["y"] + 15)
        if any(t.endswith(f" {COLUMN}") for t in headers.all_inner_texts()):
            break
    shown = headers.all_inner_texts()
    (at,) = [i for i, t in enumerate(shown) if t.endswith(f" {COLUMN}")]
    cells = [r.locator("td").nth(at).inner_text() for r in table.locator("table tbody tr").all()]
    values = [float(c.replace(",", "")) for c in cells if c.strip() not in ("", "—")]
    ascending = shown[at].startswith("↑")
    assert len(values) >= 8 and values == sorted(values, reverse=not ascending), (shown, values)
    page.mouse.move(0, 0)
    views = artifacts_dir / "views"
    views.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(views / "one-kernel-sorted.png"), full_page=True)


def _click_header(page, headers, x: float, y: float) -> None:  # type: ignore[no-untyped-def]
    """Click the header row at (x, y), then wait for the headers' text to change (a column
    sorted, or its order turned round). A click on the border of two columns (their resize
    handle) sorts nothing: the wait ends without a change, and the caller moves on."""
    before = headers.all_inner_texts()
    page.mouse.click(x, y)
    try:
        expect(headers).not_to_have_text(before, timeout=5_000)
    except AssertionError:
        pass
