"""What a user sees at common screen sizes, in a real browser on the bundled H200 results.

At 1400x900 and 1920x1080: every page is one click away (all links of the grouped bar inside
the viewport, none behind "View more"), the job form's Run button is inside the viewport, every
page opened by one click on its link draws without any request to a host other than the local
server (no web fonts, no icon service), and a submitted job's panel entry (status, progress,
Cancel) is inside the viewport without scrolling. Screenshots go to ``tests/artifacts/layout``.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

from app.ui.navigation import SECTIONS
from tests.e2e.conftest import AppServer, fill_text, get_by_key, open_app, wait_for_app_run

pytestmark = pytest.mark.e2e

SIZES = ((1400, 900), (1920, 1080))
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}
N_PAGES = sum(len(entries) for entries in SECTIONS.values())


def _inside(box: dict | None, width: int, height: int) -> bool:
    return bool(box) and box["x"] >= 0 and box["y"] >= 0 and \
        box["x"] + box["width"] <= width and box["y"] + box["height"] <= height


@pytest.fixture(scope="module")
def layout_dir(artifacts_dir: Path) -> Path:
    out = artifacts_dir / "layout"
    out.mkdir(parents=True, exist_ok=True)
    return out


@pytest.mark.parametrize("width, height", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_every_page_one_click_away_and_nothing_leaves_the_machine(
        browser, own_bundled_app_server: AppServer, layout_dir: Path, width: int, height: int
) -> None:  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(60_000)
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url)
            if urlparse(r.url).hostname not in LOOPBACK and not r.url.startswith("data:")
            else None)
    try:
        open_app(page, own_bundled_app_server.url)
        links = page.get_by_test_id("stPageLink-NavLink")
        expect(links).to_have_count(N_PAGES, timeout=60_000)
        for i in range(N_PAGES):
            assert _inside(links.nth(i).bounding_box(), width, height), links.nth(i).inner_text()
        run = get_by_key(page, "builder-submit").locator("button")
        assert _inside(run.bounding_box(), width, height), "Run is below the fold"
        page.screenshot(path=str(layout_dir / f"frame-{width}x{height}.png"))
        hrefs = [links.nth(i).get_attribute("href") for i in range(N_PAGES)]
        for href in hrefs:  # one click each, from whatever page is open
            page.locator(f"[data-testid='stPageLink-NavLink'][href='{href}']").click()
            wait_for_app_run(page)
            expect(page.get_by_test_id("stMain").get_by_test_id("stHeading").first).to_be_visible()
            assert page.locator("[data-testid='stException']").count() == 0, href
        assert outside == [], f"requests left the machine: {sorted(set(outside))}"
    finally:
        context.close()


@pytest.mark.parametrize("width, height", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_job_progress_in_sight_after_run(browser, own_bundled_app_server: AppServer,
                                         layout_dir: Path, width: int,
                                         height: int) -> None:  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        open_app(page, own_bundled_app_server.url)
        # Sizes and runs that keep the CPU backend busy for minutes on any CI machine: the job must
        # still be active when the assertions look for its Cancel button (32, 64 finished first once).
        fill_text(page, "builder-sizes", "2048, 4096")
        # runs differ by viewport: an identical spec queued within 30 s asks first (repeat guard)
        fill_text(page, "builder-runs", 500 + SIZES.index((width, height)))
        entries = page.locator("[class*='st-key-panel-job-']")
        before = entries.count()  # the server is shared: earlier tests' jobs are listed too
        get_by_key(page, "builder-submit").locator("button").click()
        expect(entries).to_have_count(before + 1, timeout=30_000)
        entry = entries.first  # newest first: the job just submitted
        cancel = entry.get_by_test_id("stButton")
        expect(cancel).to_be_visible()  # while the job is active
        # It may wait in the queue while an earlier test's cancelled job stops; then it runs.
        expect(entry.get_by_test_id("stProgress")).to_be_visible(timeout=60_000)
        page.screenshot(path=str(layout_dir / f"job-{width}x{height}.png"))
        for part in (entry.get_by_test_id("stProgress"), cancel):
            assert _inside(part.bounding_box(), width, height), "job progress below the fold"
        entry.get_by_test_id("stButton").locator("button").click()  # leave no job running
        # Leave the server idle for the next test: its job panel stops polling once no job is active.
        expect(entry).to_contain_text("cancelled", timeout=60_000)
    finally:
        context.close()


def test_the_link_bar_starts_near_the_top_and_the_menu_stays_clickable(
        browser, own_bundled_app_server: AppServer, layout_dir: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue 25: an empty band of about 90 px sat above the link bar (Streamlit's 6rem top
    padding for a header holding only the main menu). Screenshot: layout/top-1400x900.png."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    try:
        open_app(page, own_bundled_app_server.url)
        links = page.get_by_test_id("stPageLink-NavLink")
        expect(links).to_have_count(N_PAGES, timeout=60_000)
        bar = get_by_key(page, "nav-bar").bounding_box()
        assert bar is not None and bar["y"] <= 40, bar
        menu = page.get_by_test_id("stMainMenu")
        box = menu.bounding_box()
        assert box is not None and box["x"] > bar["x"] + bar["width"], (box, bar)  # no overlap
        page.screenshot(path=str(layout_dir / "top-1400x900.png"))
        menu.locator("button").first.click()  # the see-through header still takes clicks
        popover = page.get_by_test_id("stMainMenuPopover")
        expect(popover).to_be_visible()
        page.keyboard.press("Escape")
        expect(popover).to_be_hidden()  # closed before the next click, not racing its close
        # ... and lets a click through to the bar's first row, which lies under it
        links.filter(has_text="Stability").click()
        expect(page).to_have_url(re.compile(r"/stability"))
    finally:
        context.close()


def test_no_link_of_the_bar_wraps_at_1000x700(
        browser, own_bundled_app_server: AppServer, layout_dir: Path) -> None:  # type: ignore[no-untyped-def]
    """A fresh user's find: at 1000 px wide "Stability" wrapped under "Size sweep", its
    section's row too narrow for its four links. Every section's links now lie on one row and
    every label on one line at 1000x700, the rows as close as at 1400 px (issue 37: a 0.5rem
    gap between sections, for sections whose links wrap, took 24 px above the first chart).
    Four rows, not fewer: no two sections fit one row (Performance's label and four links
    leave about 20 px of the bar), and a row per section lets the eye find a page by its
    section's label.
    Screenshot: layout/nav-1000x700.png."""
    context = browser.new_context(viewport={"width": 1000, "height": 700})
    page = context.new_page()
    try:
        open_app(page, own_bundled_app_server.url)
        links = page.get_by_test_id("stPageLink-NavLink")
        expect(links).to_have_count(N_PAGES, timeout=60_000)
        page.screenshot(path=str(layout_dir / "nav-1000x700.png"))
        rows = []
        for section in SECTIONS:
            row = get_by_key(page, f"nav-{section.split()[0].lower()}")
            boxes = [b for b in (link.bounding_box() for link in
                                 row.get_by_test_id("stPageLink-NavLink").all()) if b]
            assert len(boxes) == len(SECTIONS[section]), section
            tops = {round(b["y"]) for b in boxes}
            heights = {round(b["height"]) for b in boxes}
            assert len(tops) == 1 and len(heights) == 1, (section, boxes)  # one row, one line
            rows.append(row.bounding_box())
        gaps = [b["y"] - (a["y"] + a["height"]) for a, b in zip(rows, rows[1:])]
        assert all(-1 <= g <= 1 for g in gaps), gaps  # each row right under the one above
    finally:
        context.close()
