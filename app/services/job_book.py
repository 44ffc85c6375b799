"""What the job queue knows about its jobs: their in-memory state and their manifests.

:class:`JobBook` is the bookkeeping half of :class:`~app.services.job_manager.JobManager`
(which adds the lanes and the worker processes): the jobs of this server under one lock, the
worker's events applied to them, the final status decided from the worker's manifest (or
written when the worker left none), and every manifest write the manager makes. It starts no
process and never imports Streamlit.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from profiling_worker.bundle.errors import JobError
from profiling_worker.bundle.schema.manifest import (JobStatus, ManifestError, now_iso,
                                                     read_manifest, update_manifest)

from app.services import worker_client
from app.services.job_model import Job
from app.services.job_recovery import (disk_full_error, interrupted_error, release_space,
                                       safe_log_tail, set_aside_partial)

POLL_S = 0.2  # how often a running job's events file and exit status are read


_FINISHED = {s.value for s in JobStatus if s.finished}


class JobBook:
    """This server's jobs and their manifests, thread-safe; a waiter is woken on each change.

    Args:
        on_end: called with a copy of each job once it has its final status (from a lane
            thread; exceptions are printed and ignored).
    """

    def __init__(self, on_end: Callable[[Job], None] | None = None) -> None:
        self.on_end = on_end
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._jobs: dict[str, Job] = {}
        self._stopped = False  # set by the manager's shutdown: a killed job ends interrupted

    def snapshot(self) -> list[Job]:
        """Copies of this server's jobs, oldest first."""
        with self._lock:
            return [dataclasses.replace(j, warnings=list(j.warnings)) for j in self._jobs.values()]

    def get(self, job_id: str) -> Job | None:
        """A copy of one job, or None if this server did not submit it."""
        with self._lock:
            job = self._jobs.get(job_id)
            return dataclasses.replace(job) if job else None

    def active(self) -> bool:
        """True while any job is queued or running."""
        with self._lock:
            return any(j.active for j in self._jobs.values())

    def wait(self, job_id: str, timeout_s: float) -> JobStatus:
        """Block until the job finishes or ``timeout_s`` passes; returns its status."""
        deadline = time.monotonic() + timeout_s
        with self._wake:
            while self._jobs[job_id].active and time.monotonic() < deadline:
                self._wake.wait(timeout=min(POLL_S, max(0.0, deadline - time.monotonic())))
            return self._jobs[job_id].status

    def _ended(self, job: Job) -> None:
        """Tell ``on_end`` (the history index) that a job reached its final status."""
        try:
            if self.on_end is not None:
                self.on_end(dataclasses.replace(job))
        except Exception:  # the index is a cache: a failure must not stop the queue
            traceback.print_exc()

    def _apply(self, job: Job, new_events: list[dict[str, Any]]) -> None:
        with self._lock:
            for ev in new_events:
                kind = ev.get("event")
                if kind == "progress":
                    job.done = int(ev.get("done") or 0)
                    job.total = int(ev.get("total") or 0)
                    job.stage = str(ev.get("stage") or "")
                elif kind == "warning":
                    job.warnings.append(str(ev.get("message", "")))
                elif kind == "error":
                    job.error = {"kind": ev.get("kind", ""), "message": ev.get("message", ""),
                                 "hint": ev.get("hint", ""), "log_tail": ev.get("log_tail", "")}

    def _settle(self, job: Job, returncode: int) -> None:
        """Decide the final status from the worker's manifest, or write one when it left none."""
        try:
            manifest = read_manifest(job.path)
            status = JobStatus(manifest["status"])
        except ManifestError:
            manifest, status = {}, JobStatus.RUNNING
        if not status.finished and job.error is None:  # events.jsonl unwritable (disk full)?
            self._apply(job, [ev for ev in worker_client.console_events(job.path)
                              if ev.get("event") == "error"])
        with self._lock:
            if status.finished:  # the worker wrote its result: take it as it is
                release_space(job.path)
                job.error = manifest.get("error") or job.error
                job.status = status
                self._wake.notify_all()
                return
            if job.cancel_requested:
                self._finish(job, JobStatus.CANCELLED, None)
                return
            if self._stopped:  # shutdown() killed it
                self._finish(job, JobStatus.INTERRUPTED, interrupted_error(job.path))
                return
            how = f"was killed by signal {-returncode}" if returncode < 0 else \
                f"exited with code {returncode}"
            ok_but_empty = returncode == 0
            error: JobError = job.error or {
                "kind": "worker_died",
                "message": f"The worker {how} without writing a result (manifest.json)."
                if not ok_but_empty else "The worker exited without writing manifest.json.",
                "hint": "Read the log tail below; run `python -m profiling_worker run "
                        f"{job.path}` in a shell to reproduce.",
            }
            error = {**error, "log_tail": error.get("log_tail") or safe_log_tail(job.path)}
            failure = disk_full_error(job.path, error)
            set_aside_partial(job.path)
            self._finish(job, JobStatus.FAILED, failure)

    def _finish(self, job: Job, status: JobStatus, error: JobError | None) -> None:
        """Set a final status and write it to the manifest. Caller holds ``self._lock``."""
        job.status = status
        job.error = error
        self._write_state(job, finished_at=now_iso(), error=error)
        self._wake.notify_all()

    def _state(self, job: Job, previous: dict[str, Any], **extra: Any) -> dict[str, Any]:
        """The manifest ``previous`` with the job's state; a result the worker already wrote
        (a finished status) is kept when the manager's own state is not final yet."""
        if not job.status.finished and previous.get("status") in _FINISHED:
            return previous  # the worker finished before its pid was recorded
        data = {**previous, "job_id": job.job_id, "status": job.status.value,
                "spec": job.spec.to_json(), "created_at": previous.get("created_at") or job.submitted_at,
                "backend": previous.get("backend") or {"name": job.spec.backend},
                "server": {"pid": os.getpid(), "host": socket.gethostname(),
                           "process": process_name()}}
        data.update({k: v for k, v in extra.items() if v is not None})
        return data

    def _write_state(self, job: Job, **extra: Any) -> bool:
        """(Re)write the manifest of a job the worker has not finished. A failed write (disk
        full) is reported on stderr and in the job's in-memory error; the queue goes on."""
        try:
            try:
                update_manifest(job.path, lambda previous: self._state(job, previous, **extra))
            except OSError:
                if not (job.status.finished and release_space(job.path)):
                    raise
                update_manifest(job.path,  # in the freed reserve
                                lambda previous: self._state(job, previous, **extra))
            if job.status.finished:
                release_space(job.path)
            return True
        except OSError as exc:
            print(f"kprof job manager: cannot write {job.path}/manifest.json: {exc}",
                  file=sys.stderr, flush=True)
            if job.status == JobStatus.FAILED and job.error is not None:
                job.error = {**job.error, "hint": f"{job.error.get('hint') or ''} (The failed "
                             f"status could not be saved either: {exc}.)".strip()}
            return False


def process_name(argv0: str | None = None) -> str:
    """What the process that owns a job is called where a person reads it: ``kernel-sweep``
    for the sweep command (its console script or ``app/sweep_cli.py``), else ``dashboard
    server``. A sweep started by kernel-sweep was said to be watched by "the dashboard
    server"."""
    name = os.path.basename(sys.argv[0] if argv0 is None else argv0)
    return "kernel-sweep" if name in ("kernel-sweep", "sweep_cli.py") else "dashboard server"
