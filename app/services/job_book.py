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
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from profiling_worker.bundle.errors import Cancelled, JobError
from profiling_worker.bundle.schema.manifest import (JobStatus, ManifestError, now_iso,
                                                     read_manifest, update_manifest)
from profiling_worker.bundle.schema import partial
from profiling_worker.bundle.schema.owner import owner_entry

from app.services import worker_client
from app.services.job_model import Job
from app.services.job_recovery import (RESULT_KEPT, disk_full_error, interrupted_error,
                                       release_space, result_was_ready, safe_log_tail,
                                       set_aside_unless_ready)

POLL_S = 0.2  # how often a running job's events file and exit status are read
FOLLOW_S = 5.0  # how often a job another process owns is read again (status, progress)
SCAN_S = 5.0  # how often the results folder is looked through for jobs other processes queue


_FINISHED = {s.value for s in JobStatus if s.finished}



def follow_config(job: Job, ev: dict[str, Any]) -> None:
    """Where a progress event ``ev`` says the worker is: its config and run (absent in a
    warm-up, and in the events of a stage without configs, which clear them) and, when the
    config changed, the event's time as the config's start."""
    config = ev.get("config")
    if config is None:
        job.config = job.run = job.config_since = None
        return
    if config != job.config or job.config_since is None:
        job.config_since = float(ev.get("t") or 0.0) or None
    job.config = int(config)
    job.run = None if ev.get("run") is None else int(ev["run"])

class JobBook:
    """This server's jobs and their manifests, thread-safe; a waiter is woken on each change.

    Args:
        on_end: called with a copy of each job once it has its final status (from a lane
            thread; exceptions are printed and ignored).
    """

    def __init__(self, on_end: Callable[[Job], None] | None = None,
                 process: str | None = None) -> None:
        self.on_end = on_end
        self.process = process or process_name()
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._jobs: dict[str, Job] = {}
        self._stopped = False  # set by the manager's shutdown: a killed job ends interrupted
        self._followed: dict[str, Job] = {}  # jobs another process owns: read-only here
        self._follower: threading.Thread | None = None
        self._scanner: threading.Thread | None = None

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

    def forget(self, job_id: str) -> bool:
        """Drop an ended job from the book (its folder deleted from History): the job panel
        of every session stops listing it at once, not at the next server start. False when
        the book has no such job or it is still queued or running (kept: it has a worker)."""
        with self._wake:
            job = self._jobs.get(job_id)
            if job is None or job.active:
                return False
            del self._jobs[job_id]
            self._followed.pop(job_id, None)
            self._wake.notify_all()
        return True

    def wait(self, job_id: str, timeout_s: float) -> JobStatus:
        """Block until the job finishes or ``timeout_s`` passes; returns its status."""
        deadline = time.monotonic() + timeout_s
        with self._wake:
            while self._jobs[job_id].active and time.monotonic() < deadline:
                self._wake.wait(timeout=min(POLL_S, max(0.0, deadline - time.monotonic())))
            return self._jobs[job_id].status

    # -- jobs another process owns, shown read-only ------------------------------------------
    def _keep_scanning(self, look: Callable[[], object], every_s: float,
                       name: str) -> threading.Thread | None:
        """Call ``look`` (find jobs of the result store that appeared) every ``every_s`` s in a
        thread until the book stops; an ``OSError`` (the folder unreadable now) is said on
        stderr and the next look tries again. Returns the thread started, None when one runs."""
        with self._lock:
            if self._scanner is not None:
                return None
            self._scanner = threading.Thread(target=self._scan, args=(look, every_s, name),
                                             daemon=True, name=name)
        self._scanner.start()
        return self._scanner

    def _scan(self, look: Callable[[], object], every_s: float, name: str) -> None:
        while True:
            deadline = time.monotonic() + every_s
            with self._wake:  # woken early by other events: wait out the period
                while not self._stopped and (left := deadline - time.monotonic()) > 0:
                    self._wake.wait(left)
                if self._stopped:
                    return
            try:
                look()
            except OSError as exc:  # the results folder is unreadable now: the next look
                print(f"{name}: cannot look through the results folder: {exc}",
                      file=sys.stderr, flush=True)

    def _show_read_only(self, job: Job) -> threading.Thread | None:
        """List ``job`` (its ``watched_by`` set: no Cancel) and follow it every
        :data:`FOLLOW_S` with :meth:`_follow_one` until it leaves ``_followed``. Returns the
        follower thread when this call started it."""
        with self._lock:
            self._jobs[job.job_id] = self._followed[job.job_id] = job
            if self._follower is not None:
                return None
            self._follower = threading.Thread(target=self._follow, daemon=True,
                                              name=f"kprof-follower-{type(self).__name__}")
        self._follower.start()
        return self._follower

    def _follow(self) -> None:
        while True:
            with self._wake:
                self._wake.wait(FOLLOW_S)
                if self._stopped or not self._followed:
                    self._follower = None
                    return
                followed = list(self._followed.values())
            for job in followed:
                self._follow_one(job)

    def _follow_one(self, job: Job) -> None:
        """One look at a job shown read-only (its manifest, its progress); the caller drops it
        from ``_followed`` once it ended. Subclasses that show jobs read-only define it."""
        raise NotImplementedError

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
                    follow_config(job, ev)
                    if ev.get("result_ready"):  # runs and aggregated on disk (issue 40)
                        job.result_ready = str(ev["result_ready"])
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
            # killed before its final write: the tables it was writing are not whole, unless
            # it had said its result (runs, aggregated) ready, which is kept
            ready = result_was_ready(manifest)
            if job.cancel_requested:
                set_aside_unless_ready(job.path, manifest)
                # the worker ended before it recorded the cancel: the manager records it, as
                # a queued job's is, so every view says how and why (session 25: said nothing)
                self._finish(job, JobStatus.CANCELLED,
                             cancel_error(job.path, signal_name(returncode)))
                return
            if self._stopped:  # shutdown() killed it
                set_aside_unless_ready(job.path, manifest)
                self._finish(job, JobStatus.INTERRUPTED,
                             interrupted_error(job.path, ready=ready))
                return
            error = job.error or died_error(job.path, returncode, ready)
            error = {**error, "log_tail": error.get("log_tail") or safe_log_tail(job.path)}
            failure = disk_full_error(job.path, error)
            set_aside_unless_ready(job.path, manifest)
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
                "spec": job.spec.to_json(),
                "created_at": previous.get("created_at") or job.submitted_at,
                "backend": previous.get("backend") or {"name": job.spec.backend},
                "server": owner_entry(self.process)}
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


