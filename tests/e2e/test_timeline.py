"""The timeline in a real browser: the embedded chart on the clocks view (screenshot
``tests/artifacts/views/clocks-timeline.png``) and the trace downloaded from the Files page,
which must be the head-less ``python -m profiling_worker timeline`` trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from profiling_worker.bundle.timeline import build_trace, trace_problems
from tests.e2e.conftest import AppServer, get_by_key, open_app, wait_for_elements
from tests.scenarios import SCENARIOS

pytestmark = pytest.mark.e2e
JOB = "h200-cupti-stability"
BUNDLE = SCENARIOS / JOB


def test_timeline_on_the_clocks_view_and_its_trace_from_the_files_page(
        page, bundled_app_server: AppServer, artifacts_dir: Path) -> None:  # type: ignore[no-untyped-def]
    open_app(page, f"{bundled_app_server.url}/clocks", f"?job={JOB}")
    wait_for_elements(page)
    chart = page.get_by_test_id("stPlotlyChart").filter(has_text="Timeline:")
    expect(chart).to_be_visible(timeout=60_000)
    chart.scroll_into_view_if_needed()
    expect(chart.locator("g.trace.bars path").first).to_be_attached()
    expect(chart).to_contain_text("region fp16")
    out = artifacts_dir / "views"
    out.mkdir(parents=True, exist_ok=True)
    chart.screenshot(path=str(out / "clocks-timeline.png"))

    open_app(page, f"{bundled_app_server.url}/files", f"?job={JOB}")
    wait_for_elements(page)
    with page.expect_download() as info:
        get_by_key(page, "files-timeline").get_by_role("button", name="Download the timeline").click()
    download = info.value
    assert download.suggested_filename == f"{JOB}-timeline.json"
    trace = json.loads(Path(download.path()).read_text(encoding="utf-8"))
    assert trace == build_trace(BUNDLE) and trace_problems(trace) == []
