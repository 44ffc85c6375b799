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
import json
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import IO
from pathlib import Path

from profiling_worker.bundle.errors import JobError
from profiling_worker.bundle.schema import backends as B, columns, partial
from profiling_worker.bundle.schema.events import WRITING_STAGE
from profiling_worker.bundle.schema.manifest import (JobStatus, ManifestError, now_iso,
                                                     read_manifest, write_manifest)
from profiling_worker.bundle.schema.spec import JobSpec

from app.services import other_jobs, worker_client
from app.services.job_book import POLL_S, SCAN_S, JobBook, cancel_error
from app.services.job_model import Job, LaneLocks, claim_job_dir, lane_of, new_job_id
from app.services.job_recovery import (internal_error, interrupt_orphaned, interrupted_error,
                                       mark_interrupted, reserve_space, start_failed_error)
from app.services.result_store import job_path
from app.services.warm_worker import WarmWorker, WarmWorkerError


#: How long a cancelled worker writing a bundle to keep may write before it is SIGKILLed:
#: 23 times the 26 s measured for a 100,000-run cpu job (300,000 rows) on a busy 2-core host.
WRITE_GRACE_S = 600.0
#: Why a running job's worker is cancelled when its server stops (the job's cancel note).
STOPPED_REASON = partial.SERVER_STOPPED


