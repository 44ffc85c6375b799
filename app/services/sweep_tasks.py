"""The state of one sweep task, from its attempt folder and its scheduler state.

What a task produced is read from the shared folder (the worker's ``manifest.json`` and
``events.jsonl`` of the attempt); the scheduler only says what it is doing with a task that has
no result yet. A task's states: ``pending``, ``running``, ``done``, ``failed`` (its configs
failed, or the scheduler ended it: node failure, time limit, out of memory), ``preempted``
(Slurm took the node back or its time ran out; also a worker that ended ``cancelled`` on a
SIGTERM nothing else tells apart) and ``cancelled`` (by the user: the dashboard's Cancel,
``scancel`` outside it, or a signal from outside that Slurm did not record as its own, which
is never retried: :func:`outside_cancel`). No Streamlit here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from profiling_worker.bundle.number_text import times_in, when_text
from profiling_worker.bundle.schema import partial
from profiling_worker.bundle.schema.manifest import JobStatus, ManifestError, read_manifest
from profiling_worker.sweep.task import REFERENCE_DIR

from app.services import worker_client
from app.services.job_model import TaskView
from app.services.sweep_queue import QueueState

PENDING, RUNNING, DONE, FAILED = "pending", "running", "done", "failed"
PREEMPTED, CANCELLED = "preempted", "cancelled"
ENDED = (DONE, FAILED, PREEMPTED, CANCELLED)
RETRIED = (FAILED, PREEMPTED)  # states a retry may repair
#: The reason of a task someone cancelled with scancel (Slurm state CANCELLED, not PREEMPTED):
#: their choice, so it is not retried nor called preempted (issue 41).
OUTSIDE = "cancelled outside the dashboard (scancel): not retried"
#: How long a task may be unknown to the scheduler, or ended there without a manifest, before
#: it counts as failed: a shared file system can show a result file late, and a fresh
#: submission can be missing from squeue for a moment.
GRACE_S = 20.0
_LIVE = {"PENDING": PENDING, "REQUEUED": PENDING, "CONFIGURING": PENDING, "RESIZING": PENDING,
         "REQUEUE_HOLD": PENDING, "REQUEUE_FED": PENDING, "RUNNING": RUNNING,
         "COMPLETING": RUNNING, "SUSPENDED": RUNNING, "STAGE_OUT": RUNNING, "SIGNALING": RUNNING}
_SCHEDULER_ENDED = {"PREEMPTED": PREEMPTED, "TIMEOUT": FAILED, "NODE_FAIL": FAILED,
                    "FAILED": FAILED, "OUT_OF_MEMORY": FAILED, "BOOT_FAIL": FAILED,
                    "DEADLINE": FAILED}


@dataclass
class Attempt:
    """One submission of a task: its folder, scheduler id and what was read of its events."""

    folder: Path
    scheduler_id: str
    submitted: float = field(default_factory=time.monotonic)
    tail: worker_client.EventTail = field(init=False)
    reference_tail: worker_client.EventTail = field(init=False)
    done: int = 0
    total: int = 0
    stage: str = "queued"
    node: str = ""
    ended_at: float | None = None  # when the scheduler was first seen done with it

    def __post_init__(self) -> None:
        self.tail = worker_client.EventTail(self.folder / "events.jsonl")
        self.reference_tail = worker_client.EventTail(self.folder / REFERENCE_DIR / "events.jsonl")

    def read_progress(self, queue: QueueState | None) -> None:
        """Apply the progress events written since the last call (reference kernel first);
        nothing to read while the scheduler says the task is pending."""
        if queue is not None and _LIVE.get(queue.state) == PENDING:
            return
        for ev in self.reference_tail.read_new():
            if ev.get("event") == "progress":
                self.stage = "reference kernel"
        for ev in self.tail.read_new():
            if ev.get("event") == "progress":
                self.done, self.total = int(ev.get("done") or 0), int(ev.get("total") or 0)
                self.stage = str(ev.get("stage") or "")


@dataclass
class Task:
    """A task of the plan and its attempts, newest last."""

    index: int
    name: str
    configs: tuple[int, ...]
    attempts: list[Attempt] = field(default_factory=list)
    final: TaskView | None = None  # set once the task ended for good


def _finished_status(folder: Path) -> tuple[JobStatus | None, str, str, str]:
    """The worker's final status in ``folder``, its error message, when it finished (ISO
    8601) and how its cancel came (:func:`~profiling_worker.bundle.schema.partial.
    recorded_cancel`; None, "", "", "": no result yet)."""
    try:
        manifest = read_manifest(folder)
    except (ManifestError, OSError):
        return None, "", "", ""
    status = JobStatus(manifest["status"])
    if not status.finished:
        return None, "", "", ""
    error = manifest.get("error") or {}
    return (status, str(error.get("message") or ""), str(manifest.get("finished_at") or ""),
            partial.recorded_cancel(manifest))


def has_result(folder: Path) -> bool:
    """True when the worker wrote its final manifest in the attempt folder."""
    return _finished_status(folder)[0] is not None


def succeeded(folder: Path) -> bool:
    """True when the worker ended the attempt in ``folder`` ``done`` (its final manifest)."""
    return _finished_status(folder)[0] == JobStatus.DONE


def decide(attempt: Attempt, queue: QueueState | None, cancel_requested: bool,
           now: float | None = None, cancelled_at: str = "") -> tuple[str, str]:
    """The attempt's state and its reason (for failed, preempted, pending, cancelled).

    Args:
        attempt: the attempt (its folder is read).
        queue: the scheduler's state of it, None when the scheduler does not list it.
        cancel_requested: the user cancelled the sweep.
        now: ``time.monotonic()`` (tests pass their own).
        cancelled_at: when the user cancelled (ISO 8601 to the second, as the manifests'
            ``finished_at``; "": unknown): a worker that finished later ran on through the
            cancel, and is cancelled, not done.
    """
    now = time.monotonic() if now is None else now
    if queue is not None and _LIVE.get(queue.state) == PENDING:
        return PENDING, queue.reason  # not started: nothing to read (1,000 tasks, every poll)
    status, message, finished_at, how = _finished_status(attempt.folder)
    if queue is not None and queue.node:
        attempt.node = queue.node
    if status == JobStatus.DONE and cancelled_at and finished_at > cancelled_at:
        return CANCELLED, (f"finished at {when_text(finished_at, date=False)}, after the cancel "
                           f"at {when_text(cancelled_at, date=False)}: "
                           f"not merged (its bundle stays in {attempt.folder})")
    if status == JobStatus.DONE:
        return DONE, ""
    if status == JobStatus.CANCELLED and queue is not None and queue.state in _LIVE:
        return RUNNING, "stopping"  # the worker ended; Slurm still ends the task's processes
    if status == JobStatus.CANCELLED and not cancel_requested:
        return outside_cancel(attempt.folder, queue, how)
    if status is not None and status != JobStatus.CANCELLED:
        return FAILED, message or f"the worker ended {status}"
    name = queue.state if queue is not None else ""
    if status == JobStatus.CANCELLED or (name == "CANCELLED" and cancel_requested):
        # what it took to stop it, when more than the cancel (a local task's SIGKILL)
        return CANCELLED, queue.reason if queue is not None else ""
    if name in _LIVE:
        attempt.ended_at = None
        return _LIVE[name], queue.reason if queue is not None else ""
    if name in _SCHEDULER_ENDED:
        return _SCHEDULER_ENDED[name], f"Slurm ended the task: {name}"
    if name == "CANCELLED":
        return CANCELLED, OUTSIDE
    # COMPLETED without a manifest, or unknown: wait for the shared file system a moment
    attempt.ended_at = attempt.ended_at or now
    if now - max(attempt.ended_at, attempt.submitted) < GRACE_S:
        return (RUNNING if name == "COMPLETED" else PENDING), ""
    if cancel_requested:
        return CANCELLED, ""
    return FAILED, ("the task ended without a result (manifest.json): see "
                    f"{attempt.folder / worker_client.CONSOLE_FILE} and the Slurm log")


#: Slurm's states of a task the scheduler itself stopped (a worker that then ended
#: ``cancelled`` took the scheduler's SIGTERM): preemption, its time limit, its node.
SCHEDULER_STOPPED = ("PREEMPTED", "TIMEOUT", "NODE_FAIL", "DEADLINE", "BOOT_FAIL",
                     "OUT_OF_MEMORY")


def outside_cancel(folder: Path, queue: QueueState | None, how: str) -> tuple[str, str]:
    """The state and reason of a task whose worker ended ``cancelled`` (``how``: its recorded
    cancel, :func:`~profiling_worker.bundle.schema.partial.recorded_cancel`) though this sweep
    was not cancelled, from what was recorded, first to last:

    - Slurm's state: ``CANCELLED`` (a scancel) is the user's, not retried; a state of
      :data:`SCHEDULER_STOPPED` is the scheduler's (preempted: retried where retries are on);
    - a reason a door of the dashboard left in the folder (kernel-sweep's Ctrl-C, another
      server's Cancel): a cancel with its reason;
    - Slurm's state of a task that ended by itself (``COMPLETED``, ``FAILED``) after its
      worker took a signal that Slurm did not record as its own, or, with no state (past
      squeue's ``MinJobAge``), a SIGINT, which Slurm's preemption and time limit never send
      (they send SIGTERM): a cancel from outside the dashboard (``scancel --signal=INT``,
      Ctrl-C, kill), named by its signal, not retried;
    - else (a SIGTERM with no state to tell): preempted, its reason saying which evidence
      decided and that a SIGTERM from outside would read the same."""
    name = queue.state if queue is not None else ""
    if name == "CANCELLED":
        return CANCELLED, OUTSIDE
    if name in SCHEDULER_STOPPED:
        return PREEMPTED, f"the worker was stopped by the scheduler (Slurm: {name})"
    said = times_in(how) if how else "a signal"
    if reason := partial.cancel_reason(folder):  # the worker's record ends with it too
        return CANCELLED, f"{reason} ({said.removesuffix(f': {reason}')}): not retried"
    if name or partial.cancel_signal(how) == "SIGINT":
        known = f"; Slurm recorded {name}, not a preemption" if name else ""
        return CANCELLED, f"cancelled outside the dashboard ({said}{known}): not retried"
    return PREEMPTED, (f"the worker was stopped ({said}) and Slurm no longer lists the task: "
                       "taken as the scheduler's stop (preemption and the time limit send "
                       "SIGTERM; one sent from outside cannot be told apart)")


def view(task: Task, state: str, reason: str) -> TaskView:
    """The panel's row of a task in ``state``."""
    last = task.attempts[-1]
    return TaskView(name=task.name, state=state, attempt=len(task.attempts) - 1,
                    configs=task.configs, node=last.node, scheduler_id=last.scheduler_id,
                    done=last.done, total=last.total, stage=last.stage, reason=reason)
