"""The sidebar job panel: live progress and cancel of a real job, a failed job's error."""

from __future__ import annotations

import re
from pathlib import Path

from apptest_helpers import submit_cpu_matmul, texts, wait_until
from app.sidebar import job_panel
from app.sidebar.job_panel import WRITING_CANCEL_HELP, WRITING_CANCELLING, warning_head
from app.ui import cached, panels
from profiling_worker.bundle.loader import load_bundle
from profiling_worker.bundle.schema import columns as C, partial
from profiling_worker.bundle.schema.events import WRITING_STAGE
from profiling_worker.bundle.schema.manifest import read_manifest
from profiling_worker.bundle.schema.spec import validate_spec
from profiling_worker.catalog.builtin import CATALOG

#: Kernel file that makes the worker wait, once its runs table is written, for the Cancel.
SLOW_WRITE = Path(__file__).parents[1] / "fixtures" / "kernel_files_slow_write"


def test_progress_then_cancel(store, app) -> None:
    at = app()
    job_id = submit_cpu_matmul(at, "256", 5000)
    manager = cached.job_manager()
    wait_until(lambda: manager.get(job_id).status == "running" and manager.get(job_id).total > 0)
    at.run()
    assert not at.exception
    assert at.sidebar.get("progress"), "a running job shows a progress bar"
    assert "**running**" in texts(at)
    assert _places(at, job_id)[:3] == ["markdown", "progress", "button"]
    at.button(key=f"panel-cancel-{job_id}").click().run()
    assert manager.wait(job_id, 60) == "cancelled"
    at.run()
    assert not at.exception
    # the header, then the bar's and the button's places, empty: an element drawn there in a
    # later run replaces the bar of an earlier one at once (a reload showed "✓ done" over
    # "106/120", a rerun having ended the panel's run before the stale bar was cleared)
    assert _places(at, job_id)[:3] == ["markdown", "empty", "empty"]
    text = texts(at)
    assert "**cancelled**" in text
    # Issue 25: it said "nothing was lost"; the runs measured before the cancel are discarded.
    job = manager.get(job_id)
    assert job.done > 0 and job.total == 5000  # one config's 5,000 runs
    note = job_panel.cancel_note(job)  # the panel's words; the facts in them asserted below
    assert note in text
    # its runs measured (and so discarded), planned (1 config x 5,000 runs), and not run: in
    # any order of words
    how = partial.cancel_said(read_manifest(store["results"] / job_id))
    assert how.startswith("SIGTERM") and how in note  # how it was cancelled, its time's digits
    said = sorted(re.findall(r"\d[\d,]*", note.replace(how, "")))
    assert said == sorted([f"{job.done:,}", "5,000", f"{job.done:,}", f"{5000 - job.done:,}",
                           "1", "5,000"])
    assert "discarded" in note and "nothing was lost" not in text
    # issue 37: the worker log is named as kept only where it holds anything
    logged = (store["results"] / job_id / "worker.log").stat().st_size > 0
    assert ("worker log" in note) == logged
    assert not (store["results"] / job_id / "tables").exists()  # as the note says: no tables
    assert not at.get("button") or all(b.key != f"panel-cancel-{job_id}" for b in at.button)
    # the job records who cancelled it, as a server stop records its own (review, session 23:
    # the panel's Cancel left the signal alone)
    error = read_manifest(store["results"] / job_id)["error"]
    assert error["kind"] == "cancelled" and "SIGTERM" in error["message"]
    assert partial.USER_CANCEL in error["message"] and "user" in partial.USER_CANCEL


