"""Import in a real browser: a plain Nsight Compute report (no NVTX) and an ncu CSV export,
recorded on the H200, uploaded through the Import page; the new job opens in the kernels view
and the bound view, each drawing a chart. Screenshots go to tests/artifacts/import/."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

from app.services.import_client import MAX_UPLOAD_MB, run_import
from app.ui import importing
from tests.e2e.conftest import AppServer, get_by_key, open_app, wait_for_app_run, \
    wait_for_elements

pytestmark = pytest.mark.e2e

PLAIN = Path(__file__).resolve().parents[1] / "fixtures" / "h200_import" / "ncu_plain"
TWO_CALLS = PLAIN.parent / "nspy096" / "two_calls"
CHART_TIMEOUT_MS = 60_000


MUL = "vectorized_elementwise_kernel (MulFunctor)"


def _jobs(results_dir: Path) -> set[str]:
    """The ids of the jobs in the result store (folders with a manifest)."""
    return {p.parent.name for p in results_dir.glob("*/manifest.json")}


def test_the_upload_limit_is_said_once(page, app_server: AppServer) -> None:  # type: ignore[no-untyped-def]
    """A fresh user of session 21 read Streamlit's own "200MB per file" in the drop zone
    beside the page's caption of every limit: the drop zone's words are hidden, the caption's
    stay (app.ui.importing.one_limit_css)."""
    open_app(page, f"{app_server.url}/import")
    wait_for_elements(page)
    expect(page.get_by_test_id("stFileUploaderDropzoneInput")).to_have_count(1)
    expect(page.get_by_test_id("stFileUploaderDropzoneInstructions")).to_be_hidden()
    shown = page.get_by_test_id("stMain").inner_text()
    assert shown.count(f"{MAX_UPLOAD_MB} MB per file") == 1, shown
    assert f"{MAX_UPLOAD_MB}MB per file" not in shown


@pytest.mark.parametrize("source, kernel", [("plain.ncu-rep.gz", MUL), ("raw.csv", MUL),
                                            # a plain .ncu-rep (the browser refused it once)
                                            ("default_set.ncu-rep", "distribution_elementwise")])
def test_upload_then_kernels_and_bound_views_draw(page, app_server: AppServer,
                                                  artifacts_dir: Path, source: str,
                                                  kernel: str) -> None:  # type: ignore[no-untyped-def]
    shots = artifacts_dir / "import"
    shots.mkdir(exist_ok=True)
    open_app(page, f"{app_server.url}/import")
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(PLAIN / source))
    expect(page.get_by_test_id("stMain").get_by_text(source, exact=True)).to_be_visible()
    wait_for_app_run(page)
    before = _jobs(app_server.results_dir)
    get_by_key(page, "import-run").get_by_role("button").click()
    success = page.get_by_test_id("stAlertContentSuccess")
    expect(success).to_be_visible(timeout=120_000)
    (job_id,) = _jobs(app_server.results_dir) - before  # the import's one new job
    assert job_id in success.inner_text() and source in success.inner_text()
    stem = source.split(".")[0]
    # default_set.ncu-rep is here for the upload; its bound view is not checked here
    for view in ("kernels",) if source.endswith(".ncu-rep") else ("kernels", "bound"):
        open_app(page, f"{app_server.url}/{view}", f"?job={job_id}")
        wait_for_elements(page)
        expect(page.locator("[data-testid='stException']")).to_have_count(0)
        chart = page.get_by_test_id("stPlotlyChart").locator(".js-plotly-plot").first
        expect(chart).to_be_visible(timeout=CHART_TIMEOUT_MS)
        main = page.get_by_test_id("stMain").inner_text()
        assert kernel in main, view
        chart.scroll_into_view_if_needed()
        page.mouse.move(0, 0)
        page.screenshot(path=str(shots / f"{stem}-{view}.png"))


def test_several_files_in_one_upload_become_a_job_each(page, app_server: AppServer,
                                                      artifacts_dir: Path,
                                                      tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A report, the CSV export of another profile, the CSVs and ncu log of one nsight-python
    call, and ncu's console log of no call in one drop: three jobs, each named with its files,
    and an error naming the lone log."""
    call = [TWO_CALLS / f"{kind}-scale-0.{ext}" for kind, ext in (
        ("profiled_data", "csv"), ("processed_data", "csv"), ("ncu-output", "log"))]
    sources = [PLAIN / "default_set.ncu-rep", PLAIN / "raw.csv", *call, PLAIN / "record.log"]
    open_app(page, f"{app_server.url}/import")
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files([str(p) for p in sources])
    for p in sources:  # long names are shortened in the list; the remove buttons name them
        expect(page.get_by_role("button", name=f"Remove {p.name}", exact=True)).to_be_visible()
    wait_for_app_run(page)
    before = _jobs(app_server.results_dir)
    get_by_key(page, "import-run").get_by_role("button").click()
    success = page.get_by_test_id("stAlertContentSuccess")
    expect(success).to_have_count(3, timeout=120_000)
    texts = [success.nth(i).inner_text() for i in range(3)]
    jobs = _jobs(app_server.results_dir) - before
    assert len(jobs) == 3 and [sum(j in t for j in jobs) for t in texts] == [1] * 3, texts
    assert [sum(p.name in t for t in texts) for p in sources[:-1]] == [1] * 5
    (together,) = [t for t in texts if call[0].name in t]
    assert all(p.name in together for p in call)  # one call's files: one job
    error = page.get_by_test_id("stAlertContentError")
    expect(error).to_have_count(1)
    # a lone ncu log is refused as what it is (the worker's own reason for it alone), its name
    # once, in the box's title (session 22: said twice)
    (alone,) = importing.group_refusals(run_import([PLAIN / "record.log"], tmp_path,
                                                   sys.executable))
    assert "ncu's log" in alone.message and "record.log" not in alone.message
    assert f"{importing.failed_kind('record.log')}: {alone.message}" in error.inner_text()
    assert error.inner_text().count("record.log") == 1
    page.screenshot(path=str(artifacts_dir / "import" / "several-files.png"), full_page=True)


#: Scrolls every scrolled element of the page back to its top (the page as it opens).
TO_TOP = ("() => { for (const e of document.querySelectorAll('*')) "
          "{ if (e.scrollTop) e.scrollTop = 0; } window.scrollTo(0, 0); }")


@pytest.mark.parametrize("width, height", [(1400, 900), (1000, 700)])
def test_imported_as_is_in_the_window_after_import(page, app_server: AppServer, width: int,
                                                   height: int) -> None:  # type: ignore[no-untyped-def]
    """Session 26's fresh user: after an import, "Imported as ..." stood under the page's
    list of formats, the uploader's limits and the NVTX choice, below the fold at 1400x900 and
    1000x700. With the page at its top, as it opens, the box is in the window after Import."""
    page.set_viewport_size({"width": width, "height": height})
    open_app(page, f"{app_server.url}/import")
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(PLAIN / "raw.csv"))
    expect(page.get_by_test_id("stFileChipName")).to_have_text("raw.csv")
    wait_for_app_run(page)
    get_by_key(page, "import-run").get_by_role("button").click()
    success = page.get_by_test_id("stAlertContentSuccess")
    expect(success).to_be_visible(timeout=120_000)
    wait_for_app_run(page)
    wait_for_elements(page)
    page.evaluate(TO_TOP)
    box = success.bounding_box()
    assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= height, box
