"""Sweeps on a cluster: a job's configs as a Slurm job array (through submitit), watched,
cancelled, retried and merged into one bundle.

:class:`SlurmExecutor` is the cluster half of :class:`~app.services.executor.Executor` (the
job manager's lanes are the host half): the same ``submit`` / ``cancel`` / ``snapshot`` /
``wait`` / ``shutdown``, and the same :class:`~app.services.job_model.Job` for the job panel,
with one :class:`~app.services.job_model.TaskView` per array task. One watcher thread per
sweep (:mod:`app.services.sweep_watch`) reads the scheduler's states and the tasks' event
files every ``poll_s``, resubmits a failed or preempted task up to ``retries`` times, and
merges the finished tasks when every task has ended. ``submit`` returns once the sweep's
folder and plan are written: the watcher thread makes the attempt folders and calls sbatch
(a 1,000-task sweep does not hold the sidebar). The tasks run on after the dashboard stops;
their folders are never deleted, and :meth:`SlurmExecutor.resume` (the next dashboard's start,
then every :data:`SCAN_S` through :meth:`SlurmExecutor.keep_resuming`) watches and merges the
sweeps a stopped server or ``kernel-sweep`` left; of several servers on one results folder,
the one holding a sweep's watch lock watches it, the others show it read-only. No Streamlit.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from profiling_worker.bundle.schema import columns
from profiling_worker.bundle.schema.manifest import (JobStatus, ManifestError, now_iso,
                                                     read_manifest, write_manifest)
from profiling_worker.bundle.schema.spec import JobSpec

from app.services import sweep_errors as E
from app.services.job_book import FOLLOW_S, SCAN_S
from app.services import sweep_lock, sweep_resume
from app.services import sweep_plan as plan
from app.services import sweep_tasks as T
from app.services.job_model import Job, claim_job_dir
from app.services.job_recovery import reserve_space
from app.services.result_store import job_path
from app.services.sweep_queue import SlurmMissing
from app.services.sweep_watch import SUBMITTING, Sweep, SweepWatcher, lane_name

__all__ = ["FOLLOW_S", "SCAN_S", "SUBMITTING", "SlurmExecutor", "slurm_available"]
#: The stage of a sweep shown read-only: its progress is its tasks done of all, from its folder.
READ_ONLY_STAGE = "tasks done"


class SlurmExecutor(SweepWatcher):
    """Run sweeps as job arrays (arguments as :class:`SweepWatcher`'s). Thread-safe; no
    Streamlit."""

    def __init__(self, results_dir: Path, worker_python: str, poll_s: float = 1.0,
                 on_end: Callable[[Job], None] | None = None) -> None:
        super().__init__(results_dir, worker_python, poll_s, on_end)
        self._not_resumed: dict[str, str] = {}  # sweep id -> why, said once per change

    def submit(self, spec: JobSpec, options: plan.SweepOptions | None = None) -> str:
        """Split the spec's configs into array tasks and start submitting them; returns the job
        id at once (stage ``submitting``): the watcher thread writes the attempt folders and
        submits the array. sbatch refusing it ends the job ``failed`` (kind ``slurm_missing``).

        Raises:
            SlurmMissing: Slurm's sbatch is not here (nothing is queued: the job folder
                records the failure).
            OSError: the job folder cannot be written (nothing is queued).
        """
        options = options or plan.SweepOptions()
        job_id, path = claim_job_dir(self.results_dir, spec, path_of=job_path)
        sweep_lock.claim(path)  # before sweep.json: no other server may take it meanwhile
        splits = plan.split_configs(len(spec.configs), options.configs_per_task)
        tasks = [T.Task(i, plan.task_name(i), c) for i, c in enumerate(splits)]
        job = Job(job_id=job_id, path=path, spec=spec, lane=lane_name(options))
        sweep = Sweep(job, options, self._queue(spec, options, path), tasks, now_iso())
        try:
            (path / columns.SPEC_FILE).write_text(json.dumps(spec.to_json(), indent=2),
                                                  encoding="utf-8")
            plan.write_plan(path, options, splits)
            write_manifest(path, self._state(job, {}, executor=self._executor_entry(sweep)))
            reserve_space(path)  # room for the final manifest when a merge fills the disk
        except OSError:
            sweep_lock.release(path)
            raise
        if (missing := sweep.queue.missing()) is not None:
            with self._lock:
                self._finish(job, JobStatus.FAILED, E.slurm_missing(missing))
            sweep_lock.release(path)
            raise SlurmMissing(missing)
        self._watch_in_thread(sweep)
        return job_id

    def submit_each_type(self, spec: JobSpec, options: plan.SweepOptions,
                         gpu_types: list[str]) -> list[str]:
        """The same spec as one sweep per GPU type (``--gres=gpu:<type>:<n>``); job ids."""
        return [self.submit(spec, o) for o in plan.per_gpu_type(options, gpu_types)]

    def resume(self) -> list[str]:
        """Watch again the unfinished sweeps of the results folder that no server watches (no
        one holds their watch lock, :mod:`app.services.sweep_lock`): their tasks are asked of
        Slurm by id, an array submitted without its ids recorded is found by its name
        (:func:`sweep_resume.adopt`), tasks are retried and merged as if this executor had
        submitted them, tasks never submitted are submitted now. A sweep that cannot be
        rebuilt from its files ends ``interrupted``, saying why. A sweep another server
        watches is shown read-only (``Job.watched_by``) and taken over if that server stops.
        Returns the ids now watched."""
        ids = []
        for path, manifest in sweep_resume.unwatched(self.results_dir):
            with self._lock:
                if path.name in self._followed:
                    continue
            try:
                mine = not sweep_resume.other_host(manifest) and sweep_lock.claim(path)
            except OSError as exc:
                self._show_sweep(path, manifest, f"no server: cannot lock it ({exc})")
                continue
            if not mine:
                self._show_sweep(path, manifest, sweep_resume.watcher_text(manifest))
            elif self._resume_claimed(path):
                ids.append(path.name)
        return ids

    def keep_resuming(self, every_s: float = SCAN_S) -> None:
        """Call :meth:`resume` every ``every_s`` s in a thread until :meth:`shutdown`: a sweep
        that appears after this server started (a head-less ``kernel-sweep``, another
        dashboard) is shown read-only while its watcher runs and watched and merged from here
        once that watcher is gone, not only after this server restarts. Idempotent."""
        if (scanner := self._keep_scanning(self.resume, every_s, "kprof-sweep-scanner")):
            self._threads.append(scanner)  # joined at shutdown: no claim after it

    def _resume_claimed(self, path: Path, note: str = "") -> bool:
        """Rebuild a sweep whose lock this process now holds and watch it; False (lock given
        back) when its files cannot be read back (it ends ``interrupted``) or Slurm does not
        answer (left for the next try). Its manifest is read again under the lock: a sweep
        that ended meanwhile (its watcher merged it, then let the lock go) is left as it is,
        never merged twice."""
        try:
            manifest = read_manifest(path)
        except ManifestError:
            manifest = {"status": JobStatus.FAILED.value}  # being rewritten: the next look
        if JobStatus(manifest["status"]).finished:
            sweep_lock.release(path)
            return False
        try:
            spec, options, tasks, record = sweep_resume.rebuild(path)
            queue = self._queue(spec, options, path)
            notes = sweep_resume.adopt(path, tasks, record.unrecorded, queue.adopt)
        except SlurmMissing as exc:
            sweep_lock.release(path)
            self._say_not_resumed(path.name, str(exc))
            return False
        except (OSError, ValueError, KeyError) as exc:
            sweep_lock.release(path)
            E.not_resumed(path, manifest, exc)
            return False
        job = Job(job_id=path.name, path=path, spec=spec, lane=lane_name(options),
                  status=JobStatus(manifest["status"]),
                  submitted_at=manifest.get("created_at") or now_iso(),
                  cancel_requested=record.cancelled)
        sweep = Sweep(job, options, queue, tasks, manifest.get("started_at") or job.submitted_at,
                       record.notes, [note] * bool(note) + notes)
        for line in sweep.notes:
            print(f"kprof sweeps: {path.name}: {line}", file=sys.stderr, flush=True)
        with self._lock:
            job.warnings = sweep.notes + sweep.retries
            self._followed.pop(path.name, None)
            self._not_resumed.pop(path.name, None)
            self._write_state(job)  # the manifest now names this server
        self._watch_in_thread(sweep)
        return True

    def _say_not_resumed(self, job_id: str, why: str) -> None:
        """Log that a sweep could not be watched from here, once per reason: the scan retries
        it every :data:`SCAN_S` and logged the same line each time."""
        with self._lock:
            if self._not_resumed.get(job_id) == why:
                return
            self._not_resumed[job_id] = why
        print(f"kprof sweeps: {job_id} not resumed: {why} (tried again every {SCAN_S:g} s; "
              "said again only if the reason changes)", file=sys.stderr, flush=True)

    def _show_sweep(self, path: Path, manifest: dict[str, Any], watcher: str) -> None:
        """List a sweep that another server watches, without Cancel (``watched_by``), and
        follow it every :data:`FOLLOW_S`: its status from its manifest, until it ends or its
        watch lock is free (then this server takes it over)."""
        try:
            spec, options, tasks, _ = sweep_resume.rebuild(path)
        except (OSError, ValueError, KeyError):
            return  # its watcher reads it; nothing of it to show here
        job = Job(job_id=path.name, path=path, spec=spec, lane=lane_name(options),
                  status=JobStatus(manifest["status"]), total=len(tasks), watched_by=watcher,
                  done=sweep_resume.tasks_done(tasks), stage=READ_ONLY_STAGE,
                  submitted_at=manifest.get("created_at") or now_iso())
        if (follower := self._show_read_only(job)):
            self._threads.append(follower)

    def _follow_one(self, job: Job) -> None:
        """One look at a read-only sweep: ended (its status taken), its watcher gone (taken
        over), or still watched elsewhere (its status and tasks done shown)."""
        try:
            manifest = read_manifest(job.path)
            status = JobStatus(manifest["status"])
            free = (not status.finished and not sweep_resume.other_host(manifest)
                    and sweep_lock.claim(job.path))
            done = None if free else sweep_resume.tasks_done(sweep_resume.rebuild(job.path)[2])
        except (ManifestError, OSError, ValueError, KeyError):
            return
        if free:
            self._resume_claimed(job.path, f"taken over by this server: the {job.watched_by} "
                                 f"that watched it stopped")
            return
        with self._lock:
            job.status, job.error, job.done = status, manifest.get("error"), done or 0
            job.warnings = list(manifest.get("warnings") or [])
            if status.finished:
                self._followed.pop(job.job_id, None)
            self._wake.notify_all()


def slurm_available() -> str | None:
    """None when this host can submit to Slurm (``sbatch`` and ``squeue`` on PATH), else why
    not (the sidebar shows it)."""
    missing = [c for c in ("sbatch", "squeue", "scancel") if shutil.which(c) is None]
    return f"Slurm commands not found here: {', '.join(missing)}" if missing else None