def test_cancel_while_the_bundle_is_written_says_so_and_keeps_it(store, app,
                                                                 monkeypatch) -> None:
    """Session 21's fresh user pressed Cancel at "writing bundle" and got "no result tables":
    at that stage the button's help says what a cancel does, the click is answered so, and the
    job ends done with every run and the note that the cancel came after them."""
    monkeypatch.setenv("KPROF_KERNEL_DIRS", str(SLOW_WRITE))
    monkeypatch.setenv("KPROF_SLOW_WRITE_S", "0.5")  # the worker waits for the Cancel, then this
    at = app()
    manager = cached.job_manager()
    job_id = manager.submit(validate_spec({"kernels": ["matmul"], "annotations": ["fp32"],
                                           "configs": [{"n": 8}, {"n": 16}], "runs": 3,
                                           "backend": "cpu"}, CATALOG))
    wait_until(lambda: manager.get(job_id).stage == WRITING_STAGE)
    at.run()
    assert not at.exception, at.exception
    button = at.button(key=f"panel-cancel-{job_id}")
    assert button.help == WRITING_CANCEL_HELP
    button.click().run()
    assert WRITING_CANCELLING in texts(at)
    assert manager.wait(job_id, 60) == "done"
    at.run()
    assert not at.exception, at.exception
    manifest = read_manifest(store["results"] / job_id)
    assert manifest[partial.LATE_CANCEL_KEY].startswith("SIGTERM at ")
    note = partial.late_cancel_note(manifest[partial.LATE_CANCEL_KEY], done=True)
    assert warning_head(note) in texts(at)  # the worker's warning, on the job's card
    assert "no result tables" not in texts(at)
    runs = load_bundle(store["results"] / job_id).table(C.TABLE_RUNS)
    assert runs.groupby(C.CONFIG).size().to_dict() == {0: 3, 1: 3}


def test_failed_job_shows_error_in_panel(store, app, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("KPROF_WORKER_PYTHON", str(tmp_path / "missing-python"))
    at = app()
    job_id = submit_cpu_matmul(at, "32", 1)
    assert cached.job_manager().wait(job_id, 30) == "failed"
    at.run()
    text = texts(at)
    assert "**failed**" in text
    assert "**worker_python_missing**" in text and "KPROF_WORKER_PYTHON" in text


def _places(at, job_id: str) -> list[str]:  # type: ignore[no-untyped-def]
    """The kinds of the elements in the job's box of the panel, in order."""
    def boxes(node):  # type: ignore[no-untyped-def]
        for child in getattr(node, "children", {}).values():
            first = getattr(child, "children", {}).get(0)
            if first is not None and first.type == "markdown" and job_id in first.value:
                yield child
            yield from boxes(child)

    (box,) = list(boxes(at.sidebar))
    return [child.type for child in box.children.values()]


def test_a_queued_jobs_cancel_in_the_panel_records_the_users_reason(store, app) -> None:
    """The panel's Cancel of a job still queued (no worker yet) recorded no reason, where a
    running job's records the user's (issue 37, session 25): both now go through the reason
    file, and the queued job's card says what a cancel before any run says."""
    at = app()
    manager = cached.job_manager()
    spec = validate_spec({"kernels": ["matmul"], "annotations": ["fp32"],
                          "configs": [{"n": 256}], "runs": 5000, "backend": "cpu"}, CATALOG)
    first, queued = manager.submit(spec), manager.submit(spec)  # one lane: the second waits
    at.run()
    assert not at.exception, at.exception
    assert manager.get(queued).status == "queued"
    at.button(key=f"panel-cancel-{queued}").click().run()
    assert not at.exception, at.exception
    job = manager.get(queued)
    assert job.status == "cancelled"
    error = read_manifest(store["results"] / queued)["error"]
    assert error["kind"] == "cancelled" and error["message"].endswith(f"{partial.USER_CANCEL})")
    assert partial.cancel_reason(store["results"] / queued) == partial.USER_CANCEL
    assert job_panel.cancel_note(job) in texts(at)  # as a cancel before any run was measured
    # how and why it was cancelled is shown where the job's cancel is, not only recorded
    # (session 25's fresh user: the card, the page and History said only "cancelled")
    said = partial.cancel_said(read_manifest(store["results"] / queued))
    assert said.startswith(partial.IN_QUEUE) and said.endswith(partial.USER_CANCEL)
    assert said in job_panel.cancel_note(job)
    manager.cancel(first)
    assert manager.wait(first, 60) == "cancelled"
    page = app("sweep", query={"job": queued})
    assert not page.exception, page.exception
    assert panels.cancelled_banner(said) in texts(page)
    history = app("history")
    table = history.dataframe[0].value
    status = dict(zip(table["Job"], table["Status"]))
    how = dict(zip(table["Job"], table["How cancelled"]))  # a column of its own (session 27)
    assert (status[queued], how[queued]) == ("cancelled", said)
    first_said = partial.cancel_said(read_manifest(store["results"] / first))
    assert first_said and (status[first], how[first]) == ("cancelled", first_said)
