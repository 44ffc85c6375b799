"""Watching a cluster sweep: its array tasks' states read every ``poll_s``, a failed or
preempted task resubmitted (a new attempt folder, as a new array) up to ``retries`` times,
the array cancelled on request, and the finished tasks merged into one bundle once every task
has ended. :class:`SweepWatcher` is the part of
:class:`~app.services.slurm_executor.SlurmExecutor` that runs one watcher thread per sweep it
holds the watch lock of (:mod:`app.services.sweep_lock`); the executor adds submitting and
taking sweeps over after a restart. No Streamlit here.
"""

from __future__ import annotations

import dataclasses
import errno
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from profiling_worker.bundle.schema import partial
from profiling_worker.bundle.schema.manifest import JobStatus, now_iso, update_manifest
from profiling_worker.bundle.schema.spec import JobSpec
from profiling_worker.sweep.merge import merge_sweep
from profiling_worker.sweep.task import REFERENCE_DIR

from app.services import sweep_errors as E
from app.services import sweep_lock, sweep_resume
from app.services import sweep_plan as plan
from app.services import sweep_tasks as T
from app.services.job_book import JobBook
from app.services.job_model import Job, TaskView
from app.services.job_recovery import disk_full_error, internal_error, release_space
from app.services.sweep_queue import SlurmMissing, SubmititQueue, TaskQueue, slurm_parameters

CANCEL_WAIT_S = 120.0  # after a cancel, how long to wait for tasks to stop before merging
SHUTDOWN_JOIN_S = 5.0  # how long shutdown waits for the watchers to stop
SUBMITTING = "submitting"  # the stage of a sweep whose array is being submitted


@dataclasses.dataclass
class Sweep:
    """A sweep a watcher of this server follows."""

    job: Job
    options: plan.SweepOptions
    queue: TaskQueue
    tasks: list[T.Task]
    started_at: str
    retries: list[str] = dataclasses.field(default_factory=list)  # one line per retry, named
    notes: list[str] = dataclasses.field(default_factory=list)  # adopted arrays, a takeover
    cancelled_at: str = ""  # when this server's user cancelled it (ISO 8601, to the second)
    #: why, left in each live task's folder before its signal (:meth:`SweepWatcher._send_cancel`)
    cancel_reason: str = partial.USER_CANCEL
    told: set[Path] = dataclasses.field(default_factory=set)  # the folders it is left in


