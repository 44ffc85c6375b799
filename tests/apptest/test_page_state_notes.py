"""Every page names a job this server runs in the job manager's state, as the caption and the
job panel do, while the manifest says another (issue 37: the manager sets a state before the
manifest is rewritten, and the "No results yet: the job is running" notes of One kernel,
the roofline, Cache and clock and Deep dive, the cpu timer's line under the caption and
History's delete line read the manifest, about a second behind), nor does the job's report. Each manifest here is set to
a state the manager left behind; nothing rewrites it until the job moves on."""

from __future__ import annotations

import re
from html import escape

from apptest_helpers import submit_cpu_matmul, unescape, wait_until
from app.core.metrics import DURATIONS, no_values_text
from app.core.pages import SECTIONS
from app.core.provenance import host_timer_warning
from app.core.share.build import job_report
from app.ui import cached, job_status
from profiling_worker.bundle.loader import load_bundle
from profiling_worker.bundle.schema import owner
from profiling_worker.bundle.schema.manifest import JobStatus, read_manifest, update_manifest

#: Every page of the bar, by its script's stem.
PAGES = [entry.script.removesuffix(".py") for entries in SECTIONS.values() for entry in entries]


def _says(line: str, status: JobStatus) -> bool:
    return re.search(rf"\b{status.value}\b", line, re.IGNORECASE) is not None


#: The elements a page says a job's state in (its Markdown is "How to read this" and tables).
SAYING = ("caption", "info", "warning", "error", "success")


def _lines(at, other: str) -> list[str]:
    """The lines of the main area's captions and boxes, less those about ``other`` (the other
    job's notice)."""
    text = unescape("\n".join(str(el.value) for kind in SAYING for el in getattr(at.main, kind)))
    return [line for line in text.splitlines() if other not in line]


def _pages_follow(at, job: str, other: str, manager: JobStatus, manifest: JobStatus,
                  store) -> None:
    """Select ``job`` (the manager says ``manager``, its manifest ``manifest``) and open every
    page: none says the manifest's state; the notes that have no values to show, the cpu
    timer's line and History's delete line say the manager's."""
    update_manifest(store["results"] / job, lambda m: {**m, "status": manifest.value})
    at.sidebar.selectbox(key="sidebar-job").set_value(job).run()
    shown: dict[str, list[str]] = {}
    for page in PAGES:
        at.switch_page(f"app_pages/{page}.py").run()
        assert not at.exception, (page, at.exception)
        shown[page] = _lines(at, other)
        stale = [line for line in shown[page] if _says(line, manifest)
                 and not (manager is JobStatus.CANCELLED and "while queued" in line)]
        assert not stale, (page, manager, stale)  # a cancel "while queued" says when it came
    threads = load_bundle(store["results"] / job).cpu_threads
    expected = {
        "one_kernel": no_values_text("results", manager, "the table"),
        "bound_roofline": no_values_text(DURATIONS, manager, "the roofline"),
        "cache_clock": no_values_text(f"durations of job {job}", manager),
        "sweep": host_timer_warning(manager, threads),
    }
    for page, sentence in expected.items():
        assert sentence in shown[page], (page, sentence, shown[page])
    # the job's report (the Files page's download) says it as the pages do
    report = job_report(job_status.as_named(load_bundle(store["results"] / job)))
    assert f" · {manager.value} · " in report and f" · {manifest.value} · " not in report
    assert escape(no_values_text(DURATIONS, manager)) in report
    if not manager.finished:
        assert any(job in line and f" is {manager.value}: " in line
                   for line in shown["deep_dive"]), shown["deep_dive"]
        assert f"The job is {manager.value}: cancel it before deleting it." in shown["history"]


def test_every_page_says_the_managers_state_while_the_manifest_says_another(store, app) -> None:
    at = app()
    first = submit_cpu_matmul(at, "512", 5000)  # minutes of runs: running throughout
    manager = cached.job_manager()
    path = store["results"] / first

    def worker_recorded() -> bool:  # the worker's one write before its result
        worker = read_manifest(path).get("worker") or {}
        return (manager.get(first).status == JobStatus.RUNNING
                and worker.get("process") == owner.WORKER)

    wait_until(worker_recorded)
    second = submit_cpu_matmul(at, "511", 5000)  # queued behind the first on the cpu lane
    try:
        _pages_follow(at, first, second, JobStatus.RUNNING, JobStatus.QUEUED, store)
        _pages_follow(at, second, first, JobStatus.QUEUED, JobStatus.RUNNING, store)
        manager.cancel(second)
        assert manager.wait(second, 60) == JobStatus.CANCELLED
        _pages_follow(at, second, first, JobStatus.CANCELLED, JobStatus.RUNNING, store)
    finally:
        manager.cancel(first)
        manager.cancel(second)
    assert manager.wait(first, 120) == JobStatus.CANCELLED
