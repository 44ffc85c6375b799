"""The kernel's own timeline and baselines in a real browser (issue 28), on the full-set fp16
matmul bundle recorded on the H200 (tests/fixtures/bundles) and the default-set import:
screenshots ``tests/artifacts/views/deep-dive-pm-sampling.png``, ``deep-dive-baselines.png``
and ``deep-dive-baselines-scrolled.png``."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import AppServer, choose_option, get_by_key, open_app, wait_for_app_run, \
    wait_for_elements
from tests.scenarios import scenario_dir

pytestmark = pytest.mark.e2e
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FULL = "h200-ncu-deepdive-fp16-4096"
IMPORTED = "import-default-set"


def _jobs(server: AppServer) -> None:
    shutil.copytree(scenario_dir(FULL), server.results_dir / FULL)
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "import",
                           str(FIXTURES / "h200_import" / "ncu_plain" / "default_set.ncu-rep"),
                           "--out", str(server.results_dir / IMPORTED)], capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_timeline_and_baselines(page, app_server: AppServer,  # type: ignore[no-untyped-def]
                                artifacts_dir: Path) -> None:
    _jobs(app_server)
    out = artifacts_dir / "views"
    out.mkdir(parents=True, exist_ok=True)
    main = page.get_by_test_id("stMain")

    # the server's first run imports the app and asks the worker for the import's deep dive:
    # minutes on a loaded 2-core machine, so the first wait is longer than open_app's
    page.goto(f"{app_server.url}/deep-dive?job={IMPORTED}")
    wait_for_app_run(page, timeout=240_000)
    wait_for_elements(page, timeout=240_000)
    expect(main.get_by_text("Not in this report: PM Sampling")).to_be_visible(timeout=60_000)
    get_by_key(page, "deep-dive-pin").get_by_role("button").click()
    wait_for_app_run(page)
    expect(get_by_key(page, "deep-dive-pin").get_by_role("button")).to_be_disabled()
    assert f"baseline={IMPORTED}" in page.url.replace("%3A", ":")

    # the pin travels in the URL: the matmul job's page opens with it
    open_app(page, f"{app_server.url}/deep-dive", f"?job={FULL}&baseline={IMPORTED}:0")
    wait_for_elements(page)
    heading = main.get_by_role("heading", name="The kernel's own timeline (PM sampling)")
    expect(heading).to_be_visible(timeout=60_000)
    chart = get_by_key(page, "deep-dive-pm-chart")
    expect(chart.locator(".main-svg").first).to_be_visible(timeout=60_000)
    expect(chart).to_contain_text("Time from kernel start (ns)")
    expect(chart).to_contain_text("% of peak")
    expect(main.get_by_text("sampled every 1500 ns")).to_be_visible()
    assert page.locator("[data-testid='stException']").count() == 0
    heading.scroll_into_view_if_needed()
    page.set_viewport_size({"width": 1400, "height": 1300})
    wait_for_elements(page)
    chart.scroll_into_view_if_needed()
    page.screenshot(path=str(out / "deep-dive-pm-sampling.png"))

    choose_option(page, "deep-dive-launch", "fp16 · n=4096 · run 1")
    wait_for_app_run(page)
    wait_for_elements(page)
    table = get_by_key(page, "deep-dive-baseline-0")
    expect(table).to_be_visible(timeout=60_000)
    main.get_by_role("heading", name="Baselines").scroll_into_view_if_needed()
    expect(main.get_by_role("tab", name=f"vs {IMPORTED}:0")).to_be_visible()
    expect(main.get_by_text("coloured by sign only", exact=False)).to_be_visible()
    table.scroll_into_view_if_needed()
    page.screenshot(path=str(out / "deep-dive-baselines.png"))
    grid = table.get_by_test_id("stDataFrame").first
    box = grid.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, 700)  # on to the speed-of-light and occupancy rows (directions known)
    wait_for_elements(page)
    page.screenshot(path=str(out / "deep-dive-baselines-scrolled.png"))
    assert page.locator("[data-testid='stException']").count() == 0
