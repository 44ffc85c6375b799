"""Sweeps on a cluster: a job's configs as a Slurm job array (through submitit), watched,
cancelled, retried and merged into one bundle.

:class:`SlurmExecutor` is the cluster half of :class:`~app.services.executor.Executor` (the
job manager's lanes are the host half): the same ``submit`` / ``cancel`` / ``snapshot`` /
``wait`` / ``shutdown``, and the same :class:`~app.services.job_model.Job` for the job panel,
with one :class:`~app.services.job_model.TaskView` per array task. One watcher thread per
sweep reads the scheduler's states and the tasks' event files every ``poll_s``, resubmits a
failed or preempted task (a new attempt folder, as a new array) up to ``retries`` times, and
merges the finished tasks when every task has ended. The tasks run on after the dashboard
stops; their folders are never deleted. No Streamlit here.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from profiling_worker.schema import columns
from profiling_worker.schema.manifest import JobStatus, now_iso, write_manifest
from profiling_worker.schema.spec import JobSpec
from profiling_worker.sweep_merge import merge_sweep

from app.services import sweep_plan as plan
from app.services import sweep_tasks as T
from app.services.job_book import JobBook
from app.services.job_model import Job, TaskView, claim_job_dir
from app.services.job_recovery import internal_error
from app.services.result_store import job_path
from app.services.sweep_queue import SlurmMissing, SubmititQueue, TaskQueue, slurm_parameters

CANCEL_WAIT_S = 120.0  # after a cancel, how long to wait for tasks to stop before merging


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

    def _queue(self, spec: JobSpec, options: plan.SweepOptions, folder: Path) -> TaskQueue:
        """The sweep's scheduler: submitit on Slurm, or its local executor."""
        return SubmititQueue(options.cluster, folder / plan.SUBMITIT_DIR,
                             options.worker_python or self.worker_python,
                             slurm_parameters(spec, options, f"kprof-{folder.name}"))

    # -- public API ---------------------------------------------------------------------------
    def submit(self, spec: JobSpec, options: plan.SweepOptions | None = None) -> str:
        """Split the spec's configs into array tasks and submit them; returns the job id.

        Raises:
            SlurmMissing: Slurm is not installed here or refused the array (nothing is left
                queued: the job folder records the failure).
            OSError: the job folder cannot be written.
        """
        options = options or plan.SweepOptions()
        job_id, path = claim_job_dir(self.results_dir, spec, path_of=job_path)
        splits = plan.split_configs(len(spec.configs), options.configs_per_task)
        tasks = [T.Task(i, plan.task_name(i), c) for i, c in enumerate(splits)]
        job = Job(job_id=job_id, path=path, spec=spec,
                  lane=f"slurm:{options.partition or 'default'}" if options.cluster == "slurm"
                  else "local-array")
        (path / columns.SPEC_FILE).write_text(json.dumps(spec.to_json(), indent=2),
                                              encoding="utf-8")
        plan.write_plan(path, options, splits)
        sweep = _Sweep(job, options, self._queue(spec, options, path), tasks, now_iso())
        write_manifest(path, self._state(job, {}, executor=self._executor_entry(sweep)))
        try:
            self._start_attempts(sweep, tasks)
        except SlurmMissing as exc:
            with self._lock:
                self._finish(job, JobStatus.FAILED, {"kind": "slurm_missing", "message": str(exc),
                             "hint": "run the dashboard on a host with Slurm's commands "
                             "(sbatch, squeue, scancel) and SLURM_CONF, or choose Run on: this "
                             "host", "log_tail": ""})
            raise
        with self._lock:
            self._jobs[job_id] = job
            self._sweeps[job_id] = sweep
            job.tasks = tuple(T.view(t, T.PENDING, "") for t in tasks)
            job.total = len(tasks)
        threading.Thread(target=self._watch, args=(sweep,), daemon=True,
                         name=f"kprof-sweep-{job_id}").start()
        return job_id

    def submit_each_type(self, spec: JobSpec, options: plan.SweepOptions,
                         gpu_types: list[str]) -> list[str]:
        """The same spec as one sweep per GPU type (``--gres=gpu:<type>:<n>``); job ids."""
        return [self.submit(spec, o) for o in plan.per_gpu_type(options, gpu_types)]

    def cancel(self, job_id: str) -> None:
        """Cancel the sweep's array (scancel): pending tasks never start, running ones get
        SIGTERM; tasks that finished stay and are merged."""
        with self._lock:
            sweep = self._sweeps.get(job_id)
            if sweep is None or not sweep.job.active:
                return
            sweep.job.cancel_requested = True
            ids = [t.attempts[-1].scheduler_id for t in sweep.tasks if t.final is None]
        sweep.queue.cancel(ids)

    def shutdown(self) -> None:
        """Stop watching (the dashboard exits); the tasks run on in Slurm."""
        with self._wake:
            self._stopped = True
            self._wake.notify_all()

    # -- watching -----------------------------------------------------------------------------
    def _executor_entry(self, sweep: _Sweep) -> dict[str, object]:
        return {"name": "slurm" if sweep.options.cluster == "slurm" else "submitit-local",
                "options": sweep.options.to_json(), "tasks": len(sweep.tasks)}

    def _start_attempts(self, sweep: _Sweep, tasks: list[T.Task]) -> None:
        """Make the next attempt folder of each task and submit them as one array."""
        folders = [plan.write_attempt(sweep.job.path, sweep.job.spec, t.configs, t.index,
                                      len(t.attempts), sweep.options.reference) for t in tasks]
        ids = sweep.queue.submit(folders)
        for task, folder, sid in zip(tasks, folders, ids):
            task.attempts.append(T.Attempt(folder, sid))

    def _watch(self, sweep: _Sweep) -> None:
        job = sweep.job
        try:
            cancelled_at = None
            while not self._stopped:
                ended = self._poll(sweep)
                if job.cancel_requested and cancelled_at is None:
                    cancelled_at = time.monotonic()
                if ended or (cancelled_at and time.monotonic() - cancelled_at > CANCEL_WAIT_S):
                    break
                time.sleep(self.poll_s)
            if self._stopped:
                return
            self._merge(sweep)
        except Exception as exc:  # a watcher must end its job, whatever went wrong
            traceback.print_exc()
            with self._lock:
                if job.active:
                    self._finish(job, JobStatus.FAILED, internal_error(job.path, exc))
        self._ended(job)

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
                with self._lock:
                    job.warnings.append(note)
            elif state in T.ENDED:
                task.final = views[task.name]
        if retry:
            self._start_attempts(sweep, retry)
            if job.cancel_requested:  # cancelled while the retries were submitted
                sweep.queue.cancel([t.attempts[-1].scheduler_id for t in retry])
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


def _counts(tasks: tuple[TaskView, ...]) -> dict[str, int]:
    """How many tasks are in each state, in the order pending, running, done, failed ..."""
    order = (T.PENDING, T.RUNNING, T.DONE, T.FAILED, T.PREEMPTED, T.CANCELLED)
    return {s: n for s in order if (n := sum(v.state == s for v in tasks))}


def slurm_available() -> str | None:
    """None when this host can submit to Slurm (``sbatch`` and ``squeue`` on PATH), else why
    not (the sidebar shows it)."""
    missing = [c for c in ("sbatch", "squeue", "scancel") if shutil.which(c) is None]
    return f"Slurm commands not found here: {', '.join(missing)}" if missing else None
