"""Sweeps on a cluster: a job's configs as a Slurm job array (through submitit), watched,
cancelled, retried and merged into one bundle.

:class:`SlurmExecutor` is the cluster half of :class:`~app.services.executor.Executor` (the
job manager's lanes are the host half): the same ``submit`` / ``cancel`` / ``snapshot`` /
``wait`` / ``shutdown``, and the same :class:`~app.services.job_model.Job` for the job panel,
with one :class:`~app.services.job_model.TaskView` per array task. One watcher thread per
sweep reads the scheduler's states and the tasks' event files every ``poll_s``, resubmits a
failed or preempted task (a new attempt folder, as a new array) up to ``retries`` times, and
merges the finished tasks when every task has ended. ``submit`` returns once the sweep's
folder and plan are written: the watcher thread makes the attempt folders and calls sbatch
(a 1,000-task sweep does not hold the sidebar). The tasks run on after the dashboard stops;
their folders are never deleted, and :meth:`SlurmExecutor.resume` (the next dashboard's start)
watches and merges the sweeps a stopped one left. No Streamlit here.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from profiling_worker.errors import JobError
from profiling_worker.schema import columns
from profiling_worker.schema.manifest import JobStatus, now_iso, write_manifest
from profiling_worker.schema.spec import JobSpec
from profiling_worker.sweep_merge import merge_sweep

from app.services import sweep_plan as plan
from app.services import sweep_resume
from app.services import sweep_tasks as T
from app.services.job_book import JobBook
from app.services.job_model import Job, TaskView, claim_job_dir
from app.services.job_recovery import internal_error
from app.services.result_store import job_path
from app.services.sweep_queue import SlurmMissing, SubmititQueue, TaskQueue, slurm_parameters

CANCEL_WAIT_S = 120.0  # after a cancel, how long to wait for tasks to stop before merging
SHUTDOWN_JOIN_S = 5.0  # how long shutdown waits for the watchers to stop
SUBMITTING = "submitting"  # the stage of a sweep whose array is being submitted


@dataclasses.dataclass
class _Sweep:
    job: Job
    options: plan.SweepOptions
    queue: TaskQueue
    tasks: list[T.Task]
    started_at: str
    retries: list[str] = dataclasses.field(default_factory=list)  # one line per retry, named


class SlurmExecutor(JobBook):
    """Run sweeps as job arrays. Thread-safe; no Streamlit.

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
        self._sweeps: dict[str, _Sweep] = {}
        self._threads: list[threading.Thread] = []

    def _queue(self, spec: JobSpec, options: plan.SweepOptions, folder: Path) -> TaskQueue:
        """The sweep's scheduler: submitit on Slurm, or its local executor."""
        return SubmititQueue(options.cluster, folder / plan.SUBMITIT_DIR,
                             options.worker_python or self.worker_python,
                             slurm_parameters(spec, options, f"kprof-{folder.name}"))

    # -- public API ---------------------------------------------------------------------------
    def submit(self, spec: JobSpec, options: plan.SweepOptions | None = None) -> str:
        """Split the spec's configs into array tasks and start submitting them; returns the job
        id at once (stage ``submitting``): the watcher thread writes the attempt folders and
        submits the array. sbatch refusing it ends the job ``failed`` (kind ``slurm_missing``).

        Raises:
            SlurmMissing: Slurm's sbatch is not here (nothing is queued: the job folder
                records the failure).
            OSError: the job folder cannot be written.
        """
        options = options or plan.SweepOptions()
        job_id, path = claim_job_dir(self.results_dir, spec, path_of=job_path)
        splits = plan.split_configs(len(spec.configs), options.configs_per_task)
        tasks = [T.Task(i, plan.task_name(i), c) for i, c in enumerate(splits)]
        job = Job(job_id=job_id, path=path, spec=spec, lane=_lane(options))
        (path / columns.SPEC_FILE).write_text(json.dumps(spec.to_json(), indent=2),
                                              encoding="utf-8")
        plan.write_plan(path, options, splits)
        sweep = _Sweep(job, options, self._queue(spec, options, path), tasks, now_iso())
        write_manifest(path, self._state(job, {}, executor=self._executor_entry(sweep)))
        if (missing := sweep.queue.missing()) is not None:
            with self._lock:
                self._finish(job, JobStatus.FAILED, _slurm_missing(missing))
            raise SlurmMissing(missing)
        sweep_resume.claim(path)
        self._watch_in_thread(sweep)
        return job_id

    def submit_each_type(self, spec: JobSpec, options: plan.SweepOptions,
                         gpu_types: list[str]) -> list[str]:
        """The same spec as one sweep per GPU type (``--gres=gpu:<type>:<n>``); job ids."""
        return [self.submit(spec, o) for o in plan.per_gpu_type(options, gpu_types)]

    def resume(self) -> list[str]:
        """Watch again the unfinished sweeps of the results folder whose dashboard is gone
        (:func:`sweep_resume.unwatched`): their tasks are asked of Slurm by id, retried and
        merged as if this executor had submitted them; tasks never submitted are submitted
        now. A sweep that cannot be rebuilt from its files ends ``interrupted``, saying why.
        Returns the ids now watched."""
        ids = []
        for path, manifest in sweep_resume.unwatched(self.results_dir):
            if not sweep_resume.claim(path):
                continue
            try:
                spec, options, tasks, record = sweep_resume.rebuild(path)
            except (OSError, ValueError, KeyError) as exc:
                sweep_resume.release(path)
                _not_resumed(path, manifest, exc)
                continue
            job = Job(job_id=path.name, path=path, spec=spec, lane=_lane(options),
                      status=JobStatus(manifest["status"]),
                      submitted_at=manifest.get("created_at") or now_iso(),
                      cancel_requested=record.cancelled)
            sweep = _Sweep(job, options, self._queue(spec, options, path), tasks,
                           manifest.get("started_at") or job.submitted_at, record.notes)
            with self._lock:
                self._write_state(job)  # the manifest now names this server
            self._watch_in_thread(sweep)
            ids.append(job.job_id)
        return ids

    def cancel(self, job_id: str) -> None:
        """Cancel the sweep's array (scancel): pending tasks never start, running ones get
        SIGTERM; tasks that finished stay and are merged. Tasks still being submitted are
        cancelled as soon as sbatch has answered."""
        with self._lock:
            sweep = self._sweeps.get(job_id)
            if sweep is None or not sweep.job.active or sweep.job.cancel_requested:
                return
            sweep.job.cancel_requested = True
            ids = _live_ids(sweep.tasks)
        sweep_resume.record_cancel(sweep.job.path)
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
    def _executor_entry(self, sweep: _Sweep) -> dict[str, object]:
        return {"name": "slurm" if sweep.options.cluster == "slurm" else "submitit-local",
                "options": sweep.options.to_json(), "tasks": len(sweep.tasks)}

    def _watch_in_thread(self, sweep: _Sweep) -> None:
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

    def _start_attempts(self, sweep: _Sweep, tasks: list[T.Task],
                        notes: dict[str, str] | None = None) -> None:
        """Make the next attempt folder of each task and submit them as one array; record
        them (``queue.jsonl``, with the retry notes). A cancel that came meanwhile cancels
        them at once.

        Raises:
            SlurmMissing: sbatch refused the array.
        """
        folders = plan.write_attempts(sweep.job.path, sweep.job.spec,
                                      [(t.index, t.configs) for t in tasks],
                                      sweep.options.reference)
        ids = sweep.queue.submit(folders)
        sweep_resume.record_submitted(sweep.job.path, [
            (t.index, int(f.name[1:]), sid, (notes or {}).get(t.name, ""))
            for t, f, sid in zip(tasks, folders, ids)])
        with self._lock:
            for task, folder, sid in zip(tasks, folders, ids):
                task.attempts.append(T.Attempt(folder, sid))
            cancelled = sweep.job.cancel_requested
        if cancelled:
            sweep.queue.cancel(ids)

    def _watch(self, sweep: _Sweep) -> None:
        job = sweep.job
        try:
            if not self._submit_rest(sweep):
                return
            cancelled_at = None
            while not self._stopped:
                ended = self._poll(sweep)
                if job.cancel_requested and cancelled_at is None:
                    cancelled_at = time.monotonic()
                    sweep.queue.cancel(_live_ids(sweep.tasks))  # again: a resumed sweep
                if ended or (cancelled_at and time.monotonic() - cancelled_at > CANCEL_WAIT_S):
                    break
                with self._wake:
                    self._wake.wait(self.poll_s)  # shutdown wakes it
            if self._stopped:
                return
            self._merge(sweep)
        except Exception as exc:  # a watcher must end its job, whatever went wrong
            traceback.print_exc()
            with self._lock:
                if job.active:
                    self._finish(job, JobStatus.FAILED, internal_error(job.path, exc))
        finally:
            sweep_resume.release(job.path)
        self._ended(job)

    def _submit_rest(self, sweep: _Sweep) -> bool:
        """Submit the tasks that have no attempt yet (a new sweep: all). False when sbatch
        refused them: the job has ended ``failed``, nothing of it is queued."""
        rest = [t for t in sweep.tasks if not t.attempts]
        if not rest:
            return True
        try:
            self._start_attempts(sweep, rest)
        except SlurmMissing as exc:
            with self._lock:
                self._finish(sweep.job, JobStatus.FAILED, _slurm_missing(str(exc)))
            self._ended(sweep.job)
            return False
        with self._lock:
            sweep.job.tasks = _pending_views(sweep.tasks)
            sweep.job.stage = ""
        return not self._stopped

    def _poll(self, sweep: _Sweep) -> bool:
        """One look at every task; retries what may be retried. True when all have ended."""
        job, live = sweep.job, [t for t in sweep.tasks if t.final is None]
        try:
            states = sweep.queue.states([t.attempts[-1].scheduler_id for t in live])
        except SlurmMissing as exc:
            with self._lock:
                if not job.warnings or job.warnings[-1] != str(exc):
                    job.warnings.append(str(exc))
            return False
        retry, views = [], {t.name: t.final for t in sweep.tasks if t.final is not None}
        notes: dict[str, str] = {}
        for task in live:
            attempt = task.attempts[-1]
            queued = states.get(attempt.scheduler_id)
            attempt.read_progress(queued)
            state, reason = T.decide(attempt, queued, job.cancel_requested)
            views[task.name] = T.view(task, state, reason)
            if state in T.RETRIED and len(task.attempts) <= sweep.options.retries \
                    and not job.cancel_requested:
                retry.append(task)
                note = (f"task {task.name} {state} ({reason}): retry {len(task.attempts)} of "
                        f"{sweep.options.retries}")
                sweep.retries.append(note)
                notes[task.name] = note
                with self._lock:
                    job.warnings.append(note)
            elif state in T.ENDED:
                task.final = views[task.name]
        if retry:
            self._start_attempts(sweep, retry, notes)
            views.update({t.name: T.view(t, T.PENDING, f"retry of {views[t.name].state}")
                          for t in retry})
        with self._lock:
            job.tasks = tuple(views[t.name] for t in sweep.tasks)
            job.done = sum(v.state in T.ENDED for v in job.tasks)
            job.stage = ", ".join(f"{n} {s}" for s, n in _counts(job.tasks).items())
            if job.status == JobStatus.QUEUED and any(v.state == T.RUNNING for v in job.tasks):
                job.status = JobStatus.RUNNING
                self._write_state(job, started_at=now_iso())
        return all(t.final is not None for t in sweep.tasks)

    def _merge(self, sweep: _Sweep) -> None:
        job = sweep.job
        with self._lock:
            job.stage = "merging"
            views = list(job.tasks)
        tasks = [{"task": v.name, "configs": list(v.configs), "state": v.state,
                  "attempts": v.attempt + 1, "reason": v.reason, "node": v.node,
                  "folder": str(t.attempts[-1].folder)} for v, t in zip(views, sweep.tasks)]
        manifest = merge_sweep(job.path, tasks, cancelled=job.cancel_requested,
                               started_at=sweep.started_at, retries=sweep.retries)
        with self._lock:
            job.status = JobStatus(manifest["status"])
            job.error = manifest.get("error")
            job.warnings = sweep.retries + list(manifest.get("warnings") or [])
            job.stage = "merged"
            self._wake.notify_all()