def died_error(job_dir: Path, returncode: int, ready: bool) -> JobError:
    """The error of a job whose worker ended (``returncode``: its exit code, or minus the
    signal that killed it) without its final manifest; ``ready``: it had said its result
    ready (runs and aggregated written, kept)."""
    how = f"was killed by signal {-returncode}" if returncode < 0 else \
        f"exited with code {returncode}"
    if ready:
        message = (f"The worker {how} after writing the job's runs and aggregated tables, "
                   "before the rest of its bundle.")
    else:
        message = (f"The worker {how} without writing a result (manifest.json)."
                   if returncode != 0 else "The worker exited without writing manifest.json.")
    return {"kind": "worker_died", "message": message,
            "hint": (f"{RESULT_KEPT} " if ready else "") + "Read the log tail below; run "
                    f"`python -m profiling_worker run {job_dir}` in a shell to reproduce."}


def process_name(argv0: str | None = None) -> str:
    """What the process that owns a job is called where a person reads it: ``kernel-sweep``
    for the sweep command (its console script or ``app/sweep_cli.py``), else ``dashboard
    server``. A sweep started by kernel-sweep was said to be watched by "the dashboard
    server"."""
    name = os.path.basename(sys.argv[0] if argv0 is None else argv0)
    return "kernel-sweep" if name in ("kernel-sweep", "sweep_cli.py") else "dashboard server"


def signal_name(returncode: int) -> str:
    """The signal that ended a cancelled worker (returncode -9: ``"SIGKILL"``); ``"SIGTERM"``,
    the cancel's own signal, when it exited by itself after it (returncode >= 0)."""
    try:
        return signal.Signals(-returncode).name if returncode < 0 else "SIGTERM"
    except ValueError:  # no such signal number
        return "SIGTERM"


def cancel_error(job_dir: Path, what: str) -> JobError:
    """The error of a cancelled job whose worker recorded none (never started, or ended before
    it wrote): how the cancel came (``what``: the signal's name, or
    :data:`~profiling_worker.bundle.schema.partial.IN_QUEUE`) with the reason left in
    ``job_dir``, as a worker records it (:func:`~profiling_worker.bundle.schema.partial.
    cancel_how`): ``the job was cancelled (SIGTERM at ...: cancelled by the user ...)``."""
    how = partial.cancel_how(what, job_dir)
    return {"kind": Cancelled.kind, "message": partial.cancelled_message(how), "hint": "",
            "log_tail": "", "how": how}