class JobManager(JobBook):
    """Queue, run, watch and cancel worker subprocesses. Thread-safe; no Streamlit.

    Args:
        results_dir: where job directories are created (made if missing).
        worker_python: interpreter for ``-m profiling_worker``.
        env: environment of the worker subprocesses.
        kill_grace_s: seconds between SIGTERM and SIGKILL when cancelling.
        write_grace_s: how long a cancelled worker that is writing a bundle to keep (its
            progress stage :data:`~profiling_worker.bundle.schema.events.WRITING_STAGE`: it has
            stopped measuring) may write on before it is SIGKILLed (:data:`WRITE_GRACE_S`).
        warm: keep one warm worker per lane (``profiling_worker serve``) for the backends that
            allow it (CUPTI, cpu; Nsight Compute only in attach mode), so a repeated job pays
            only its profiling. A backend or GPU change, a crash or a cancel starts a fresh one.
        on_end: called with a copy of each job once it has its final status (from a lane
            thread; exceptions are printed and ignored).
    """

    def __init__(self, results_dir: Path, worker_python: str, env: dict[str, str] | None = None,
                 kill_grace_s: float = 5.0, warm: bool = False,
                 on_end: Callable[[Job], None] | None = None, process: str | None = None,
                 write_grace_s: float | None = None) -> None:
        super().__init__(on_end, process)
        self.results_dir = Path(results_dir).resolve()
        self.warm = warm
        # lane -> its warm worker (touched by that lane only)
        self._warm: dict[str, WarmWorker] = {}
        self.results_dir.mkdir(parents=True, exist_ok=True)
        self._locks = LaneLocks(self.results_dir)
        self.worker_python = worker_python
        self.env = env
        self.kill_grace_s = kill_grace_s
        self.write_grace_s = WRITE_GRACE_S if write_grace_s is None else write_grace_s
        self._procs: dict[str, subprocess.Popen[bytes]] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._warm_refused: set[tuple[str, int]] = set()
        self._shutting_down = threading.Lock()
        self.recovered = mark_interrupted(self.results_dir)
        self._since = now_iso()  # other processes' jobs that ended from now on are listed
        self._settled: set[str] = set()  # folders not to look at again (other_jobs.find)
        self._tails: dict[str, worker_client.EventTail] = {}  # other processes' running jobs
        atexit.register(self.shutdown)

    # -- public API ---------------------------------------------------------------------------
    def submit(self, spec: JobSpec) -> str:
        """Queue a validated spec; returns the new job id at once (never blocks on a GPU)."""
        job_id, path = self._claim_job_dir(spec)
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

    def _claim_job_dir(self, spec: JobSpec) -> tuple[str, Path]:
        """A new job id and its folder (:func:`~app.services.job_model.claim_job_dir`)."""
        # new_job_id looked up at each call: tests replace it in this module
        return claim_job_dir(self.results_dir, spec, lambda s: new_job_id(s), job_path)

    def cancel(self, job_id: str, reason: str = partial.USER_CANCEL) -> None:
        """Cancel a queued job at once; SIGTERM a running one's process group (SIGKILL later),
        its worker told ``reason`` first (:meth:`_stop`), as every cancel of the dashboard
        tells it (:data:`~profiling_worker.bundle.schema.partial.USER_CANCEL`, the job
        panel's; the agent door's and a stopping server's their own). A job another process
        owns (shown read-only, :meth:`keep_following`) is not cancelled from here."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None or not job.active or job.watched_by:
                return
            job.cancel_requested = True
            proc = self._procs.get(job_id)
            if job.status == JobStatus.QUEUED:
                self._finish(job, JobStatus.CANCELLED, queued_cancel_error(job, reason))
        if job.status == JobStatus.CANCELLED:
            self._ended(job)
        elif proc is not None:
            self._stop(proc, job, reason)
        else:  # its process not started yet: the reason waits in its folder (_run_cold)
            partial.write_cancel_reason(job.path, reason)

    def _stop(self, proc: subprocess.Popen[bytes], job: Job, reason: str | None) -> None:
        """:meth:`_signal_cancel`; SIGKILL the group ``kill_grace_s`` later, unless it is
        writing the bundle of a job that has stopped measuring (:meth:`_kill_unless_writing`).
        ``reason`` None: left in the job's folder already."""
        self._signal_cancel(proc, job, reason)
        self._kill_later(proc, job, time.monotonic())

    @staticmethod
    def _signal_cancel(proc: subprocess.Popen[bytes], job: Job, reason: str | None) -> None:
        """SIGTERM the worker's process group, ``reason`` left in the job's folder just before
        (:func:`~profiling_worker.bundle.schema.partial.write_cancel_reason`; None: left
        already): the one way every cancel of this manager reaches a worker, so the job records
        why it was cancelled the same way whoever cancelled it (the panel's Cancel said only
        the signal, session 23)."""
        if reason is not None:
            partial.write_cancel_reason(job.path, reason)
        worker_client.signal_group(proc, signal.SIGTERM)

    def _kill_later(self, proc: subprocess.Popen[bytes], job: Job, since: float) -> None:
        """Look again ``kill_grace_s`` from now (:meth:`_kill_unless_writing`); ``since``: when
        the SIGTERM was sent (monotonic s)."""
        timer = threading.Timer(self.kill_grace_s, self._kill_unless_writing, (proc, job, since))
        timer.daemon = True
        timer.start()

    def _kill_unless_writing(self, proc: subprocess.Popen[bytes], job: Job, since: float) -> None:
        """SIGKILL the process group of a cancelled worker still alive once its time is up
        (:meth:`_kill_time`); until then it is looked at again every ``kill_grace_s``. A worker
        SIGKILLed while it wrote has its tables set aside (``partial/``)."""
        if proc.poll() is not None:
            return
        with self._lock:
            kill_at = self._kill_time(job, since)
        if time.monotonic() < kill_at:
            self._kill_later(proc, job, since)
            return
        worker_client.signal_group(proc, signal.SIGKILL)

    def _kill_time(self, job: Job, since: float) -> float:
        """When a worker SIGTERMed at ``since`` (monotonic s) is SIGKILLed if it still runs
        (monotonic s): ``kill_grace_s`` after the SIGTERM while it measures, ``write_grace_s``
        after it while it writes the bundle of a job that has stopped measuring (every run
        measured, or the configs a cancel kept): the worker then only notes the cancel and the
        bundle is written whole, which took 26 s for a 100,000-run cpu job on a busy 2-core
        host. Read again at each look: the stage comes from the worker's events. Caller holds
        ``self._lock``."""
        writing = job.stage == WRITING_STAGE and job.active
        return since + (self.write_grace_s if writing else self.kill_grace_s)

    def shutdown(self, keep_measured: bool = True) -> list[str]:
        """Stop accepting work and stop the running workers (server exit, cache release).

        Queued jobs end ``interrupted``. A running job's worker is given the cancel path
        (``keep_measured``, :meth:`_stop_running`): it ends as its worker writes it, a partial
        ``cancelled`` job with the whole configs it measured (none when no config had
        finished), or ``done`` when it had measured every run; a worker that does not end in
        time is SIGKILLed and its job ends ``interrupted``, its tables set aside. Without
        ``keep_measured`` (the agent door: its client kills it 2 s after closing its stdin)
        the workers are SIGKILLed at once and their jobs end ``interrupted``. Each ends on
        disk before this returns.

        Worst-case wait: ``write_grace_s + kill_grace_s`` (605 s by default) when a worker's
        write hangs; ``2 * kill_grace_s`` (10 s) when no worker is writing a bundle; the
        workers are waited for side by side, and each lane thread is then given
        ``kill_grace_s`` to write its job's manifest. Returns the ids ended ``interrupted``.
        A second call waits for the first."""
        with self._shutting_down:
            with self._wake:
                self._stopped = True
                running = [(job, proc) for job_id, proc in self._procs.items()
                           if (job := self._jobs[job_id]).active]
                active = [job for job in self._jobs.values() if job.active and not job.watched_by]
                for job in active:
                    if job.status == JobStatus.QUEUED:
                        self._finish(job, JobStatus.INTERRUPTED,
                                     interrupted_error(job.path, ran=False))
                self._wake.notify_all()
            if keep_measured:
                self._stop_running(running)
            for _job, proc in running:
                worker_client.signal_group(proc, signal.SIGKILL)
            for worker in list(self._warm.values()):
                worker.kill(signal.SIGKILL)
            deadline = time.monotonic() + self.kill_grace_s
            for thread in list(self._threads.values()):
                if thread is not threading.current_thread():
                    thread.join(max(0.0, deadline - time.monotonic()))
            self._locks.close()  # a dispatch still inside held() releases nothing twice
            return [job.job_id for job in active if job.status == JobStatus.INTERRUPTED]

    def _stop_running(self, running: list[tuple[Job, subprocess.Popen[bytes]]]) -> None:
        """SIGTERM each running worker's process group, as Cancel does (the worker keeps the
        whole configs it measured, or writes a bundle whose runs are all measured whole), and
        wait until each job has ended or its worker's time is up (:meth:`_kill_time`); the
        caller SIGKILLs what is left. Said on stderr: a server stopped by Ctrl-C waits here."""
        if not running:
            return
        print(f"kprof job manager: stopping {', '.join(j.job_id for j, _ in running)}; each "
              f"worker keeps the configs it measured (waiting up to {self.kill_grace_s:g} s, "
              f"{self.write_grace_s:g} s while it writes them)", file=sys.stderr, flush=True)
        since = time.monotonic()
        for job, proc in running:  # the job says why it was cancelled (a fresh user of
            # session 23 read "cancelled (SIGTERM at ...)" with no word of the server)
            self._signal_cancel(proc, job, STOPPED_REASON)
        with self._wake:  # the lane threads go on reading the events and settle each job
            for job, _proc in running:
                while job.active and (left := self._kill_time(job, since) - time.monotonic()) > 0:
                    self._wake.wait(min(POLL_S, left))

    # -- jobs other processes own --------------------------------------------------------------
    def keep_following(self, every_s: float = SCAN_S) -> None:
        """List read-only the plain jobs that other processes (another dashboard server, the
        agent door, a worker run from a shell) queue in this results folder: looked for every
        ``every_s`` s (:meth:`follow_others`), then followed every
        :data:`~app.services.job_book.FOLLOW_S` until they end. Idempotent."""
        self._keep_scanning(self.follow_others, every_s, "kprof-job-scanner")

    def follow_others(self) -> list[str]:
        """One look for jobs of other processes (:func:`app.services.other_jobs.find`); the
        ids of those now listed. Never runs, cancels or rewrites them; one whose owner is gone
        ends ``interrupted`` (as at a restart)."""
        with self._lock:
            known = set(self._jobs) | self._settled
        jobs, settled = other_jobs.find(self.results_dir, known, self._since)
        with self._lock:
            self._settled |= settled
        for job in jobs:
            if not job.active:  # ended since this server started: its manifest says all
                with self._lock:
                    self._jobs[job.job_id] = job
                continue
            tail = worker_client.EventTail(job.path / columns.EVENTS_FILE)
            self._apply(job, tail.read_new())
            with self._lock:
                self._tails[job.job_id] = tail
            self._show_read_only(job)
        return [job.job_id for job in jobs]

    def _follow_one(self, job: Job) -> None:
        """One look at a job another process owns: its manifest's status and error, its
        events' progress and warnings; ended ``interrupted`` here when its owner is gone."""
        if not job.path.is_dir():  # deleted meanwhile (History): nothing left to show
            with self._lock:
                for book in (self._jobs, self._followed, self._tails):
                    book.pop(job.job_id, None)
            return
        try:
            manifest = read_manifest(job.path)
            if interrupt_orphaned(job.path, manifest):
                manifest = read_manifest(job.path)
        except (ManifestError, OSError):
            return  # being rewritten: the next look
        with self._lock:
            tail = self._tails.get(job.job_id)
        if tail is not None:
            self._apply(job, tail.read_new())
        with self._lock:
            other_jobs.take(job, manifest)
            if job.status.finished:
                self._followed.pop(job.job_id, None)
                self._tails.pop(job.job_id, None)
            self._wake.notify_all()

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
            if job.lane == lane and job.status == JobStatus.QUEUED and not job.watched_by:
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
        with self._lock:  # registered under the lock shutdown reads _procs under
            stopped = self._stopped  # the server stopped while the warm worker was starting
            if stopped:
                self._warm.pop(job.lane, None)
                self._finish_unstarted(job)
            elif job.cancel_requested:  # cancelled while the warm worker was starting
                self._finish(job, JobStatus.CANCELLED,
                             cancel_error(job.path, partial.STARTING))
                return True
            else:
                self._procs[job.job_id] = worker.proc
        if stopped:  # maybe started after shutdown killed the warm workers
            worker.kill(signal.SIGKILL)
            worker.proc.wait()
            return True
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

    def _finish_unstarted(self, job: Job) -> None:
        """End ``interrupted`` a job taken from the queue whose worker was not started because
        the server stopped meanwhile (it never ran). Caller holds ``self._lock``."""
        self._finish(job, JobStatus.INTERRUPTED, interrupted_error(job.path, ran=False))

    def _run_cold(self, job: Job, lock_fd: int | None = None) -> None:
        """Start the job's worker and follow it to its end. The worker is started and
        registered (``_procs``) under ``self._lock``, the lock :meth:`shutdown` reads
        ``_procs`` and sets ``_stopped`` under: a shutdown either sees the worker and stops
        it, or comes first and no worker starts (the job ends ``interrupted``)."""
        try:
            console = open(job.path / worker_client.CONSOLE_FILE, "wb")
        except OSError as exc:
            with self._lock:
                self._finish(job, JobStatus.FAILED, start_failed_error(self.worker_python, exc))
            return
        with console, self._lock:
            if self._stopped:
                self._finish_unstarted(job)
                return
            try:
                proc = self._start_worker(job, console, lock_fd)
            except OSError as exc:
                self._finish(job, JobStatus.FAILED, start_failed_error(self.worker_python, exc))
                return
            self._procs[job.job_id] = proc
            cancelled = job.cancel_requested  # cancelled before the process existed
        self._follow_cold(job, proc, cancelled)

    def _start_worker(self, job: Job, console: IO[bytes], lock_fd: int | None
                      ) -> subprocess.Popen[bytes]:
        """``profiling_worker run`` on the job's folder in a session of its own, its output to
        ``console``, the lane's lock ``lock_fd`` passed on.

        Raises:
            OSError: the worker's Python cannot be started."""
        return subprocess.Popen(worker_client.run_argv(self.worker_python, job.path),
                                stdout=console, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True,
                                cwd=job.path, env=self.env,
                                pass_fds=() if lock_fd is None else (lock_fd,))

    def _follow_cold(self, job: Job, proc: subprocess.Popen[bytes], cancelled: bool) -> None:
        """Apply the events of the job's running worker ``proc`` until it ends, then settle
        the job; ``cancelled``: cancelled before the process existed (stopped now)."""
        if cancelled:  # its cancel's reason is in its folder already (cancel)
            self._stop(proc, job, None)
        self._write_state(job, worker={"pid": proc.pid, "host": socket.gethostname()})
        tail = worker_client.EventTail(job.path / columns.EVENTS_FILE)
        while proc.poll() is None:
            self._apply(job, tail.read_new())
            time.sleep(POLL_S)
        self._apply(job, tail.read_new())
        with self._lock:
            self._procs.pop(job.job_id, None)
            job.returncode = proc.returncode
        self._settle(job, proc.returncode)


def queued_cancel_error(job: Job, reason: str) -> JobError:
    """The error a job cancelled while queued records: ``reason`` left in its folder and read
    back as a running job's worker reads it (:func:`~profiling_worker.bundle.schema.partial.
    cancel_how`), so both record who cancelled them alike; there is no worker, so no signal
    and no log: ``the job was cancelled (while queued at ...: cancelled by the user ...)``."""
    partial.write_cancel_reason(job.path, reason)
    return cancel_error(job.path, partial.IN_QUEUE)
