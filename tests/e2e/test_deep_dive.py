"""The deep dive and the rule digest in a real browser, on the default-set report recorded on the
H200 (imported into the results dir by the worker): screenshots
``tests/artifacts/views/deep-dive-default-set.png`` and ``kernels-rule-digest.png``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import AppServer, open_app, wait_for_elements

pytestmark = pytest.mark.e2e
REPORT = (Path(__file__).resolve().parents[1] / "fixtures" / "h200_import" / "ncu_plain"
          / "default_set.ncu-rep")
JOB = "import-default-set"


def test_deep_dive_and_rule_digest_of_a_default_set_report(
        page, own_bundled_app_server: AppServer, artifacts_dir: Path) -> None:  # type: ignore[no-untyped-def]
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "import", str(REPORT), "--out",
                           str(own_bundled_app_server.results_dir / JOB)], capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = artifacts_dir / "views"
    out.mkdir(parents=True, exist_ok=True)
    open_app(page, f"{own_bundled_app_server.url}/deep-dive", f"?job={JOB}")
    wait_for_elements(page)
    main = page.get_by_test_id("stMain")
    expect(main.get_by_test_id("stPlotlyChart").first).to_be_visible(timeout=60_000)
    expect(main.get_by_text("Not in this report: Warp State Statistics")).to_be_visible()
    expect(main.get_by_test_id("stMetric").filter(has_text="Limited by")).to_contain_text(
        "registers")
    assert page.locator("[data-testid='stException']").count() == 0
    page.set_viewport_size({"width": 1400, "height": 5200})
    wait_for_elements(page)
    page.screenshot(path=str(out / "deep-dive-default-set.png"), full_page=True)

    page.set_viewport_size({"width": 1400, "height": 1000})
    open_app(page, f"{own_bundled_app_server.url}/kernels", f"?job={JOB}")
    wait_for_elements(page)
    heading = main.get_by_text("Nsight Compute rules across the job")
    expect(heading).to_be_visible(timeout=60_000)
    heading.scroll_into_view_if_needed()
    digest = main.get_by_test_id("stDataFrame").filter(has=page.get_by_text("Est. saving"))
    expect(main.get_by_test_id("stDownloadButton").filter(has_text="Download CSV").first
           ).to_be_visible()
    page.screenshot(path=str(out / "kernels-rule-digest.png"))
    assert digest.count() <= 1
