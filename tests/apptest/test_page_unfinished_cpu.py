"""A cpu-backend job that has no results yet (queued) or never will (cancelled): the chart
pages name its own duration metric and draw no control that acts on nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from apptest_helpers import JOB_ID, texts
from app.core.metrics import DURATIONS, REPORT_VALUES, no_values_text
from app.core.pages import SECTIONS
from profiling_worker.bundle.schema.manifest import JobStatus
from app.core.provenance import ANNOTATED_SCOPE, HOST_SCOPE

UNFINISHED = "20261129-230500-matmul-0003"


def unfinished(results: Path, status: str, backend_recorded: bool = True) -> str:
    """A copy of the seeded cpu job as one that never ran is left: its spec.json and a
    manifest of ``status`` (naming the cpu backend where ``backend_recorded``), no tables."""
    path = results / UNFINISHED
    shutil.copytree(results / JOB_ID, path)
    shutil.rmtree(path / "tables")
    manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    kept = {k: manifest[k] for k in ("schema_version", "created_at") if k in manifest}
    kept |= {"backend": {"name": "cpu"}} if backend_recorded else {}
    (path / "manifest.json").write_text(json.dumps(
        {**kept, "job_id": UNFINISHED, "status": status}), encoding="utf-8")
    return UNFINISHED


def _controls(at) -> list[str]:
    """The labels of the page's own controls (the sidebar's are not the page's)."""
    return [w.label for kind in ("selectbox", "segmented_control", "toggle", "slider", "radio",
                                 "multiselect", "number_input", "checkbox")
            for w in at.main.get(kind)]


#: Controls a page draws for a job without values because they choose another job.
JOB_CHOICES = {"compare": ["Baseline"]}
#: Pages about all jobs or none (their filters and uploads act on what they list), not about
#: the selected job's values.
NOT_OF_THE_JOB = {"history", "import_files"}


@pytest.mark.parametrize("page", [e.script.removesuffix(".py") for entries in SECTIONS.values()
                                  for e in entries if e.script.removesuffix(".py")
                                  not in NOT_OF_THE_JOB])
@pytest.mark.parametrize("status", ["queued", "cancelled"])
def test_no_page_draws_controls_without_values(seeded, app, page, status) -> None:
    """Issue 37: the Size sweep's Y axis box read 'Durations (gpu__time_duration.sum)' on a cpu
    job with no values and its time-unit and normalise controls stayed active; Stability drew
    its Metric box and Time unit, Bound its threshold slider and the Roofline its FLOPs and
    Bytes sources over "no values". On every page, no control acts on nothing."""
    at = app(query={"job": unfinished(seeded["results"], status)})
    if page != "sweep":
        at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception
    assert _controls(at) == JOB_CHOICES.get(page, []), _controls(at)
    if page != "backends":  # which explains how each backend measures gpu__time_duration
        assert "gpu__time_duration" not in texts(at)


@pytest.mark.parametrize("page", ["sweep", "stability"])
def test_a_chart_page_says_the_job_has_no_values(seeded, app, page) -> None:
    at = app(query={"job": unfinished(seeded["results"], "queued")})
    if page != "sweep":
        at.switch_page(f"app_pages/{page}.py").run()
    # (queued on the first run; on the next, with no process that owns it, interrupted)
    shown = texts(at)
    said = [no_values_text(DURATIONS, s) for s in (JobStatus.QUEUED, JobStatus.INTERRUPTED)]
    assert any(line in shown for line in said), shown
    assert "host__time_duration" not in shown  # the durations in words, not a column's name


#: What each page that draws a job's values names them and would draw from them
NO_VALUES_YET = {"sweep": (DURATIONS, "the chart"), "one_kernel": ("results", "the table"),
                 "bound_roofline": (DURATIONS, "the roofline"),
                 "results": ("results", "each table"),
                 "cache_clock": (f"durations of job {UNFINISHED}", "the chart")}


@pytest.mark.parametrize("page", NO_VALUES_YET)
def test_a_running_job_says_its_results_come_when_it_ends(seeded, app, page) -> None:
    """A fresh user of session 21: a running job's Size sweep read "This job has no
    host__time_duration.sum values to plot (status: running)", a column's name and not when
    the chart comes. Each page that draws the job's values says they come when it ends."""
    at = app(page, query={"job": unfinished(seeded["results"], "running")})
    assert not at.exception
    shown = texts(at)
    # the page that opens first sees the job running; one switched to after a run may find it
    # interrupted (no process here owns it), and says so
    name, what = NO_VALUES_YET[page]
    said = [no_values_text(name, s, what) for s in (JobStatus.RUNNING, JobStatus.INTERRUPTED)]
    assert any(line in shown for line in said), shown
    assert "host__time_duration" not in shown


def test_one_kernel_scope_from_the_spec(seeded, app) -> None:
    """Issue: One kernel on a cancelled cpu job whose manifest names no backend (the spec
    does) showed nsight-python's scope sentence; the backend is the one the job recorded."""
    at = app(query={"job": unfinished(seeded["results"], "cancelled", backend_recorded=False)})
    at.switch_page("app_pages/one_kernel.py").run()
    assert not at.exception
    infos = [i.value for i in at.info]
    assert HOST_SCOPE in infos and ANNOTATED_SCOPE not in infos, infos


def test_no_report_and_no_audit_heading_without_results(seeded, app) -> None:
    """A fresh user's find: a cancelled job's Files page offered its HTML report (4.8 MB of
    notes and nothing else) and Results tables ended in a "Run audit" heading over nothing."""
    at = app(query={"job": unfinished(seeded["results"], "cancelled")})
    at.switch_page("app_pages/files.py").run()
    assert not at.exception
    labels = [b.proto.label for b in at.get("download_button")]
    assert not [label for label in labels if "report" in label], labels
    # the pages' sentence for a job without values, its state in words (was "(status: …)")
    assert no_values_text(REPORT_VALUES, JobStatus.CANCELLED, "its report") in texts(at)
    at.switch_page("app_pages/results.py").run()
    assert not at.exception
    assert "Run audit" not in [h.value for h in at.subheader]
