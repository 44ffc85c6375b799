"""A warm worker runs several cpu jobs in one process, refuses other backends, and a job
through it writes the same bundle as a cold worker."""

import json
import signal
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from app import settings
from app.services.warm_worker import WarmWorker
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import read_manifest

THREADS_KERNELS = Path(__file__).resolve().parents[2] / "fixtures" / "kernel_files_threads"
SPEC = {"kernels": ["matmul"], "annotations": ["fp32"], "configs": [{"n": 32}, {"n": 64}],
        "runs": 3, "backend": "cpu"}


def _job(root: Path, name: str, spec: dict) -> Path:
    job = root / name
    job.mkdir()
    (job / C.SPEC_FILE).write_text(json.dumps(spec))
    return job


@pytest.fixture()
def warm(tmp_path):
    worker = WarmWorker(sys.executable, "cpu", 0, settings.worker_env(), tmp_path / "warm.log")
    yield worker
    worker.close()


def test_two_jobs_in_one_process_write_full_bundles(warm, tmp_path):
    pids = set()
    for name in ("a", "b"):
        job = _job(tmp_path, name, SPEC)
        t0 = time.monotonic()
        warm.submit(job)
        answer = warm.poll(60)
        assert answer == {"event": "done", "job_dir": str(job.resolve()), "code": 0}
        print(name, "submit to result", round(time.monotonic() - t0, 3), "s")
        manifest = read_manifest(job)
        assert manifest["status"] == "done"
        assert len(pd.read_parquet(job / C.TABLES_DIR / "aggregated.parquet")) == 2
        assert (job / C.LOG_FILE).exists()
        pids.add(warm.proc.pid)
    assert len(pids) == 1 and warm.alive()


def test_each_job_gets_its_torch_threads_and_the_process_gets_its_own_back(tmp_path):
    """A warm worker sets a cpu job's ``cpu_threads`` for its timing loop and restores the
    process's count after it: the next job finds the count the process started with (its ONCE
    collector reads it before the worker sets the job's), and times with its own
    (tests/fixtures/kernel_files_threads)."""
    log = tmp_path / "threads.log"
    env = {**settings.worker_env(), "KPROF_KERNEL_DIRS": str(THREADS_KERNELS),
           "KPROF_THREADS_LOG": str(log)}
    worker = WarmWorker(sys.executable, "cpu", 0, env, tmp_path / "warm.log")
    try:
        found, timed = [], []
        for name, threads in (("three", 3), ("default", None), ("two", 2)):
            job = _job(tmp_path, name, {"kernels": ["threads_seen"], "runs": 2, "warmup": 0,
                                        "backend": "cpu", "collectors": ["threads_before"],
                                        **({"cpu_threads": threads} if threads else {})})
            log.write_text("")
            worker.submit(job)
            assert worker.poll(60)["code"] == 0
            backend = read_manifest(job)["backend"]
            found.append(backend["user_collectors"][0]["value"])
            timed.append((backend["cpu_threads"], log.read_text().split()))
    finally:
        worker.close()
    assert timed == [(3, ["3", "3"]), (1, ["1", "1"]), (2, ["2", "2"])]
    # every job found the count the process started with: the first job's 3 was given back
    assert found == [found[0]] * 3, found


def test_other_backend_is_refused_and_left_untouched(warm, tmp_path):
    job = _job(tmp_path, "gpu-job", {**SPEC, "backend": "cupti",
                                      "metrics": ["gpu__time_duration.sum"]})
    warm.submit(job)
    answer = warm.poll(30)
    assert answer["event"] == "rejected" and "cupti" in answer["reason"]
    assert not (job / C.MANIFEST_FILE).exists() and warm.alive()


def test_failed_job_keeps_the_worker_usable(warm, tmp_path):
    bad = _job(tmp_path, "bad", {**SPEC, "configs": [{"n": -1}]})
    warm.submit(bad)
    assert warm.poll(30)["code"] == 1
    assert read_manifest(bad)["error"]["kind"] == "spec_invalid"
    good = _job(tmp_path, "good", SPEC)
    warm.submit(good)
    assert warm.poll(60)["code"] == 0


