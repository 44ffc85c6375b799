"""An Nsight Compute job whose second call failed (issue 37) as the app shows it: the runner's
bundle of J1's first call (n=1024, n=2048: the recorded H200 report's values) around the
stand-in nsight of tests/unit/profiling_worker/test_ncu_partial.py, its second call failing as
a kernel that raised at n=8192 or as ncu exiting with an error. Every page that draws it says
at its top, in one box, what was measured, which configs were not and the error, and draws the
configs measured; the sidebar's Job box says failed, partial, as it says a cancelled partial
job (tests/apptest/test_page_partial_job.py for the cpu backend's)."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest
from apptest_helpers import plotly_specs, trace_values

from app.services.result_store import SOURCE_LOCAL, read_info
from app.sidebar.job_selector import box_label
from profiling_worker.bundle.schema import partial
from profiling_worker.bundle.schema.manifest import JobStatus, read_manifest
from tests.scenarios import scenario_report
from tests.unit.profiling_worker.test_ncu_partial import (NCU_ERROR, REFUSED, REPORT,
                                                          record_failed_ncu_job)

PAGES = ("results", "sweep", "stability", "files")
#: How the second call failed -> the error text the note must hold.
FAILURES = {"kernel": REFUSED, "ncu": NCU_ERROR}


@pytest.fixture(scope="module")
def ncu_jobs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """failure -> its job, written once by the runner."""
    root = tmp_path_factory.mktemp("ncu")
    report = root / REPORT
    with gzip.open(scenario_report("h200-ncu-j1-fp16")) as src, open(report, "wb") as dst:
        shutil.copyfileobj(src, dst)
    jobs = {}
    for failure in FAILURES:
        with pytest.MonkeyPatch.context() as monkeypatch:
            jobs[failure] = record_failed_ncu_job(
                monkeypatch, root / f"20270101-000000-ncu-{failure}-0001", report,
                ncu_fails=failure == "ncu")
    return jobs


@pytest.fixture(params=list(FAILURES))
def ncu_job(request, store, ncu_jobs) -> str:
    src = ncu_jobs[request.param]
    shutil.copytree(src, store["results"] / src.name)
    return src.name


def _failure(job_id: str) -> str:
    return job_id.split("-")[3]


@pytest.mark.parametrize("page", PAGES)
def test_every_page_says_what_the_failed_call_left(page, ncu_job, store, app) -> None:
    at = app(page, query={"job": ncu_job})
    assert not at.exception, at.exception
    manifest = read_manifest(store["results"] / ncu_job)
    note = partial.note(manifest)
    assert note is not None  # it names the configs not measured and the error
    assert "n=4096" in note and "n=8192" in note and FAILURES[_failure(ncu_job)] in note
    shown = [w.value.replace("\\", "") for w in (*at.warning, *at.error)]
    assert len([w for w in shown if note in w]) == 1, shown  # one note, at the page's top
    error = FAILURES[_failure(ncu_job)]  # said in that one box only
    assert len([w for w in shown if error in w]) == 1, shown
    if page == "sweep":  # the configs measured are drawn
        xs = {x for spec in plotly_specs(at) for trace in spec["data"] if "x" in trace
              for x in trace_values(trace, "x")}
        assert xs == {1024, 2048}, xs


def test_the_job_box_says_failed_partial(ncu_job, store, app) -> None:
    at = app("results", query={"job": ncu_job})
    assert not at.exception, at.exception
    path = store["results"] / ncu_job
    said = partial.status_text(JobStatus.FAILED, read_manifest(path))
    assert said.startswith(JobStatus.FAILED.value) and "2 of 4" in said
    label = at.sidebar.selectbox(key="sidebar-job").label
    assert label == box_label(read_info(path, SOURCE_LOCAL)) and label.endswith(said), label
