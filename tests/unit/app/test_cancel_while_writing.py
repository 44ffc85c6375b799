"""A Cancel through the JobManager (a real worker subprocess) once every run is measured, or the
server's shutdown then (``JobManager.shutdown``: Ctrl-C on the dashboard): the worker writes its bundle whole and the job ends done; the manager does not SIGKILL it while it
writes (its stage is WRITING_STAGE), only once ``write_grace_s`` has passed, and then the tables
written so far are set aside in ``partial/``, never read as a whole result.

The worker loads tests/fixtures/kernel_files_slow_write, which makes its bundle slow to write:
after the runs table it waits for the SIGTERM, then writes on for SLOW_WRITE_S."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from app import settings
from app.services.job_manager import JobManager
from app.services.job_recovery import PARTIAL_DIR
from profiling_worker.bundle.loader import load_bundle
from profiling_worker.bundle.schema import columns as C, partial
from profiling_worker.bundle.schema.events import WRITING_STAGE
from profiling_worker.bundle.schema.manifest import read_manifest
from profiling_worker.bundle.schema.spec import validate_spec
from profiling_worker.catalog.builtin import CATALOG

KERNELS = Path(__file__).parents[2] / "fixtures" / "kernel_files_slow_write"
KILL_GRACE_S = 0.3
SLOW_WRITE_S = 2.0  # the write goes on this long past the SIGTERM: several kill graces
SPEC = {"kernels": ["matmul"], "annotations": ["fp32"], "configs": [{"n": 8}, {"n": 16}],
        "runs": 3, "backend": "cpu", "warmup": 1}


def _manager(tmp_path: Path, write_grace_s: float | None = None) -> JobManager:
    env = {**settings.worker_env(), "KPROF_KERNEL_DIRS": str(KERNELS),
           "KPROF_SLOW_WRITE_S": str(SLOW_WRITE_S)}
    return JobManager(tmp_path / "results", sys.executable, env=env,
                      kill_grace_s=KILL_GRACE_S, write_grace_s=write_grace_s)


def _writing(manager: JobManager) -> str:
    """Submit :data:`SPEC` and wait until the manager has read the worker's writing stage;
    returns the job id."""
    job_id = manager.submit(validate_spec(SPEC, CATALOG))
    deadline = time.monotonic() + 120
    while manager.get(job_id).stage != WRITING_STAGE:
        assert manager.get(job_id).active, manager.get(job_id).error
        assert time.monotonic() < deadline, "the worker never reached its writing stage"
        time.sleep(0.05)
    return job_id


def _cancel_while_writing(manager: JobManager) -> str:
    """:func:`_writing`, then cancel the job; returns its id."""
    job_id = _writing(manager)
    manager.cancel(job_id)
    return job_id


def test_a_cancel_while_the_bundle_is_written_ends_done_with_every_run(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    job_id = _cancel_while_writing(manager)
    assert manager.wait(job_id, 120) == "done", manager.get(job_id).error
    job = manager.get(job_id)
    manifest = read_manifest(job.path)
    assert manifest["status"] == "done" and manifest[partial.LATE_CANCEL_KEY].startswith("SIGTERM")
    assert partial.late_cancel(manifest) in job.warnings  # the panel shows it from the events
    runs = load_bundle(job.path).table(C.TABLE_RUNS)
    assert runs.groupby(C.CONFIG).size().to_dict() == {0: 3, 1: 3}
    # the write outlasted the kill grace many times and was never cut
    assert float(manifest["wall_s"]) > SLOW_WRITE_S > 5 * KILL_GRACE_S


def test_a_write_past_the_write_grace_is_killed_and_its_tables_set_aside(
        tmp_path: Path) -> None:
    manager = _manager(tmp_path, write_grace_s=KILL_GRACE_S)
    job_id = _cancel_while_writing(manager)
    assert manager.wait(job_id, 120) == "cancelled"
    job = manager.get(job_id)
    assert read_manifest(job.path)["status"] == "cancelled"
    assert job.returncode is not None and job.returncode < 0  # killed, not ended by itself
    assert not (job.path / C.TABLES_DIR).exists()  # no view reads a half-written bundle
    assert (job.path / PARTIAL_DIR / C.TABLES_DIR / f"{C.TABLE_RUNS}.parquet").is_file()


def test_a_server_stopped_while_the_bundle_is_written_ends_the_job_done(tmp_path: Path) -> None:
    """The server's shutdown (Ctrl-C) gives a worker writing its bundle the Cancel's
    ``write_grace_s``, not ``kill_grace_s``: it ends done with every run, on disk when
    ``shutdown`` returns."""
    manager = _manager(tmp_path)
    job_id = _writing(manager)
    assert manager.shutdown() == []
    job = manager.get(job_id)
    manifest = read_manifest(job.path)
    assert job.status == manifest["status"] == "done", job.error
    assert manifest[partial.LATE_CANCEL_KEY].startswith("SIGTERM")
    runs = load_bundle(job.path).table(C.TABLE_RUNS)
    assert runs.groupby(C.CONFIG).size().to_dict() == {0: 3, 1: 3}
    assert float(manifest["wall_s"]) > SLOW_WRITE_S > 5 * KILL_GRACE_S  # never cut
