"""Issue 37: a dashboard lists every job of its result store, whoever queued it. A plain job
that another process puts in the same results folder after this page loaded (another job
queue in its own process, or the worker run from a shell) appears in this server's job panel
read-only (no Cancel), its owner named by pid, its state and progress read from its manifest
and events, until it ends ``done``. Real workers, cpu backend; no fixed sleeps."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from apptest_helpers import texts, texts_with_progress
from app.core.markdown import esc
from app.sidebar import job_panel
from app.ui import cached

REPO = Path(__file__).resolve().parents[2]
SWEEP_KERNELS = REPO / "tests" / "fixtures" / "kernel_files_sweep"
BOUND_S = 300  # generous: the other process's worker starts slowly on a busy 2-core machine
# Four runs of 2 s each: running for 8 s at least, longer than the panel's look (5 s).
RUNS = 4
SLOW_SPEC = {"kernels": ["sweep_sleep"], "configs": [{"ms": 2000}], "runs": RUNS,
             "backend": "cpu", "warmup": 0}
# Another job queue on the same results folder, in its own process: queues SLOW_SPEC, says
# its id, waits for the end and says the status.
OTHER_QUEUE = """
import json, sys
from pathlib import Path
from app.services.job_manager import JobManager
from profiling_worker.bundle.schema.spec import validate_spec
manager = JobManager(Path(sys.argv[1]), sys.executable)
job_id = manager.submit(validate_spec(json.loads(sys.argv[2])))
print(job_id, flush=True)
print(manager.wait(job_id, 600), flush=True)
manager.shutdown()
"""


def test_a_job_another_job_queue_runs_is_listed_read_only_with_progress_to_done(
        store, app, monkeypatch) -> None:
    monkeypatch.setenv("KPROF_KERNEL_DIRS", str(SWEEP_KERNELS))
    at = app()
    assert job_panel.EMPTY_TEXT in texts(at)
    other = subprocess.Popen([sys.executable, "-c", OTHER_QUEUE, str(store["results"]),
                              json.dumps(SLOW_SPEC)], cwd=REPO, stdout=subprocess.PIPE, text=True)
    assert other.stdout is not None
    try:
        job_id = other.stdout.readline().strip()
        assert job_id, "the other job queue queued nothing"
        owner = f"Read-only here: owned by the dashboard server pid {other.pid}"
        text = _wait_for_progress(at, job_id)
        assert owner in text and "**running**" in text
        assert job_id in text
        _no_cancel(at, job_id)
        assert cached.job_manager().get(job_id).watched_by
        text = _wait_for(at, lambda t: "**done**" in t, f"{job_id} listed done")
        # ended: its owner no longer runs it, so no owner and no "alone can cancel it"
        assert job_id in text and "Read-only here" not in text
        _no_cancel(at, job_id)
        assert other.stdout.readline().strip() == "done"  # its owner's result is the same
    finally:
        other.kill()
        other.wait(60)


def test_a_job_the_worker_cli_runs_is_listed_with_its_worker_as_owner(
        store, app, monkeypatch) -> None:
    monkeypatch.setenv("KPROF_KERNEL_DIRS", str(SWEEP_KERNELS))
    at = app()
    job = store["results"] / "20261205-100000-sweep_sleep-cli1"
    job.mkdir()
    (job / "spec.json").write_text(json.dumps(SLOW_SPEC), encoding="utf-8")
    cli = subprocess.Popen([sys.executable, "-m", "profiling_worker", "run", str(job)],
                           cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        owner = f"Read-only here: owned by the worker CLI pid {cli.pid}"
        _wait_for(at, lambda t: owner in t and job.name in t, f"{job.name} listed")
        _no_cancel(at, job.name)
        text = _wait_for(at, lambda t: "**done**" in t, f"{job.name} listed done")
        assert "Read-only here" not in text  # issue: "owned by the worker CLI pid" of a done job
        assert cli.wait(BOUND_S) == 0
        manifest = json.loads((job / "manifest.json").read_text(encoding="utf-8"))
        assert manifest["worker"]["pid"] == cli.pid  # the final manifest keeps its owner
        assert manifest["worker"]["process"] == "worker CLI"
    finally:
        cli.kill()
        cli.wait(60)


def _wait_for(at, seen: Callable[[str], bool], what: str) -> str:  # type: ignore[no-untyped-def]
    """Rerun the page until its texts and progress lines satisfy ``seen`` (bound
    :data:`BOUND_S`; AppTest never ticks the panel's run_every); the text that did."""
    deadline = time.monotonic() + BOUND_S
    while not seen(text := texts_with_progress(at.run())):
        assert not at.exception, at.exception
        assert time.monotonic() < deadline, f"not {what} within {BOUND_S} s; page: {text}"
        time.sleep(0.5)
    return text


def _wait_for_progress(at, job_id: str) -> str:  # type: ignore[no-untyped-def]
    """Rerun the page until a progress bar's text is the job panel's progress line of
    ``job_id`` (:func:`job_panel.progress_text` of the job the page's executor holds, at a
    second of the rerun: the line counts the seconds in its config) with its 4 runs counted
    (SLOW_SPEC); bound :data:`BOUND_S`. The page's texts and progress lines then."""
    deadline = time.monotonic() + BOUND_S
    while True:
        start = time.time()
        text = texts_with_progress(at.run())
        end = time.time()
        assert not at.exception, at.exception
        job = cached.job_manager().get(job_id)  # a copy: an event since the run just retries
        if job is not None and job.total == RUNS:  # its one config's runs
            said = {esc(job_panel.progress_text(job, now)) for now in _seconds(start, end)}
            if said & {el.proto.text for el in at.get("progress")}:
                return text
        assert time.monotonic() < deadline, f"{job_id} not running with its progress within " \
                                            f"{BOUND_S} s; page: {text}"
        time.sleep(0.5)


def _seconds(start: float, end: float) -> list[float]:
    """Epoch seconds from ``start`` to ``end`` in steps of 0.25 s, both ends kept: every whole
    second a line drawn between them can have counted."""
    return [start + 0.25 * i for i in range(int((end - start) / 0.25) + 1)] + [end]


def _no_cancel(at, job_id: str) -> None:  # type: ignore[no-untyped-def]
    assert all(b.key != f"panel-cancel-{job_id}" for b in at.button), "not ours to cancel"

