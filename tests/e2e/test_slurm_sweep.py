"""A sweep on the local Slurm from the browser: fill the form, choose "Run on: Slurm cluster",
run, watch the tasks in the job panel, cancel the array, and read the finished part back on
the page. Needs the Slurm of scripts/local_slurm.sh (skips without it, fails with
KPROF_SLURM_TEST=1)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import (AppServer, choose_option, fill_text, get_by_key, open_app,
                                set_checkbox, wait_for_app_run)
from tests.slurm.conftest import slurm  # noqa: F401  (the fixture)
from app.services import sweep_tasks as T
from app.services.sweep_watch import state_count
from app.sidebar.job_panel import tasks_progress_text
from profiling_worker.bundle.schema import partial

pytestmark = [pytest.mark.e2e, pytest.mark.slurm]
SIZES = "8, 16, 24, 32, 40, 48"
JOB_ID = re.compile(r"[?&]job=([^&#]+)")
TIMEOUT_MS = 240_000


def _some_ended_one_done(total: int) -> re.Pattern[str]:
    """The panel's progress text (job_panel.tasks_progress_text) with 1 to ``total`` - 1 tasks
    ended, its stage counting one task done (sweep_watch.state_count): there is a task left
    to cancel and one to read back."""
    ended = "|".join(re.escape(tasks_progress_text(n, total, "")) for n in range(1, total))
    return re.compile(f"(?:{ended}).*{re.escape(state_count(1, T.DONE))}")


def test_sweep_started_watched_cancelled_and_read_back(  # type: ignore[no-untyped-def]
        slurm: str, page, app_server: AppServer, artifacts_dir: Path) -> None:  # noqa: F811
    open_app(page, app_server.url)
    choose_option(page, "builder-backend", "cpu")
    fill_text(page, "builder-sizes", SIZES)
    fill_text(page, "builder-runs", 2)
    page.get_by_test_id("stExpander").filter(has_text="Where to run").locator("summary").click()
    expect(get_by_key(page, "runon-where")).to_be_visible()  # drawn once opened (a rerun)
    choose_option(page, "runon-where", "Slurm cluster")
    wait_for_app_run(page)
    fill_text(page, "runon-parallelism", 1)  # one task at a time: there is time to cancel
    wait_for_app_run(page)
    set_checkbox(page, "runon-reference", False)
    get_by_key(page, "builder-submit").get_by_role("button").click()
    expect(page).to_have_url(JOB_ID)
    job_id = JOB_ID.search(page.url).group(1)  # type: ignore[union-attr]

    box = get_by_key(page, f"panel-job-{job_id}")
    expect(get_by_key(page, f"panel-tasks-{job_id}")).to_be_visible(timeout=60_000)
    expect(box).to_contain_text(_some_ended_one_done(6), timeout=TIMEOUT_MS)
    array = json.loads((app_server.results_dir / job_id / "manifest.json").read_text())
    assert array["executor"]["name"] == "slurm" and array["executor"]["tasks"] == 6
    page.mouse.move(0, 0)
    page.screenshot(path=str(artifacts_dir / "slurm_sweep_running.png"), full_page=True)

    get_by_key(page, f"panel-cancel-{job_id}").get_by_role("button").click()
    expect(box).to_contain_text("cancelled", timeout=TIMEOUT_MS)
    left = subprocess.run(["squeue", "--noheader", "--name", f"kprof-{job_id}"],
                          capture_output=True, text=True, check=False).stdout.strip()
    assert left == "", left

    wait_for_app_run(page)  # the panel reran the app once: the page reads the merged bundle
    chart = page.get_by_test_id("stPlotlyChart").locator(".js-plotly-plot").first
    expect(chart).to_be_visible(timeout=60_000)
    manifest = json.loads((app_server.results_dir / job_id / "manifest.json").read_text())
    done = [t for t in manifest["sweep"]["tasks"] if t["state"] == "done"]
    assert manifest["status"] == "cancelled" and done
    # the configs of the tasks not done are not measured: a partial job, said as one
    # (partial.note), else the plain cancelled note
    note = partial.note(manifest)
    said = note.split(";")[0] if note else "This job was cancelled"
    expect(page.get_by_text(said).first).to_be_visible(timeout=60_000)
    page.mouse.move(0, 0)
    page.screenshot(path=str(artifacts_dir / "slurm_sweep_cancelled.png"), full_page=True)
