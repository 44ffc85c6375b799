"""The compare page as the regression gate in a real browser: opened on a pair named in the URL
(what ``kernel-dashboard --compare`` prints), on two H200 recordings of the fp16 matmul a day
apart, then with no slowdown allowed. Screenshots: tests/artifacts/views/compare-gate*.png."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import (AppServer, fill_text, get_by_key, open_app, wait_for_app_run,
                                wait_for_elements)
from tests.e2e.test_views_tour import _full_page_screenshot

pytestmark = pytest.mark.e2e


def test_compare_page_opens_on_the_url_pair_and_shows_the_gate(
        page, bundled_app_server: AppServer, artifacts_dir: Path) -> None:  # type: ignore[no-untyped-def]
    views = artifacts_dir / "views"
    views.mkdir(parents=True, exist_ok=True)
    open_app(page, f"{bundled_app_server.url}/compare",
             "?baseline=h200-cupti-j1-fp16&candidate=h200-cupti-matmul-sweep")
    wait_for_elements(page)
    main = page.get_by_test_id("stMain")
    assert page.locator("[data-testid='stException']").count() == 0
    expect(get_by_key(page, "compare-candidate").get_by_role("combobox")).to_have_value(
        "h200-cupti-matmul-sweep")
    # n=1024 (+3.08 %, CI -0.49 .. +6.89 %) straddles the 3 % allowed (issue 21)
    expect(main).to_contain_text("4 matching annotation × config pairs: 3 same, 1 ambiguous")
    expect(main.get_by_test_id("stPlotlyChart").first).to_be_visible(timeout=60_000)
    _full_page_screenshot(page, views / "compare-gate.png")
    fill_text(page, "compare-max-slowdown", 0)
    wait_for_app_run(page)
    expect(main).to_contain_text("regressed")  # n=2048: +1.38 %, CI +0.82 .. +1.93 % above 0 %
    _full_page_screenshot(page, views / "compare-gate-strict.png")
