"""A sweep task whose worker ended ``cancelled`` though the sweep was not cancelled (issue 37,
session 24's review): a SIGINT from outside the dashboard (``scancel --signal=INT``, Ctrl-C,
kill) read "preempted" and was retried. What decides, from what is recorded: Slurm's state
(CANCELLED a scancel, PREEMPTED / TIMEOUT the scheduler's own stop, COMPLETED / FAILED a task
that ended by itself after its worker took a signal Slurm did not record as its own), a
door's reason file, and, with no Slurm state left, the worker's recorded signal: Slurm's
preemption and time limit send SIGTERM, never SIGINT."""

from __future__ import annotations

import signal
from pathlib import Path
from types import SimpleNamespace

import pytest

from app.services.sweep_queue import QueueState
from app.services.sweep_tasks import CANCELLED, PREEMPTED, RETRIED, Attempt, decide
from profiling_worker.bundle.errors import Cancelled
from profiling_worker.bundle.schema import partial
from profiling_worker.bundle.schema.manifest import write_manifest
from profiling_worker.job import runner


def _cancelled_attempt(folder: Path, signum: int, reason: str | None = None) -> Attempt:
    """An attempt folder whose worker took ``signum`` (``reason`` left first by a door of the
    dashboard, None: a signal from outside it), its manifest as the worker writes it: the
    worker's own signal handler (CancelWatch) and its failure entries."""
    folder.mkdir()
    if reason is not None:
        partial.write_cancel_reason(folder, reason)
    watch = runner.CancelWatch(SimpleNamespace(job_dir=folder))  # type: ignore[arg-type]
    watch.before = {signal.SIGTERM: signal.SIG_DFL}  # restored to SIG_DFL: nothing installed
    try:
        with pytest.raises(Cancelled) as caught:
            watch.on_sigterm(signum, None)
    finally:
        watch.uninstall()  # the job is over: no cancel left pending for the next
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    write_manifest(folder, {"job_id": folder.name, **runner._failure(caught.value, folder)})
    return Attempt(folder, "7_1", submitted=0.0)


def test_a_sigint_from_outside_is_a_cancel_not_a_preemption(tmp_path: Path) -> None:
    """``scancel --signal=INT``: Slurm's state stays RUNNING ('stopping'), then COMPLETED when
    the task ends by itself; or the state is gone from squeue: the SIGINT decides."""
    attempt = _cancelled_attempt(tmp_path / "int", signal.SIGINT)
    assert decide(attempt, QueueState("RUNNING", "n1"), False, now=1.0) == ("running",
                                                                            "stopping")
    for queue in (QueueState("COMPLETED", "n1"), QueueState("FAILED", "n1"), None):
        state, reason = decide(attempt, queue, False, now=1.0)
        assert state == CANCELLED and state not in RETRIED, (queue, reason)
        assert "SIGINT" in reason and "outside the dashboard" in reason
        assert "preempt" not in reason.replace("not a preemption", "")
        if queue is not None:  # the evidence named: what Slurm recorded
            assert queue.state in reason


def test_the_schedulers_own_stop_stays_a_preemption(tmp_path: Path) -> None:
    """Preemption and the time limit: Slurm records PREEMPTED / TIMEOUT (and sends SIGTERM);
    a SIGTERM with no state left cannot be told apart and stays preempted, as before."""
    attempt = _cancelled_attempt(tmp_path / "term", signal.SIGTERM)
    for name in ("PREEMPTED", "TIMEOUT"):
        state, reason = decide(attempt, QueueState(name, "n1"), False, now=1.0)
        assert state == PREEMPTED and state in RETRIED and name in reason
    state, reason = decide(attempt, None, False, now=1.0)
    assert state == PREEMPTED and "SIGTERM" in reason and "no longer lists" in reason
    assert "cannot be told apart" in reason  # the guess is said to be one
    # a plain scancel stays the user's (issue 41)
    assert decide(attempt, QueueState("CANCELLED", "n1"), False, now=1.0)[0] == CANCELLED
    # scancel --signal=TERM: the task ended by itself, Slurm recorded no stop of its own
    state, reason = decide(attempt, QueueState("COMPLETED", "n1"), False, now=1.0)
    assert state == CANCELLED and "SIGTERM" in reason and "COMPLETED" in reason


def test_a_doors_reason_in_the_folder_is_the_cancels_reason(tmp_path: Path) -> None:
    """kernel-sweep's Ctrl-C (or another server's Cancel) leaves its reason in each task's
    folder before its signal: a watcher that did not cancel reads it as that cancel."""
    attempt = _cancelled_attempt(tmp_path / "cli", signal.SIGINT, partial.SWEEP_CLI_CANCEL)
    state, reason = decide(attempt, None, False, now=1.0)
    assert state == CANCELLED and reason.count(partial.SWEEP_CLI_CANCEL) == 1, reason
    assert "SIGINT" in reason


def test_a_kept_configs_record_gives_the_signal(tmp_path: Path) -> None:
    """A cancel that kept configs records how it came in its configs' record."""
    how = partial.cancel_how("SIGINT", tmp_path)
    manifest = partial.manifest_entries(partial.Shortfall([0], cancelled=how), [{"n": 1},
                                                                                 {"n": 2}])
    assert partial.recorded_cancel(manifest) == how
    assert partial.cancel_signal(partial.recorded_cancel(manifest)) == "SIGINT"
    assert partial.cancel_signal(partial.IN_QUEUE + " at now") == ""
