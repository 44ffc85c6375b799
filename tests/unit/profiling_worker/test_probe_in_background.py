"""A cold job's environment probe, started before the worker's imports on a thread of its own
(issue 40): the manifest's environment is the one the probe gives in the calling thread, and a
probe that fails fails the job as it did when it ran inside ``prepare``."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from profiling_worker.backends.channel import Channel
from profiling_worker.backends.registry import environment_report
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import read_manifest
from profiling_worker.job import runner
from profiling_worker.probes import environment
from profiling_worker.probes.environment import ProbeInBackground, probe_environment

REPO = Path(__file__).resolve().parents[3]
CPU_JOB = {"kernels": ["matmul"], "annotations": ["fp32"], "configs": [{"n": 32}], "runs": 2,
           "backend": "cpu"}


def _job(root: Path, name: str) -> Path:
    job = root / name
    job.mkdir()
    (job / C.SPEC_FILE).write_text(json.dumps(CPU_JOB))
    return job


def test_the_background_probe_gives_the_environment_the_calling_thread_probes() -> None:
    assert ProbeInBackground().result() == probe_environment()


def _env_command() -> dict:
    env = subprocess.run([sys.executable, "-m", "profiling_worker", "env"], cwd=REPO,
                         capture_output=True, text=True, timeout=300)
    return json.loads(env.stdout)["environment"]


def test_a_cold_run_records_the_environment_the_env_command_reports(tmp_path: Path) -> None:
    job = _job(tmp_path, "cold")
    run = subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(job)], cwd=REPO,
                         capture_output=True, text=True, timeout=300)
    manifest = read_manifest(job)
    assert run.returncode == 0 and manifest["status"] == "done", run.stdout[-2000:]
    assert manifest["environment"] == _env_command()


def test_a_warm_worker_records_the_environment_the_env_command_reports(tmp_path: Path) -> None:
    from app import settings
    from app.services.warm_worker import WarmWorker

    worker = WarmWorker(sys.executable, "cpu", 0, settings.worker_env(), tmp_path / "warm.log")
    try:
        job = _job(tmp_path, "warm")
        worker.submit(job)
        assert worker.poll(120) == {"event": "done", "job_dir": str(job.resolve()), "code": 0}
    finally:
        worker.close()
    assert read_manifest(job)["environment"] == _env_command()


def test_the_job_given_the_probe_writes_the_manifest_the_job_probing_itself_writes(
        tmp_path: Path) -> None:
    itself, given = _job(tmp_path, "itself"), _job(tmp_path, "given")
    assert runner.run_job(itself, Channel(itself, None)) == 0
    assert runner.run_job(given, Channel(given, None), probe=ProbeInBackground()) == 0
    first, second = read_manifest(itself), read_manifest(given)
    for key in ("environment", "gpu", "spec", "spec_hash", "status", "kernel_files"):
        assert first[key] == second[key], key
    assert {k for k in first["provenance"] if k != "date"} == \
        {k for k in second["provenance"] if k != "date"}


def test_a_failed_probe_fails_the_job_as_when_prepare_probed(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    def broken() -> dict:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(environment, "probe_environment", broken)
    probe = ProbeInBackground()
    with pytest.raises(OSError, match="No space left"):
        probe.result()
    itself, given = _job(tmp_path, "itself"), _job(tmp_path, "given")
    assert runner.run_job(itself, Channel(itself, None)) == 1
    assert runner.run_job(given, Channel(given, None), probe=ProbeInBackground()) == 1
    first, second = read_manifest(itself), read_manifest(given)
    assert first["status"] == second["status"] == "failed"
    assert {k: v for k, v in first["error"].items() if k != "log_tail"} == \
        {k: v for k, v in second["error"].items() if k != "log_tail"}
    with pytest.raises(OSError):  # the report path itself, for comparison
        environment_report()
