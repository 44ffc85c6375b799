"""The main user story in a real browser: fill the sidebar job form, run a small CPU job, watch
it finish in the job panel, and see its chart.

Keys follow ``app/ui/state.py``: ``"<page>-<field>"`` with page ``builder`` for the sidebar
form (``builder-kernels``, ``builder-sizes``, ``builder-runs``, ``builder-backend``, submit
``builder-submit``) and ``panel-job-<job_id>`` for a job's box in the panel.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import (AppServer, choose_option, fill_text, get_by_key, open_app,
                                selected_tags, wait_for_app_run)

pytestmark = pytest.mark.e2e

FORM = "builder"
KERNEL = "matmul"
SIZES = "64, 128"
RUNS = 3
JOB_TIMEOUT_MS = 240_000  # a cold torch import plus 2 sizes x 3 runs on a 2-core CI machine
FINAL = re.compile(r"\b(done|failed|cancelled|interrupted)\b")
JOB_ID = re.compile(r"[?&]job=([^&#]+)")


def _key(field: str) -> str:
    return f"{FORM}-{field}"


def _fill_job_form(page) -> None:  # type: ignore[no-untyped-def]
    sidebar = page.get_by_test_id("stSidebar")
    expect(sidebar).to_be_visible()
    expect(get_by_key(page, _key("submit"))).to_be_visible()
    expect(get_by_key(page, _key("kernels")).locator("[data-tag]").first).to_be_visible()
    tags = selected_tags(page, _key("kernels"))  # read once drawn (the sidebar comes last)
    assert any(t.strip().startswith(KERNEL) for t in tags), f"{KERNEL} not preselected: {tags}"
    choose_option(page, _key("backend"), "cpu")
    fill_text(page, _key("sizes"), SIZES)
    fill_text(page, _key("runs"), RUNS)


def _submitted_job_id(page) -> str:  # type: ignore[no-untyped-def]
    expect(page).to_have_url(JOB_ID)
    match = JOB_ID.search(page.url)
    assert match
    return match.group(1)


def _wait_for_job_end(page, job_id: str) -> str:  # type: ignore[no-untyped-def]
    box = get_by_key(page, f"panel-job-{job_id}")
    expect(box).to_be_visible()
    expect(box).to_contain_text(FINAL, timeout=JOB_TIMEOUT_MS)
    text = box.inner_text()
    return FINAL.search(text).group(1)  # type: ignore[union-attr]


def test_cpu_matmul_job_runs_and_draws_a_chart(page, app_server: AppServer,
                                               artifacts_dir: Path) -> None:  # type: ignore[no-untyped-def]
    open_app(page, app_server.url)
    _fill_job_form(page)

    get_by_key(page, _key("submit")).get_by_role("button").click()
    job_id = _submitted_job_id(page)

    status = _wait_for_job_end(page, job_id)
    panel_text = get_by_key(page, f"panel-job-{job_id}").inner_text()
    assert status == "done", f"job {job_id} ended {status}:\n{panel_text}\n" \
                             f"server log: {app_server.log_path}"
    assert (app_server.results_dir / job_id / "manifest.json").is_file()

    wait_for_app_run(page)
    chart = page.get_by_test_id("stPlotlyChart").locator(".js-plotly-plot").first
    expect(chart).to_be_visible(timeout=60_000)
    expect(chart.locator(".main-svg").first).to_be_attached()
    assert job_id in page.url

    page.mouse.move(0, 0)
    page.screenshot(path=str(artifacts_dir / "job_flow.png"), full_page=True)
