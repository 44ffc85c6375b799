"""A dashboard server that stops (Ctrl-C: Streamlit exits, ``JobManager.shutdown`` runs) while a
cpu job measures: the worker is given the cancel path (SIGTERM, as the panel's Cancel sends
it), keeps the whole configs it measured, and its job ends a partial ``cancelled`` job the
loader reads, not ``interrupted`` with nothing kept (session 22's fresh user lost 4,015 of
6,000 runs so). A queued job still ends ``interrupted``, and so does a job taken from the queue whose
worker had not started (the old race: it ran on past the server's stop). Real worker
subprocesses; the tests wait for the worker's progress events or the manager's own events,
never a fixed time."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from app import settings
from app.services.job_manager import STOPPED_REASON, JobManager
from app.services.job_model import Job
from app.services.job_recovery import interrupted_error
from app.services.warm_worker import WarmWorker
from profiling_worker.bundle.loader import load_bundle
from profiling_worker.bundle.schema import columns as C, partial
from profiling_worker.bundle.schema.manifest import read_manifest
from profiling_worker.bundle.schema.spec import validate_spec
from profiling_worker.catalog.builtin import CATALOG

RUNS = 3000
#: Ten configs of RUNS runs each: seconds per config on a busy 2-core host, so the job is still
#: measuring when the test stops the server two configs in.
LONG = {"kernels": ["matmul"], "annotations": ["fp32"],
        "configs": [{"n": n} for n in range(8, 88, 8)], "runs": RUNS, "backend": "cpu",
        "warmup": 1}
TINY = {"kernels": ["matmul"], "annotations": ["fp32"], "configs": [{"n": 8}], "runs": 1,
        "backend": "cpu", "warmup": 0}
BOUND_S = 120.0  # generous: CI runs on 2 busy cores


def _until(manager: JobManager, job_id: str, reached: Callable[[Job], bool], what: str) -> None:
    """Wait until ``reached(job)`` (read every 50 ms), failing with ``what`` if the job ends
    first or :data:`BOUND_S` passes."""
    deadline = time.monotonic() + BOUND_S
    while not reached(job := manager.get(job_id)):
        assert job.active, f"{job_id} ended {job.status} before {what}: {job.error}"
        assert time.monotonic() < deadline, f"not within {BOUND_S:g} s: {what}"
        time.sleep(0.05)


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])  # the server: warm
def test_shutdown_mid_measurement_keeps_the_configs_measured(tmp_path: Path, capsys,
                                                             warm: bool) -> None:
    # kill_grace_s: time for the cancelled worker to reach its writing stage (the server's is
    # 5 s; more here for CI on 2 busy cores)
    manager = JobManager(tmp_path / "results", sys.executable, env=settings.worker_env(),
                         warm=warm, kill_grace_s=30.0)
    running = manager.submit(validate_spec(LONG, CATALOG))
    queued = manager.submit(validate_spec(TINY, CATALOG))  # same lane: waits behind it
    _until(manager, running, lambda j: (j.config or 0) >= 2, "two configs were measured")
    assert manager.shutdown() == [queued]  # the running one is not interrupted
    assert running in capsys.readouterr().err  # the server says which job it waits for
    job = manager.get(running)
    manifest = read_manifest(job.path)  # on disk when shutdown returns
    assert job.status == manifest["status"] == "cancelled", job.error
    assert manifest["error"]["kind"] == "cancelled"
    record = manifest[partial.CONFIGS_KEY]
    measured = record["measured"]
    assert record["total"] == len(LONG["configs"]) and record["cancelled"].startswith("SIGTERM")
    assert record["cancelled"].endswith(STOPPED_REASON)  # why, not only the signal
    assert measured == list(range(len(measured))) and 2 <= len(measured) < record["total"]
    runs = load_bundle(job.path).table(C.TABLE_RUNS)  # the loader reads what was kept
    assert runs.groupby(C.CONFIG).size().to_dict() == {i: RUNS for i in measured}
    assert read_manifest(manager.get(queued).path)["status"] == "interrupted"
    assert manager.get(queued).status == "interrupted"
    assert any((tmp_path / "results").glob(".warm-*.log")) == warm  # the job ran warm or cold
    if not warm:  # (a warm worker's job has no return code of its own)
        assert job.returncode is not None and job.returncode >= 0  # ended itself, not killed


class _HeldAtStart(JobManager):
    """A manager whose lane thread waits, once it has taken a job from the queue (the job reads
    ``running``) and before it starts the job's worker, until the test releases it: the window
    in which a shutdown used to find no worker to stop."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.taken, self.release = threading.Event(), threading.Event()
        self.warm_workers: list[WarmWorker] = []  # each started, to check that none is left

    def _run(self, job: Job, lock_fd: int | None = None) -> None:
        self.taken.set()
        assert self.release.wait(BOUND_S), "the test never released the lane"
        super()._run(job, lock_fd)

    def _warm_worker(self, job: Job, lock_fd: int | None) -> WarmWorker | None:
        worker = super()._warm_worker(job, lock_fd)
        self.warm_workers += [worker] if worker else []
        return worker


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_shutdown_between_running_and_the_workers_start_leaves_no_worker(
        tmp_path: Path, warm: bool) -> None:
    """A shutdown that comes after a lane took a job and before its worker was registered:
    before, shutdown found no worker to signal, the worker started anyway and ran on past the
    server's stop (shutdown returned after kill_grace_s with the job still running). Now the
    worker is started and registered under the lock shutdown reads it under: the lane sees the
    stop and starts no worker (a warm worker started meanwhile is killed), and the job ends
    ``interrupted``, never run."""
    manager = _HeldAtStart(tmp_path / "results", sys.executable, env=settings.worker_env(),
                           warm=warm, kill_grace_s=30.0)
    job_id = manager.submit(validate_spec(LONG, CATALOG))
    ended: list[str] = []
    stopping = threading.Thread(target=lambda: ended.extend(manager.shutdown()))
    try:
        assert manager.taken.wait(BOUND_S), "the lane never took the job"
        assert manager.get(job_id).status == "running"
        stopping.start()
        with manager._wake:  # shutdown has read the running workers once it set _stopped
            assert manager._wake.wait_for(lambda: manager._stopped, BOUND_S)
        manager.release.set()
        stopping.join(BOUND_S)
        assert not stopping.is_alive() and ended == [job_id], manager.get(job_id)
    finally:
        manager.release.set()
        for proc in list(manager._procs.values()):  # what a failure left running
            os.killpg(proc.pid, signal.SIGKILL)
    job = manager.get(job_id)
    assert job.status == read_manifest(job.path)["status"] == "interrupted"
    assert job.error == interrupted_error(job.path, ran=False)
    assert not (job.path / C.EVENTS_FILE).exists()  # no worker ran it
    assert len(manager.warm_workers) == warm  # the warm one started after the stop
    assert all(w.proc.poll() is not None for w in manager.warm_workers)
