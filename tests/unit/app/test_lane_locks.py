"""The lane lock is released once, never through a closed descriptor (issue 26: CI printed
``OSError: [Errno 9] Bad file descriptor`` from ``held()``'s ``fcntl.flock(fd, LOCK_UN)``: the
server's descriptor had been closed while a job was dispatched)."""

from __future__ import annotations

import fcntl
import os
import sys
import time
from pathlib import Path

from app.services.job_manager import JobManager
from app.services.job_model import LaneLocks
from profiling_worker.catalog.builtin import CATALOG
from profiling_worker.bundle.schema.spec import validate_spec


def _locked_by_another(path: Path) -> bool:
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def test_closing_during_a_job_never_unlocks_what_took_the_number(tmp_path) -> None:
    """Shutdown closes the lane's descriptor while a job holds it; the next file opened takes
    the same number and is locked by someone else. Leaving held() must not unlock it (before:
    the release unlocked whatever the number named, or raised EBADF)."""
    locks = LaneLocks(tmp_path)
    with locks.held("cpu") as fd:
        locks.close()
        other = os.open(tmp_path / "bundle.lock", os.O_RDWR | os.O_CREAT)
        assert other == fd  # the number is reused at once
        fcntl.flock(other, fcntl.LOCK_EX)
    assert _locked_by_another(tmp_path / "bundle.lock")
    assert not _locked_by_another(tmp_path / ".lock-cpu")  # the closed description freed it
    os.close(other)
    with locks.held("cpu"):  # the lane opens again after a close
        assert _locked_by_another(tmp_path / ".lock-cpu")


def test_shutdown_during_dispatch_ends_the_lane_without_a_traceback(tmp_path, capfd) -> None:
    manager = JobManager(tmp_path / "results", sys.executable, kill_grace_s=1.0)
    spec = validate_spec({"kernels": ["matmul"], "configs": [{"n": 128}], "runs": 10000,
                          "backend": "cpu", "warmup": 0}, CATALOG)
    job = manager.submit(spec)
    deadline = time.monotonic() + 60
    while manager.get(job).status.value != "running" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert manager.get(job).status.value == "running"
    lane = manager._threads["cpu"]  # this manager's dispatcher (other tests' may still wait)
    manager.shutdown()
    lane.join(60)
    assert not lane.is_alive()
    err = capfd.readouterr().err
    assert "Bad file descriptor" not in err and "Traceback" not in err, err[-2000:]
    assert not _locked_by_another(tmp_path / "results" / ".lock-cpu")