def _lane(options: plan.SweepOptions) -> str:
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


def _slurm_missing(message: str) -> JobError:
    """The error of a sweep that Slurm did not take."""
    return {"kind": "slurm_missing", "message": message,
            "hint": "run the dashboard on a host with Slurm's commands (sbatch, squeue, scancel) "
                    "and SLURM_CONF, or choose Run on: this host", "log_tail": ""}


def _not_resumed(path: Path, manifest: dict[str, object], exc: Exception) -> None:
    """End a sweep that cannot be rebuilt from its folder ``interrupted``, saying why."""
    manifest.update(status=JobStatus.INTERRUPTED.value, finished_at=now_iso(), error={
        "kind": "interrupted", "log_tail": "",
        "message": f"The dashboard that watched this sweep stopped, and the sweep cannot be "
                   f"watched again from its folder: {type(exc).__name__}: {exc}",
        "hint": "The tasks' folders (tasks/) and Slurm logs (.submitit/) are kept; submit "
                "the sweep again."})
    try:
        write_manifest(path, manifest)
    except OSError as err:
        print(f"kprof sweeps: cannot mark {path.name} interrupted: {err}", file=sys.stderr,
              flush=True)


def _counts(tasks: tuple[TaskView, ...]) -> dict[str, int]:
    """How many tasks are in each state, in the order pending, running, done, failed ..."""
    order = (T.PENDING, T.RUNNING, T.DONE, T.FAILED, T.PREEMPTED, T.CANCELLED)
    return {s: n for s in order if (n := sum(v.state == s for v in tasks))}


def slurm_available() -> str | None:
    """None when this host can submit to Slurm (``sbatch`` and ``squeue`` on PATH), else why
    not (the sidebar shows it)."""
    missing = [c for c in ("sbatch", "squeue", "scancel") if shutil.which(c) is None]
    return f"Slurm commands not found here: {', '.join(missing)}" if missing else None
