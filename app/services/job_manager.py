"""The process-wide job queue: one worker subprocess per GPU at a time, cancel, crash handling.

One :class:`JobManager` per server process (``ui/cached.py`` returns it from
``st.cache_resource``). It never imports Streamlit and never touches CUDA: every job runs as
``<worker_python> -u -m profiling_worker run JOB_DIR`` in its own process group. Progress is read
by tailing ``JOB_DIR/events.jsonl``. The worker writes ``manifest.json`` last; the manager writes
it only before the worker starts (queued, running) and when the worker could not (crash, missing
interpreter, cancel before start, server restart), so a finished result is never overwritten.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from profiling_worker.errors import JobError
from profiling_worker.schema import backends as B, columns
from profiling_worker.schema.manifest import (JobStatus, ManifestError, now_iso, read_manifest,
                                              update_manifest, write_manifest)
from profiling_worker.schema.spec import JobSpec

from app.services import worker_client
from app.services.job_model import Job, LaneLocks, lane_of, new_job_id
from app.services.job_recovery import (disk_full_error, internal_error, interrupted_error,
                                       mark_interrupted, release_space, reserve_space,
                                       safe_log_tail, set_aside_partial, start_failed_error)
from app.services.result_store import job_path
from app.services.warm_worker import WarmWorker, WarmWorkerError

POLL_S = 0.2  # how often a running job's events file and exit status are read


_FINISHED = {s.value for s in JobStatus if s.finished}


class JobManager:
    """Queue, run, watch and cancel worker subprocesses. Thread-safe; no Streamlit.

    Args:
        results_dir: where job directories are created (made if missing).
        worker_python: interpreter for ``-m profiling_worker``.
        env: environment of the worker subprocesses.
        kill_grace_s: seconds between SIGTERM and SIGKILL when cancelling.
        warm: keep one warm worker per lane (``profiling_worker serve``) for the backends that
            allow it (CUPTI, cpu; Nsight Compute only in attach mode), so a repeated job pays
            only its profiling. A backend or GPU change, a crash or a cancel starts a fresh one.
        on_end: called with a copy of each job once it has its final status (from a lane
            thread; exceptions are printed and ignored).
    """

    def __init__(self, results_dir: Path, worker_python: str, env: dict[str, str] | None = None,
                 kill_grace_s: float = 5.0, warm: bool = False,
                 on_end: Callable[[Job], None] | None = None) -> None:
        self.results_dir = Path(results_dir).resolve()
        self.on_end = on_end
        self.warm = warm
        self._warm: dict[str, WarmWorker] = {}  # lane -> its warm worker (touched by that lane only)
        self.results_dir.mkdir(parents=True, exist_ok=True)
        self._locks = LaneLocks(self.results_dir)
        self.worker_python = worker_python
        self.env = env
        self.kill_grace_s = kill_grace_s
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._jobs: dict[str, Job] = {}
        self._procs: dict[str, subprocess.Popen[bytes]] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._stopped = False
        self._warm_refused: set[tuple[str, int]] = set()
        self.recovered = mark_interrupted(self.results_dir)
        atexit.register(self.shutdown)

    # -- public API ---------------------------------------------------------------------------
    def submit(self, spec: JobSpec) -> str:
        """Queue a validated spec; returns the new job id at once (never blocks on a GPU)."""
        job_id = new_job_id(spec)
        path = job_path(self.results_dir, job_id)
        path.mkdir()
        job = Job(job_id=job_id, path=path, spec=spec, lane=lane_of(spec))
        try:
            # unsorted: a config's keys follow the kernel's parameters (the worker checks)
            (path / columns.SPEC_FILE).write_text(json.dumps(spec.to_json(), indent=2),
                                                  encoding="utf-8")
            write_manifest(path, self._state(job, {}))
            reserve_space(path)
        except OSError:  # disk full: leave no half-made job folder behind, tell the caller
            shutil.rmtree(path, ignore_errors=True)
            raise
        with self._wake:
            self._jobs[job_id] = job
            self._ensure_lane(job.lane)
            self._wake.notify_all()
        return job_id

    def cancel(self, job_id: str) -> None:
        """Cancel a queued job at once; SIGTERM a running one's process group (SIGKILL later)."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None or not job.active:
                return
            job.cancel_requested = True
            proc = self._procs.get(job_id)
            if job.status == JobStatus.QUEUED:
                self._finish(job, JobStatus.CANCELLED, None)
        if job.status == JobStatus.CANCELLED:
            self._ended(job)
        elif proc is not None:
            self._stop(proc)

    def _stop(self, proc: subprocess.Popen[bytes]) -> None:
        """SIGTERM the worker's process group; SIGKILL it ``kill_grace_s`` later."""
        worker_client.signal_group(proc, signal.SIGTERM)
        timer = threading.Timer(self.kill_grace_s, worker_client.signal_group,
                                (proc, signal.SIGKILL))
        timer.daemon = True
        timer.start()

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

    def shutdown(self) -> None:
        """Stop accepting work and kill running workers (server exit, cache release); their
        jobs and the queued ones end ``interrupted``."""
        with self._wake:
            self._stopped = True
            procs = list(self._procs.values())
            for job in self._jobs.values():
                if job.status == JobStatus.QUEUED:
                    self._finish(job, JobStatus.INTERRUPTED, interrupted_error(job.path))
            self._wake.notify_all()
        for proc in procs:
            worker_client.signal_group(proc, signal.SIGKILL)
        for worker in list(self._warm.values()):
            worker.kill(signal.SIGKILL)

    # -- dispatch -----------------------------------------------------------------------------
    def _ensure_lane(self, lane: str) -> None:
        thread = self._threads.get(lane)
        if thread is None or not thread.is_alive():
            thread = threading.Thread(target=self._dispatch, args=(lane,), daemon=True,
                                      name=f"kprof-{lane}")
            self._threads[lane] = thread
            thread.start()

    def _next(self, lane: str) -> Job | None:
        for job in self._jobs.values():
            if job.lane == lane and job.status == JobStatus.QUEUED:
                return job
        return None

    def _dispatch(self, lane: str) -> None:
        while True:
            with self._wake:
                while not self._stopped and (job := self._next(lane)) is None:
                    self._wake.wait()
                if self._stopped:
                    return
            assert job is not None  # the wait ends only when stopped or with a queued job
            try:
                with self._locks.held(lane) as lock_fd:
                    with self._lock:
                        if job.status != JobStatus.QUEUED:  # cancelled while waiting
                            continue
                        job.status = JobStatus.RUNNING
                    self._write_state(job, started_at=now_iso())
                    self._run(job, lock_fd)
            except Exception as exc:  # never let a lane die: the next queued job must run
                traceback.print_exc()
                with self._lock:
                    if job.active:
                        self._finish(job, JobStatus.FAILED, internal_error(job.path, exc))
            self._ended(job)

    def _ended(self, job: Job) -> None:
        """Tell ``on_end`` (the history index) that a job reached its final status."""
        try:
            if self.on_end is not None:
                self.on_end(dataclasses.replace(job))
        except Exception:  # the index is a cache: a failure must not stop the queue
            traceback.print_exc()

    def _run(self, job: Job, lock_fd: int | None = None) -> None:
        # ncu: a warm worker refuses nsight-python launch mode, then the job runs cold
        if (self.warm and job.spec.backend in B.WARM_NAMES
                and self._run_warm(job, lock_fd)):
            return
        self._run_cold(job, lock_fd)

    def _warm_worker(self, job: Job, lock_fd: int | None) -> WarmWorker | None:
        """This lane's warm worker for the job's backend and GPU (started if needed), or None
        when one cannot run here (the job then runs cold)."""
        backend, gpu = job.spec.backend, job.spec.gpu
        worker = self._warm.get(job.lane)
        if worker and worker.alive() and (worker.backend, worker.gpu) == (backend, gpu):
            return worker
        if worker:
            worker.close()
        self._warm.pop(job.lane, None)
        if (backend, gpu) in self._warm_refused:
            return None
        try:
            worker = WarmWorker(self.worker_python, backend, gpu, self.env,
                                self.results_dir / f".warm-{job.lane}.log", lock_fd=lock_fd)
        except (OSError, WarmWorkerError):
            self._warm_refused.add((backend, gpu))
            return None
        self._warm[job.lane] = worker
        return worker

    def _run_warm(self, job: Job, lock_fd: int | None = None) -> bool:
        """Run the job on the lane's warm worker; False when it must run cold instead."""
        worker = self._warm_worker(job, lock_fd)
        if worker is None:
            return False
        with self._lock:
            if job.cancel_requested:  # cancelled while the warm worker was starting
                self._finish(job, JobStatus.CANCELLED, None)
                return True
            self._procs[job.job_id] = worker.proc
        self._write_state(job, worker={"pid": worker.proc.pid, "host": socket.gethostname(),
                                       "warm": True})
        tail = worker_client.EventTail(job.path / columns.EVENTS_FILE)
        worker.submit(job.path)
        answer, code = None, 0
        try:
            while answer is None:
                answer = worker.poll(POLL_S)
                self._apply(job, tail.read_new())
        except WarmWorkerError:  # died: killed by a cancel, or crashed
            code = worker.proc.wait()
            self._warm.pop(job.lane, None)
        self._apply(job, tail.read_new())
        with self._lock:
            self._procs.pop(job.job_id, None)
        if answer is not None and answer.get("event") == "rejected":
            return False
        if job.cancel_requested:  # serve exits after a cancelled job: never hand it another
            self._warm.pop(job.lane, None)
            worker.close()
        self._settle(job, int(answer.get("code", 1)) if answer else code)
        return True

    def _run_cold(self, job: Job, lock_fd: int | None = None) -> None:
        try:
            console = open(job.path / worker_client.CONSOLE_FILE, "wb")
            proc = subprocess.Popen(worker_client.run_argv(self.worker_python, job.path),
                                    stdout=console, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True,
                                    cwd=job.path, env=self.env,
                                    pass_fds=() if lock_fd is None else (lock_fd,))
        except OSError as exc:
            with contextlib.suppress(UnboundLocalError):
                console.close()
            with self._lock:
                self._finish(job, JobStatus.FAILED, start_failed_error(self.worker_python, exc))
            return
        with self._lock:
            self._procs[job.job_id] = proc
            cancelled = job.cancel_requested  # cancelled before the process existed
        if cancelled:
            self._stop(proc)
        self._write_state(job, worker={"pid": proc.pid, "host": socket.gethostname()})
        tail = worker_client.EventTail(job.path / columns.EVENTS_FILE)
        while proc.poll() is None:
            self._apply(job, tail.read_new())
            time.sleep(POLL_S)
        console.close()
        self._apply(job, tail.read_new())
        with self._lock:
            self._procs.pop(job.job_id, None)
            job.returncode = proc.returncode
        self._settle(job, proc.returncode)

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
                "server": {"pid": os.getpid(), "host": socket.gethostname()}}
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
