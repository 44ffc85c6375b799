"""The job panel of a second dashboard server on the same results folder: a sweep that another
server watches (it holds the sweep's watch lock) is listed read-only, without Cancel. The sweep
is real: submitted in another process on submitit's local executor (no Slurm needed)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from apptest_helpers import texts, texts_with_progress, unescape
from app.core.markdown import esc
from app.sidebar import job_panel
from app.ui import cached
from tests.sweep_processes import assert_all_gone

REPO = Path(__file__).resolve().parents[2]
SWEEP_KERNELS = REPO / "tests" / "fixtures" / "kernel_files_sweep"
# The other server: submits a 60 s sweep, says its id, and holds the sweep until its stdin
# closes; then it cancels it (the task process ends) and waits for the merge.
OTHER_SERVER = """
import sys
from pathlib import Path
from app.services.slurm_executor import SlurmExecutor
from app.services.sweep_plan import SweepOptions
from profiling_worker.bundle.schema.spec import validate_spec
ex = SlurmExecutor(Path(sys.argv[1]), sys.executable, poll_s=0.3)
spec = validate_spec({"kernels": ["sweep_sleep"], "configs": [{"ms": 60000}], "runs": 1,
                      "backend": "cpu", "warmup": 0})
job_id = ex.submit(spec, SweepOptions(cluster="local", reference=False, retries=0))
print(job_id, flush=True)
sys.stdin.read()
ex.cancel(job_id)
print(ex.wait(job_id, 600), flush=True)  # generous: a busy machine ends the task slowly
ex.shutdown()
"""


def test_a_sweep_another_server_watches_is_shown_read_only(store, app, monkeypatch) -> None:
    monkeypatch.setenv("KPROF_KERNEL_DIRS", str(SWEEP_KERNELS))
    other = subprocess.Popen([sys.executable, "-c", OTHER_SERVER, str(store["results"])],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert other.stdin is not None and other.stdout is not None
    try:
        job_id = other.stdout.readline().strip()
        assert job_id, "the other server submitted nothing"
        at = app()  # this server's first page load resumes what no one watches
        assert not at.exception
        text = texts(at)
        job = cached.slurm_executor().get(job_id)
        # its owner named: which process and its pid (the manifest's; a host may follow)
        said = f"dashboard server pid {other.pid}".split()
        assert job.watched_by.split()[:len(said)] == said, job.watched_by
        assert unescape(job_panel.owner_caption(job)) in text  # its owner, read-only
        assert job_id in text
        assert all(b.key != f"panel-cancel-{job_id}" for b in at.button)  # not ours to cancel
    finally:
        other.stdin.close()
        ended = other.stdout.readline().strip()
        other.wait(120)
        assert ended == "cancelled", f"the other server's sweep ended {ended!r}, not cancelled"


def _two_of_three_shown(at):  # type: ignore[no-untyped-def]
    """Rerun the page; the sweep job its executor holds once the panel's progress line of it
    (:func:`job_panel.progress_text`) is drawn with 2 of its 3 tasks done, else None."""
    at.run()
    assert not at.exception, at.exception
    jobs = cached.slurm_executor().snapshot()
    drawn = {el.proto.text for el in at.get("progress")}
    return next((j for j in jobs if (j.done, j.total) == (2, 3)
                 and esc(job_panel.progress_text(j)) in drawn), None)


#: ``python`` with SIGINT's default action, then the arguments that follow: the Ctrl-C of a
#: command in a terminal. A pytest started as a background job of a script inherits SIGINT
#: ignored (POSIX), and so would ``kernel-sweep``, which then never sees the test's Ctrl-C (it
#: ran to its 10-minute task's end beside stress-ng --cpu 8); an ignored signal stays ignored
#: across exec, a default one stays default.
_SIGINT_DEFAULT = (sys.executable, "-c", "import os, signal, sys; "
                   "signal.signal(signal.SIGINT, signal.SIG_DFL); "
                   "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])")


def test_a_kernel_sweep_submitted_after_the_page_loaded_is_listed_with_its_tasks_done(
        store, app, monkeypatch, tmp_path) -> None:
    """Issue 37: an open dashboard listed no sweep that ``kernel-sweep`` submitted after its
    first page load, and one it did list read "starting 0/1,000" with 175 tasks done and named
    its owner "the dashboard server". Here the real ``kernel-sweep`` (``app/sweep_cli.py``,
    submitit's local executor) submits three tasks after the page loaded, two short and one of
    10 minutes (never done within the test however loaded the machine; Ctrl-C cancels it: a
    60 s one could end first and the panel then never read "2 of 3"); the panel must list it
    read-only, name ``kernel-sweep`` and its pid, and count the two short tasks done once their
    folders say so."""
    monkeypatch.setenv("KPROF_KERNEL_DIRS", str(SWEEP_KERNELS))
    at = app()
    assert job_panel.EMPTY_TEXT in texts(at)
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"kernels": ["sweep_sleep"], "runs": 1, "backend": "cpu",
                                "warmup": 0, "configs": [{"ms": 10}, {"ms": 20}, {"ms": 600_000}]}))
    log = tmp_path / "kernel-sweep.log"
    with open(log, "w", encoding="utf-8") as out:
        cli = subprocess.Popen(
            [*_SIGINT_DEFAULT, str(REPO / "app" / "sweep_cli.py"), str(spec), "--results",
             str(store["results"]), "--local", "--no-reference", "--retries", "0",
             "--parallelism", "3", "--poll", "0.5"],
            cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=out,
            stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 300  # the executor's scan, then the tasks' own manifests
        while (job := _two_of_three_shown(at)) is None:
            assert time.monotonic() < deadline, (
                f"not listed with 2 of 3 tasks done in 300 s; panel: {texts_with_progress(at)}"
                f"\nkernel-sweep: {log.read_text()}")
            time.sleep(0.5)
        text = texts(at)
        said = f"kernel-sweep pid {cli.pid}".split()
        assert job.watched_by.split()[:len(said)] == said, job.watched_by
        assert unescape(job_panel.owner_caption(job)) in text, text
        assert "starting" not in texts_with_progress(at)
        job_id = job.job_id
        assert job_id in text
        assert all(b.key != f"panel-cancel-{job_id}" for b in at.button)
    finally:
        cli.send_signal(signal.SIGINT)  # kernel-sweep's Ctrl-C: cancels the array, merges
        try:  # generous: a loaded machine slows the cancel and the merge
            cli.wait(600)
        except subprocess.TimeoutExpired:
            pytest.fail(f"kernel-sweep did not end within 600 s of Ctrl-C:\n{log.read_text()}")
    assert "cancelled" in log.read_text(), log.read_text()
    # issue 41: the cancel reached every process of the 10-minute task (its worker could run on)
    assert_all_gone(store["results"] / job_id)

