"""A really full disk (a 20 MB tmpfs, root only): submit refused with no half job, a job that
runs out of space ends failed (disk_full) on disk and can be deleted, History stays readable."""

from __future__ import annotations

import errno
import fcntl
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app import settings
from app.services import history_index
from app.services.job_manager import JobManager
from profiling_worker.catalog.builtin import CATALOG
from profiling_worker.bundle.schema.manifest import read_manifest
from profiling_worker.bundle.schema.spec import validate_spec

SPEC = {"kernels": ["matmul"], "configs": [{"n": 16}, {"n": 32}], "runs": 2, "backend": "cpu",
        "warmup": 0}


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=20m", "tmpfs",
                                            str(disk)], capture_output=True).returncode:
        pytest.skip("needs root and mount -t tmpfs")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def _fill(disk: Path) -> Path:
    """Write zeros until the file system is full; returns the filler file."""
    filler = disk / "filler"
    with open(filler, "wb") as fh:
        try:
            while True:
                fh.write(bytes(1 << 16))
                fh.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def test_a_full_disk_loses_nothing_and_leaves_nothing_stuck(small_disk: Path) -> None:
    results = small_disk / "results"
    manager = JobManager(results, sys.executable, env=settings.worker_env())
    history_index.sync(results)
    lock = open(results / ".lock-cpu", "w")  # hold the lane: the job waits, queued
    fcntl.flock(lock, fcntl.LOCK_EX)
    job_id = manager.submit(validate_spec(SPEC, CATALOG))
    filler = _fill(small_disk)
    with pytest.raises(OSError) as err:  # nothing fits any more: refused, no half job
        manager.submit(validate_spec(SPEC, CATALOG))
    assert err.value.errno == errno.ENOSPC
    assert [p.name for p in results.iterdir() if p.is_dir()] == [job_id]
    fcntl.flock(lock, fcntl.LOCK_UN)  # the job runs on the full disk
    assert manager.wait(job_id, 120) == "failed"
    assert manager.get(job_id).error["kind"] == "disk_full"
    on_disk = read_manifest(results / job_id)
    assert on_disk["status"] == "failed" and on_disk["error"]["kind"] == "disk_full"
    _sync, rows, _problem = history_index.read_history(results)  # readable on the full disk
    assert [(r.job_id, r.status) for r in rows] == [(job_id, "failed")]
    filler.unlink()
    history_index.sync(results)
    history_index.delete(results, job_id)  # final, so deletable
    assert not (results / job_id).exists()
    manager.shutdown()