def test_job_manager_reuses_one_warm_process_and_cancel_ends_it(tmp_path):
    from app.services.job_manager import JobManager
    from profiling_worker.catalog.builtin import CATALOG
    from profiling_worker.bundle.schema.spec import validate_spec

    manager = JobManager(tmp_path, sys.executable, env=settings.worker_env(), warm=True)
    try:
        pids = set()
        for _ in range(3):
            assert manager.wait(manager.submit(validate_spec(SPEC, CATALOG)), 120) == "done"
            pids.add(manager._warm["cpu"].proc.pid)
        assert len(pids) == 1  # one process served all three jobs
        first = pids.pop()
        long = manager.submit(validate_spec({**SPEC, "configs": [{"n": 256}], "runs": 10000},
                                            CATALOG))
        deadline = time.monotonic() + 60
        while manager.get(long).done < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        manager.cancel(long)
        assert manager.wait(long, 300) == "cancelled", manager.get(long)
        after = manager.submit(validate_spec(SPEC, CATALOG))  # a fresh warm worker takes over
        assert manager.wait(after, 120) == "done", manager.get(after).error
        assert manager._warm["cpu"].proc.pid != first
    finally:
        manager.shutdown()


def test_restart_kills_an_orphaned_warm_worker_and_marks_its_job_interrupted(tmp_path):
    """A server died while its warm worker ran a job: the next server's start-up finds the
    worker by its `serve` command line, kills it (it would hold the GPU) and marks the job
    interrupted, so the late worker cannot write a result over it."""
    import socket

    from app.services.job_manager import JobManager
    from profiling_worker.bundle.schema.manifest import write_manifest

    results = tmp_path / "results"
    results.mkdir()
    orphan = WarmWorker(sys.executable, "cpu", 0, settings.worker_env(), tmp_path / "w.log")
    job = _job(results, "orphaned-job", {**SPEC, "configs": [{"n": 256}], "runs": 10000})
    write_manifest(job, {"job_id": job.name, "status": "running", "spec": SPEC,
                         "server": {"pid": 2**22 + 12345, "host": socket.gethostname()},
                         "worker": {"pid": orphan.proc.pid, "host": socket.gethostname(),
                                    "warm": True}})
    orphan.submit(job)
    deadline = time.monotonic() + 300  # wait for the event (profiling started), not a time
    while "progress" not in ((job / "events.jsonl").read_text()
                             if (job / "events.jsonl").is_file() else ""):
        assert time.monotonic() < deadline, "the warm worker never started the job"
        time.sleep(0.1)
    manager = JobManager(results, sys.executable, env=settings.worker_env())
    try:
        assert manager.recovered == ["orphaned-job"]
        assert orphan.proc.wait(timeout=10) != 0  # killed
        assert read_manifest(job)["status"] == "interrupted"
    finally:
        manager.shutdown()
        orphan.close()


def test_warm_worker_holds_the_lane_lock_like_a_cold_one(tmp_path):
    """One lock rule for both: the worker process inherits the lane's lock descriptor, so a
    job keeps the GPU locked when its server's own descriptor is gone (server killed), and a
    second server (its own descriptor) cannot start a job on that lane meanwhile."""
    import fcntl
    import os

    from app.services.job_manager import JobManager
    from profiling_worker.catalog.builtin import CATALOG
    from profiling_worker.bundle.schema.spec import validate_spec

    def lane_locked_by_another() -> bool:
        with open(tmp_path / ".lock-cpu", "w") as other:  # a second server's description
            try:
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(other, fcntl.LOCK_UN)
            return False

    manager = JobManager(tmp_path, sys.executable, env=settings.worker_env(), warm=True)
    try:
        assert manager.wait(manager.submit(validate_spec(SPEC, CATALOG)), 120) == "done"
        # idle between jobs the lane is free: the dispatcher unlocks it just after it marks the
        # job done, so allow it that moment on a loaded machine
        free_by = time.monotonic() + 10
        while lane_locked_by_another() and time.monotonic() < free_by:
            time.sleep(0.05)
        assert not lane_locked_by_another()
        long = manager.submit(validate_spec({**SPEC, "configs": [{"n": 256}], "runs": 10000},
                                            CATALOG))
        deadline = time.monotonic() + 60
        while manager.get(long).done < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        worker = manager._warm["cpu"].proc.pid
        lock = (tmp_path / ".lock-cpu").resolve()
        held = [fd for fd in os.listdir(f"/proc/{worker}/fd")
                if os.path.realpath(f"/proc/{worker}/fd/{fd}") == str(lock)]
        assert held, "the warm worker holds the lane's lock descriptor"
        # the server's descriptor goes away as if the server were killed: still locked
        manager._locks.close()
        assert lane_locked_by_another()
        manager._warm["cpu"].kill(signal.SIGKILL)  # the orphan ends: the lane is free again
        manager._warm["cpu"].proc.wait()
        assert not lane_locked_by_another()
    finally:
        manager.shutdown()
