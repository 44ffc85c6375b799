"""Jobs another process owns, as a job manager lists them (``follow_others``): a worker run
from a shell names itself in the manifest when it starts; killed, its job ends ``interrupted``
here, naming it, as a restart would end it; restart recovery leaves a live one alone."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from profiling_worker.bundle.schema.manifest import JobStatus, ManifestError, read_manifest

from app.services.job_manager import JobManager
from app.services.job_recovery import interrupted_error, mark_interrupted

REPO = Path(__file__).resolve().parents[3]
SWEEP_KERNELS = REPO / "tests" / "fixtures" / "kernel_files_sweep"
# ten minutes of sleeping: running for the whole test however loaded the machine
LONG_SPEC = {"kernels": ["sweep_sleep"], "configs": [{"ms": 600_000}], "runs": 1,
             "backend": "cpu", "warmup": 0}
BOUND_S = 120.0


def test_a_killed_worker_cli_job_is_listed_then_ends_interrupted(tmp_path: Path,
                                                                 monkeypatch) -> None:
    monkeypatch.setenv("KPROF_KERNEL_DIRS", str(SWEEP_KERNELS))
    results = tmp_path / "results"
    manager = JobManager(results, sys.executable)
    job = results / "20261205-100000-sweep_sleep-cli2"
    job.mkdir()
    (job / "spec.json").write_text(json.dumps(LONG_SPEC), encoding="utf-8")
    cli = subprocess.Popen([sys.executable, "-m", "profiling_worker", "run", str(job)], cwd=REPO,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        manifest = _wait_for_manifest(job)
        assert manifest["status"] == "running" and manifest["spec"]["kernels"] == ["sweep_sleep"]
        assert manifest["worker"]["pid"] == cli.pid
        assert mark_interrupted(results) == []  # its owner lives: a restart leaves it alone
        assert manager.follow_others() == [job.name]
        listed = manager.get(job.name)
        assert listed is not None and listed.status == JobStatus.RUNNING
        assert listed.watched_by.startswith(f"worker CLI pid {cli.pid} on host ")
        manager.cancel(job.name)  # not this server's: nothing happens
        assert not manager.get(job.name).cancel_requested
    finally:
        cli.send_signal(signal.SIGKILL)
        cli.wait(60)
    assert manager.wait(job.name, BOUND_S) == JobStatus.INTERRUPTED, "not interrupted in time"
    error = read_manifest(job)["error"]
    assert error["kind"] == "interrupted"
    assert error["message"] == interrupted_error(job, "worker CLI")["message"]  # it had run
    assert manager.follow_others() == []  # listed once
    manager.shutdown()


def _wait_for_manifest(job: Path) -> dict:
    """The manifest the worker writes when it starts (bound :data:`BOUND_S`)."""
    deadline = time.monotonic() + BOUND_S
    while True:
        try:
            return read_manifest(job)
        except ManifestError:
            assert time.monotonic() < deadline, f"no manifest in {job} within {BOUND_S} s"
            time.sleep(0.2)
