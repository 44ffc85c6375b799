"""The shareable HTML report, written by ``kernel-dashboard --report`` from H200 bundles and
opened in headless Chromium with the network cut off: every plotly figure draws with its traces,
no request leaves the file, and the tables' numbers are the bundles' own. Screenshots:
tests/artifacts/share-report-*.png."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.e2e.conftest import REPO_ROOT
from tests.scenarios import SCENARIOS

pytestmark = pytest.mark.e2e

#: "At most a few MB": plotly.js alone is 4.8 MB of the file (plotly 7.1, minified).
MAX_REPORT_BYTES = 6_000_000


def _write(tmp_path: Path, *bundles: str, extra: tuple[str, ...] = ()) -> Path:
    out = tmp_path / ("-".join(bundles) + ".html")
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    proc = subprocess.run([sys.executable, "-m", "app.cli", "--report",
                           *(str(SCENARIOS / b) for b in bundles), "--out", str(out), *extra],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {out}" in proc.stderr
    assert out.stat().st_size <= MAX_REPORT_BYTES
    return out


def _open_offline(browser, path: Path):  # type: ignore[no-untyped-def]
    """A page on ``path`` in an offline context where any request but the file itself is
    aborted and recorded; returns (page, attempted URLs, console errors)."""
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    context.set_offline(True)
    attempted: list[str] = []

    def route(r) -> None:  # type: ignore[no-untyped-def]
        if r.request.url == path.as_uri():
            r.continue_()
        else:
            attempted.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    page.wait_for_function("window.Plotly !== undefined && document.querySelectorAll("
                           "'.plotly-graph-div').length === document.querySelectorAll("
                           "'.js-plotly-plot').length")
    return page, attempted, errors


def _figures_drawn(page) -> list[int]:  # type: ignore[no-untyped-def]
    """Trace count of every figure div, once plotly drew it (an SVG main layer inside)."""
    return page.evaluate("Array.from(document.querySelectorAll('.plotly-graph-div')).map("
                         "g => g.classList.contains('js-plotly-plot') && g.querySelector("
                         "'.main-svg') ? g.data.length : -1)")


def _column(page, section: str, table_index: int, column: str) -> list[float]:  # type: ignore[no-untyped-def]
    """The exact values (data-value) of ``column`` in a section's table."""
    return page.evaluate(
        """([title, i, col]) => {
          const s = Array.from(document.querySelectorAll('section'))
            .find(x => x.querySelector('h2').textContent === title);
          const t = s.querySelectorAll('table')[i];
          const k = Array.from(t.querySelectorAll('th')).findIndex(h => h.textContent === col);
          return Array.from(t.querySelectorAll('tbody tr'))
            .map(r => parseFloat(r.children[k].dataset.value));
        }""", [section, table_index, column])


def test_job_report_opens_offline_with_its_figures_and_the_bundles_numbers(
        browser, tmp_path: Path, artifacts_dir: Path) -> None:  # type: ignore[no-untyped-def]
    job = "h200-ncu-matmul-rules"  # 3 dtypes x 5 sizes, rules over 48 launches
    page, attempted, errors = _open_offline(browser, _write(tmp_path, job))
    traces = _figures_drawn(page)
    assert len(traces) >= 6 and min(traces) > 0, traces
    assert attempted == [] and errors == []
    agg = pd.read_parquet(SCENARIOS / job / "tables" / "aggregated.parquet")
    time = agg[agg["Metric"] == "gpu__time_duration.sum"]
    shown = _column(page, "Stability", 0, "AvgValue")  # µs, as the stability page
    assert sorted(shown) == pytest.approx(sorted(time["AvgValue"] / 1e3), rel=1e-12)
    runs = _column(page, "Stability", 0, "NumRuns")
    assert sorted(runs) == sorted(time["NumRuns"].astype(float))
    main = page.locator("body")
    assert "Theoretical Occupancy" in main.inner_text()  # the rule digest's top rule
    # the Size sweep's table (16 columns) is wider than the page: its box scrolls sideways to
    # the last column and says so above it (it looked cut off at the right edge)
    wide = page.locator("section").filter(has=page.get_by_role("heading", name="Size sweep",
                                                                exact=True)).locator(".wide")
    assert wide.evaluate("b => b.scrollWidth > b.clientWidth && b.classList.contains('more')")
    assert wide.evaluate("b => { b.scrollLeft = b.scrollWidth; const r = b.getBoundingClientRect();"
                         " const last = b.querySelector('th:last-child').getBoundingClientRect();"
                         " return b.scrollLeft > 0 && last.right <= r.right + 1; }")
    assert "scroll it sideways" in wide.evaluate("b => b.previousElementSibling.textContent")
    page.screenshot(path=str(artifacts_dir / "share-report-job.png"), full_page=False)
    page.context.close()


