"""The bundles of device run 14 (H200) in a real browser, as a no-GPU user opens them: the full-set
deep dive, the rule digest read from a written deep dive (report left out), the clocks page
timeline of 200 CUPTI launches with NVML clocks, and the compare page on the TF32 on/off pair.
Screenshots (tests/artifacts/views/): deep-dive-full-set.png, kernels-rule-digest-detailed.png,
clocks-timeline-cupti.png, compare-gate-tf32-fp32.png."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect

from profiling_worker.bundle.schema import columns as C
from tests.e2e.conftest import AppServer, open_app, wait_for_elements
from tests.e2e.test_views_tour import _full_page_screenshot

pytestmark = pytest.mark.e2e
CHART_TIMEOUT_MS = 60_000
BUNDLED = Path(__file__).resolve().parents[2] / "app" / "bundled"


@pytest.fixture(scope="module")
def views(artifacts_dir: Path) -> Path:
    out = artifacts_dir / "views"
    out.mkdir(parents=True, exist_ok=True)
    return out


def _open(page: Page, server: AppServer, route: str, query: str) -> Locator:
    open_app(page, f"{server.url}/{route}", query)
    wait_for_elements(page)
    assert page.locator("[data-testid='stException']").count() == 0
    return page.get_by_test_id("stMain")


def test_full_set_deep_dive(page: Page, demo_app_server: AppServer,
                            views: Path) -> None:
    main = _open(page, demo_app_server, "deep-dive", "?job=h200-ncu-deepdive-fp16-4096")
    expect(main.get_by_test_id("stPlotlyChart").first).to_be_visible(timeout=CHART_TIMEOUT_MS)
    expect(main).to_contain_text("profiled with")
    expect(main.get_by_test_id("stMetric").filter(has_text="Limited by").first).to_be_visible()
    expect(main).not_to_contain_text("Not in this report: Warp State Statistics")
    _full_page_screenshot(page, views / "deep-dive-full-set.png")


def test_rule_digest_from_the_written_deep_dive(page: Page, demo_app_server: AppServer,
                                                views: Path) -> None:
    main = _open(page, demo_app_server, "kernels", "?job=h200-ncu-matmul-rules")
    heading = main.get_by_text("Nsight Compute rules across the job")
    expect(heading).to_be_visible(timeout=CHART_TIMEOUT_MS)
    summary = json.loads((BUNDLED / "h200-ncu-matmul-rules" / C.REPORT_SUMMARY_FILE).read_text())
    expect(main).to_contain_text(  # every launch's rules, as the report's summary counts them
        f"{summary['launches']} launches, {len(summary['rule_results'])} rule results",
        timeout=CHART_TIMEOUT_MS)
    expect(main).to_contain_text("the report itself is not in this bundle")
    heading.scroll_into_view_if_needed()
    page.screenshot(path=str(views / "kernels-rule-digest-detailed.png"))


def test_clocks_timeline_of_cupti_launches(page: Page, demo_app_server: AppServer,
                                           views: Path) -> None:
    _open(page, demo_app_server, "clocks", "?job=h200-cupti-timeline")
    chart = page.get_by_test_id("stPlotlyChart").filter(has_text="Timeline:")
    expect(chart).to_be_visible(timeout=CHART_TIMEOUT_MS)
    chart.scroll_into_view_if_needed()
    expect(chart.locator("g.trace.bars path").first).to_be_attached()
    expect(chart).to_contain_text("launches at their CUPTI start times")
    expect(chart).to_contain_text("SM clock")
    chart.screenshot(path=str(views / "clocks-timeline-cupti.png"))


def test_compare_on_the_tf32_fp32_pair(page: Page, demo_app_server: AppServer,
                                       views: Path) -> None:
    main = _open(page, demo_app_server, "compare",
                 "?baseline=h200-cupti-gate-tf32&candidate=h200-cupti-gate-fp32")
    expect(main.get_by_test_id("stPlotlyChart").first).to_be_visible(timeout=CHART_TIMEOUT_MS)
    expect(main).to_contain_text("regressed")
    expect(main).to_contain_text("2 regressed")
    _full_page_screenshot(page, views / "compare-gate-tf32-fp32.png")