class SweepWatcher(JobBook):
    """The watchers of this server's sweeps. Thread-safe; no Streamlit.

    Args:
        results_dir: the result store; it must be on a file system the nodes share.
        worker_python: the worker's Python on the nodes (with submitit and profiling_worker),
            unless a sweep's options name another.
        poll_s: how often a sweep's states and event files are read.
        on_end: called with a copy of each job once it has its final status.
    """

    def __init__(self, results_dir: Path, worker_python: str, poll_s: float = 1.0,
                 on_end: Callable[[Job], None] | None = None) -> None:
        super().__init__(on_end)
        self.results_dir = Path(results_dir).resolve()
        self.results_dir.mkdir(parents=True, exist_ok=True)
        self.worker_python = worker_python
        self.poll_s = poll_s
        self._sweeps: dict[str, Sweep] = {}
        self._threads: list[threading.Thread] = []

    def _queue(self, spec: JobSpec, options: plan.SweepOptions, folder: Path) -> TaskQueue:
        """The sweep's scheduler: submitit on Slurm, or its local executor."""
        return SubmititQueue(options.cluster, folder / plan.SUBMITIT_DIR,
                             options.worker_python or self.worker_python,
                             slurm_parameters(spec, options, f"kprof-{folder.name}"))

    def cancel(self, job_id: str, reason: str = partial.USER_CANCEL) -> None:
        """Cancel the sweep: its watcher cancels the array (scancel: pending tasks never start,
        running ones get SIGTERM; on this host, signals to each task's process group) and sends
        the cancel again on every poll until its tasks have ended; tasks that finished stay and
        are merged. Tasks still being submitted are cancelled as soon as sbatch has answered.
        Each task's worker is told ``reason`` before its signal (:meth:`_send_cancel`).
        A sweep another server watches is not cancelled from here (its watcher's panel has the
        Cancel)."""
        with self._lock:
            sweep = self._sweeps.get(job_id)
            if sweep is None or not sweep.job.active or sweep.job.cancel_requested:
                return
            sweep.job.cancel_requested = True
            sweep.cancelled_at = now_iso()
            sweep.cancel_reason = reason
        try:
            sweep_resume.record_cancel(sweep.job.path)
        except sweep_resume.RecordUnwritable as exc:  # cancel all the same; say what is lost
            self._note(sweep, f"the cancel is not recorded ({exc}): a dashboard restarted "
                              f"before the tasks end would not know of it; "
                              f"{sweep_resume.RECORD_HINT}")
        with self._wake:
            self._wake.notify_all()  # the watcher sends it now, not a poll later

    @staticmethod
    def _send_cancel(sweep: Sweep, ids: list[str]) -> None:
        """Cancel the tasks ``ids`` of ``sweep``, its :attr:`Sweep.cancel_reason` left first in
        each live task's attempt folder (the worker's job folder, and its reference job's) as
        the job manager leaves it (:func:`~profiling_worker.bundle.schema.partial.
        write_cancel_reason`): each task records why it was cancelled. Each folder once: the
        cancel is sent again on every poll."""
        with_reason = set(ids)
        for task in sweep.tasks:
            attempt = task.attempts[-1] if task.attempts else None
            if attempt is None or attempt.scheduler_id not in with_reason \
                    or attempt.folder in sweep.told:
                continue
            for folder in (attempt.folder, attempt.folder / REFERENCE_DIR):
                if folder.is_dir():
                    partial.write_cancel_reason(folder, sweep.cancel_reason)
            sweep.told.add(attempt.folder)
        sweep.queue.cancel(ids)

    def shutdown(self) -> None:
        """Stop watching (the dashboard exits); the tasks run on in Slurm. Waits a moment
        for the watchers, so that a new executor of this server may take their sweeps."""
        with self._wake:
            self._stopped = True
            self._wake.notify_all()
        deadline = time.monotonic() + SHUTDOWN_JOIN_S
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    # -- watching -----------------------------------------------------------------------------
    def _executor_entry(self, sweep: Sweep) -> dict[str, object]:
        return {"name": "slurm" if sweep.options.cluster == "slurm" else "submitit-local",
                "options": sweep.options.to_json(), "tasks": len(sweep.tasks)}

    def _watch_in_thread(self, sweep: Sweep) -> None:
        """Show the sweep in the panel and start its watcher (the sweep is claimed)."""
        job = sweep.job
        with self._lock:
            self._jobs[job.job_id] = job
            self._sweeps[job.job_id] = sweep
            job.tasks = _pending_views(sweep.tasks)
            job.total = len(sweep.tasks)
            if any(not t.attempts for t in sweep.tasks):
                job.stage = SUBMITTING
        thread = threading.Thread(target=self._watch, args=(sweep,), daemon=True,
                                  name=f"kprof-sweep-{job.job_id}")
        self._threads.append(thread)
        thread.start()

    def _start_attempts(self, sweep: Sweep, tasks: list[T.Task],
                        notes: dict[str, str] | None = None) -> None:
        """Record the submission (``queue.jsonl``), make the next attempt folder of each task
        and submit them as one array, then record their ids. A cancel that came meanwhile
        cancels them at once.

        Raises:
            SlurmMissing: sbatch refused the array.
            OSError: ``queue.jsonl`` (:class:`~app.services.sweep_resume.RecordUnwritable`)
                or an attempt folder cannot be written; nothing was submitted.
        """
        notes = notes or {}
        path = sweep.job.path
        pairs = [(t.index, plan.next_attempt(path, t.index)) for t in tasks]
        name = f"kprof-{sweep.job.job_id}-{tasks[0].name}a{pairs[0][1]}"  # never used twice
        sweep_resume.record_submitting(path, name, pairs, notes)
        folders = plan.write_attempts(path, sweep.job.spec, [(t.index, t.configs) for t in tasks],
                                      sweep.options.reference)
        ids = sweep.queue.submit(folders, name)
        try:
            sweep_resume.record_submitted(path, [
                (t, a, sid, notes.get(plan.task_name(t), "")) for (t, a), sid in zip(pairs, ids)])
        except sweep_resume.RecordUnwritable as exc:  # the name written before still finds it
            self._note(sweep, f"{exc}: the Slurm ids of array {ids[0].split('_')[0]} are not "
                              f"recorded; this dashboard watches it, and one restarted finds "
                              f"it by its job name {name}")
        with self._lock:
            for task, folder, sid in zip(tasks, folders, ids):
                task.attempts.append(T.Attempt(folder, sid))
            cancelled = sweep.job.cancel_requested
        if cancelled:
            self._send_cancel(sweep, ids)

    def _watch(self, sweep: Sweep) -> None:
        job = sweep.job
        try:
            if not self._submit_rest(sweep):
                return
            cancel_seen, ended = None, False
            while not self._stopped:
                ended = self._poll(sweep)
                if job.cancel_requested and not ended:
                    # on every poll until they have ended: a cancel lost or not acted on is
                    # sent again (on this host the signal grows: SIGINT, SIGTERM, SIGKILL)
                    cancel_seen = cancel_seen or time.monotonic()
                    self._send_cancel(sweep, _live_ids(sweep.tasks))
                if ended or (cancel_seen and time.monotonic() - cancel_seen > CANCEL_WAIT_S):
                    break
                with self._wake:
                    self._wake.wait(self.poll_s)  # shutdown and cancel wake it
            if self._stopped:
                return
            if not ended:
                self._note(sweep, f"tasks {', '.join(_live_names(sweep.tasks))} still ran "
                                  f"{CANCEL_WAIT_S:.0f} s after the cancel: merged without them")
            self._merge(sweep)
        except Exception as exc:  # a watcher must end its job, whatever went wrong
            traceback.print_exc()
            error = internal_error(job.path, exc)
            if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
                error = disk_full_error(job.path, None) or error
            with self._lock:
                if job.active:  # written in the job's disk reserve when the disk is full
                    self._finish(job, JobStatus.FAILED, error)
        finally:
            sweep_lock.release(job.path)
        self._ended(job)

    def _submit_rest(self, sweep: Sweep) -> bool:
        """Submit the tasks that have no attempt yet (a new sweep: all). False when sbatch
        refused them: the job has ended ``failed``, nothing of it is queued."""
        rest = [t for t in sweep.tasks if not t.attempts]
        if not rest:
            return True
        try:
            self._start_attempts(sweep, rest)
        except (SlurmMissing, OSError) as exc:
            error = (E.slurm_missing(str(exc)) if isinstance(exc, SlurmMissing)
                     else E.unrecorded(str(exc)))
            with self._lock:
                self._finish(sweep.job, JobStatus.FAILED, error)
            self._ended(sweep.job)
            return False
        with self._lock:
            sweep.job.tasks = _pending_views(sweep.tasks)
            sweep.job.stage = ""
        return not self._stopped

    def _poll(self, sweep: Sweep) -> bool:
        """One look at every task; retries what may be retried. True when all have ended."""
        job, live = sweep.job, [t for t in sweep.tasks if t.final is None]
        try:
            states = sweep.queue.states([t.attempts[-1].scheduler_id for t in live])
        except SlurmMissing as exc:
            with self._lock:
                if not job.warnings or job.warnings[-1] != str(exc):
                    job.warnings.append(str(exc))
            return False
        retry: list[T.Task] = []
        views: dict[str, TaskView] = {t.name: t.final for t in sweep.tasks
                                      if t.final is not None}
        notes: dict[str, str] = {}
        for task in live:
            attempt = task.attempts[-1]
            queued = states.get(attempt.scheduler_id)
            attempt.read_progress(queued)
            state, reason = T.decide(attempt, queued, job.cancel_requested,
                                     cancelled_at=sweep.cancelled_at)
            views[task.name] = T.view(task, state, reason)
            if state in T.RETRIED and len(task.attempts) <= sweep.options.retries \
                    and not job.cancel_requested:
                retry.append(task)
                notes[task.name] = (f"task {task.name} {state} ({reason}): retry "
                                    f"{len(task.attempts)} of {sweep.options.retries}")
            elif state in T.ENDED:
                task.final = views[task.name]
        if retry:
            self._retry(sweep, retry, notes, views)
        with self._lock:
            job.tasks = tuple(views[t.name] for t in sweep.tasks)
            job.done = sum(v.state in T.ENDED for v in job.tasks)
            job.stage = ", ".join(state_count(n, s) for s, n in _counts(job.tasks).items())
            if job.status == JobStatus.QUEUED and any(v.state == T.RUNNING for v in job.tasks):
                job.status = JobStatus.RUNNING
                self._write_state(job, started_at=now_iso())
        return all(t.final is not None for t in sweep.tasks)

    def _retry(self, sweep: Sweep, tasks: list[T.Task], notes: dict[str, str],
               views: dict[str, TaskView]) -> None:
        """Submit the next attempt of each task, naming the retries in the job's warnings.
        When ``queue.jsonl`` (or an attempt folder) cannot be written, or sbatch refuses the
        array, the tasks end with their state, the reason saying why there was no retry; the
        sweep goes on to its merge (the finished tasks are kept)."""
        try:
            self._start_attempts(sweep, tasks, notes)
        except (OSError, SlurmMissing) as exc:
            fix = f" ({sweep_resume.RECORD_HINT})" if isinstance(exc, OSError) else ""
            for task in tasks:
                view = views[task.name]
                task.final = views[task.name] = dataclasses.replace(
                    view, reason=f"{view.reason}; not retried: {exc}{fix}")
            self._note(sweep, f"{', '.join(t.name for t in tasks)} not retried: {exc}")
            return
        sweep.retries += [notes[t.name] for t in tasks]
        with self._lock:
            sweep.job.warnings += [notes[t.name] for t in tasks]
        views.update({t.name: T.view(t, T.PENDING, f"retry of {views[t.name].state}")
                      for t in tasks})

    def _note(self, sweep: Sweep, text: str) -> None:
        """A warning of the watch that the merged bundle keeps (``warnings``)."""
        with self._lock:
            sweep.notes.append(text)
            sweep.job.warnings.append(text)

    def _merge(self, sweep: Sweep) -> None:
        job = sweep.job
        with self._lock:
            job.stage = "merging"
            views = list(job.tasks)
        tasks = [{"task": v.name, "configs": list(v.configs), "state": v.state,
                  "attempts": v.attempt + 1, "reason": v.reason, "node": v.node,
                  "folder": str(t.attempts[-1].folder)} for v, t in zip(views, sweep.tasks)]
        manifest = merge_sweep(job.path, tasks, cancelled=job.cancel_requested,
                               started_at=sweep.started_at, retries=sweep.retries)
        release_space(job.path)  # the final manifest is written: its reserve is not needed
        if sweep.notes:  # adopted arrays, a takeover, what queue.jsonl could not record
            manifest["warnings"] = sweep.notes + list(manifest.get("warnings") or [])
            try:
                update_manifest(job.path, lambda m: {**m, "warnings": manifest["warnings"]})
            except OSError as exc:  # the panel still shows them
                print(f"kprof sweeps: {job.job_id}: notes not saved: {exc}", file=sys.stderr)
        with self._lock:
            job.status = JobStatus(manifest["status"])
            job.error = manifest.get("error")
            job.warnings = sweep.retries + list(manifest.get("warnings") or [])
            job.stage = "merged"
            self._wake.notify_all()