def test_comparison_report_carries_the_gates_verdict(
        browser, tmp_path: Path, artifacts_dir: Path) -> None:  # type: ignore[no-untyped-def]
    base, candidate = "h200-cupti-gate-tf32", "h200-cupti-gate-fp32"  # TF32 off: slower
    gate = subprocess.run([sys.executable, "-m", "profiling_worker", "compare",
                           str(SCENARIOS / base), str(SCENARIOS / candidate)], capture_output=True,
                          text=True, env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)),
                          timeout=120, check=False)
    assert gate.returncode == 1  # the CLI: regressed
    page, attempted, errors = _open_offline(browser, _write(tmp_path, base, candidate))
    assert min(_figures_drawn(page)) > 0
    assert attempted == [] and errors == []
    text = page.locator("body").inner_text()
    assert "Gate verdict: regressed" in text and "exit code 1" in text
    agg = pd.read_parquet(SCENARIOS / base / "tables" / "aggregated.parquet")
    time = agg[agg["Metric"] == "gpu__time_duration.sum"]
    assert sorted(_column(page, "Regression gate", 0, "BaselineAvg")) == pytest.approx(
        sorted(time["AvgValue"]), rel=1e-12)
    page.locator("section").first.screenshot(path=str(artifacts_dir
                                                      / "share-report-comparison.png"))
    page.context.close()


def test_files_page_download_is_the_same_report_and_opens_offline(
        page, browser, bundled_app_server, tmp_path: Path, artifacts_dir: Path) -> None:  # type: ignore[no-untyped-def]
    """The Files page's button (built on click) gives the file `--report` writes, byte for
    byte but for nothing: same sections, same figures, same numbers."""
    from tests.e2e.conftest import get_by_key, open_app, wait_for_elements

    job = "h200-ncu-deepdive-fp16-4096"  # every Nsight Compute section of one launch
    open_app(page, f"{bundled_app_server.url}/files", f"?job={job}")
    wait_for_elements(page)
    with page.expect_download(timeout=120_000) as info:
        get_by_key(page, "files-report").get_by_role("button").click()
    download = info.value
    assert download.suggested_filename == f"{job}-report.html"
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)
    assert saved.read_bytes() == _write(tmp_path, job).read_bytes()
    report, attempted, errors = _open_offline(browser, saved)
    assert min(_figures_drawn(report)) > 0 and attempted == [] and errors == []
    from app.core.views import deep_dive as D
    from app.services import report_client

    answer = report_client.ask(sys.executable, "deepdive", SCENARIOS / job,
                               dict(os.environ, PYTHONPATH=str(REPO_ROOT)))
    resource, blocks = D.occupancy(answer.data(), 0)[1]  # type: ignore[misc]
    assert f"Limited by: {resource} ({blocks:g} block" in report.locator("body").inner_text()
    report.locator("section").filter(has_text="Deep dive").first.screenshot(
        path=str(artifacts_dir / "share-report-deep-dive.png"))
    report.context.close()


def test_compare_page_download_carries_the_pages_verdict(
        page, browser, bundled_app_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The Compare page's counts and its downloaded report's verdict are one judgement."""
    from playwright.sync_api import expect

    from tests.e2e.conftest import get_by_key, open_app, wait_for_elements

    base, candidate = "h200-cupti-gate-tf32", "h200-cupti-gate-fp32"
    open_app(page, f"{bundled_app_server.url}/compare",
             f"?baseline={base}&candidate={candidate}")
    expect(page.get_by_test_id("stMain")).to_contain_text(
        "2 matching annotation × config pairs: 2 regressed", timeout=120_000)
    wait_for_elements(page)
    with page.expect_download(timeout=120_000) as info:
        get_by_key(page, "compare-report").get_by_role("button").click()
    saved = tmp_path / info.value.suggested_filename
    info.value.save_as(saved)
    assert saved.name == f"compare-{candidate}-vs-{base}.html"
    report, attempted, errors = _open_offline(browser, saved)
    assert attempted == [] and errors == [] and min(_figures_drawn(report)) > 0
    text = report.locator("body").inner_text()
    assert "Gate verdict: regressed" in text and "2 regressed, 0 improved" in text
    report.context.close()