def lane_name(options: plan.SweepOptions) -> str:
    """The panel's lane name of a sweep: ``slurm:<partition>`` or ``local-array``."""
    if options.cluster == "slurm":
        return f"slurm:{options.partition or 'default'}"
    return "local-array"


def _pending_views(tasks: list[T.Task]) -> tuple[TaskView, ...]:
    """Rows of tasks not polled yet: pending, or ``submitting`` while they have no attempt."""
    return tuple(T.view(t, T.PENDING, "") if t.attempts else
                 TaskView(t.name, T.PENDING, 0, t.configs, stage=SUBMITTING) for t in tasks)


def _live_ids(tasks: list[T.Task]) -> list[str]:
    """Scheduler ids of the last attempts of the tasks that have not ended for good."""
    return [t.attempts[-1].scheduler_id for t in tasks if t.final is None and t.attempts]


def _live_names(tasks: list[T.Task]) -> list[str]:
    """Names of the tasks that have not ended for good."""
    return [t.name for t in tasks if t.final is None]


def state_count(count: int, state: str) -> str:
    """How many tasks are in ``state``, as the sweep's stage lists them: ``"2 done"``."""
    return f"{count} {state}"


def _counts(tasks: tuple[TaskView, ...]) -> dict[str, int]:
    """How many tasks are in each state, in the order pending, running, done, failed ..."""
    order = (T.PENDING, T.RUNNING, T.DONE, T.FAILED, T.PREEMPTED, T.CANCELLED)
    return {s: n for s in order if (n := sum(v.state == s for v in tasks))}


