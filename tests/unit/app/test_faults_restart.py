"""Fault 12: the Streamlit server restarted while a job runs.

A "server" here is a separate Python process holding a JobManager; it is SIGKILLed while its
job runs (the worker, in its own session, survives it: "left running"), or together with its
worker ("killed"). A new JobManager on the same results directory (the restarted server) must
mark the job interrupted with the cause and the log tail, stop an orphaned worker that still
holds the GPU lane, keep the unfinished run's tables apart from results (``partial/``), leave
finished bundles alone, and run the next job.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app import settings
from profiling_worker.bundle.loader import load_bundle
from app.services.job_manager import JobManager
from app.services import worker_client
from app.services.job_recovery import mark_interrupted
from profiling_worker.catalog.builtin import CATALOG
from profiling_worker.bundle.schema.manifest import read_manifest, write_manifest
from profiling_worker.bundle.schema.spec import validate_spec

REPO = Path(__file__).resolve().parents[3]
TINY = {"kernels": ["matmul"], "configs": [{"n": 16}], "runs": 1, "backend": "cpu", "warmup": 0}
LONG = {**TINY, "configs": [{"n": 256}], "runs": 5000}

SERVER = '''
import json, sys, time
sys.path.insert(0, {repo!r})
from app import settings
from app.services.job_manager import JobManager
from profiling_worker.catalog.builtin import CATALOG
from profiling_worker.bundle.schema.spec import validate_spec
manager = JobManager(__import__("pathlib").Path({results!r}), sys.executable,
                     env=settings.worker_env())
job_id = manager.submit(validate_spec({spec!r}, CATALOG))
while not (manager.get(job_id).total and job_id in manager._procs):
    time.sleep(0.05)
print(json.dumps({{"job_id": job_id, "worker_pid": manager._procs[job_id].pid}}), flush=True)
time.sleep(600)
'''


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _server_with_running_job(results: Path) -> tuple[subprocess.Popen, str, int]:
    code = SERVER.format(repo=str(REPO), results=str(results), spec=LONG)
    server = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                              cwd=REPO, env=settings.worker_env())
    line = server.stdout.readline()
    assert line, "the server process died before its job ran"
    info = json.loads(line)
    return server, info["job_id"], info["worker_pid"]


def _hashes(bundle: Path) -> dict[str, str]:
    return {str(p.relative_to(bundle)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(bundle.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("worker_left_running", [True, False], ids=["left-running", "killed"])
def test_restart_marks_running_job_interrupted(tmp_path: Path, cpu_bundle_src: Path,
                                               worker_left_running: bool) -> None:
    results = tmp_path / "results"
    results.mkdir()
    done = results / cpu_bundle_src.name
    shutil.copytree(cpu_bundle_src, done)
    before = _hashes(done)
    server, job_id, worker_pid = _server_with_running_job(results)
    server.kill()  # the server dies; its worker is in its own session
    server.wait()
    if not worker_left_running:
        os.killpg(worker_pid, signal.SIGKILL)
        time.sleep(0.2)
    assert read_manifest(results / job_id)["status"] == "running"
    if worker_left_running:
        assert _alive(worker_pid)

    manager = JobManager(results, sys.executable, env=settings.worker_env())  # restarted server
    assert manager.recovered == [job_id]
    assert not _alive(worker_pid)  # the orphan no longer profiles on the lane
    manifest = read_manifest(results / job_id)
    assert manifest["status"] == "interrupted"
    err = manifest["error"]
    assert err["kind"] == "interrupted" and "server stopped" in err["message"]
    assert "Submit the job again" in err["hint"]
    # the worker's log / console tail: its last 4,000 characters, which a fast job fills with
    # progress events past the "--- worker.log ---" header (one torch thread runs a 256^2
    # matmul in well under a ms, so 0.2 s left dozens of them), so compared whole, not by a word
    assert err["log_tail"] and err["log_tail"] == worker_client.log_tail(results / job_id)
    assert not (results / job_id / "tables").exists()
    assert load_bundle(results / job_id).status == "interrupted"
    assert _hashes(done) == before

    nxt = manager.submit(validate_spec(TINY, CATALOG))  # the lane is free again
    assert manager.wait(nxt, 120) == "done"
    assert read_manifest(results / job_id)["status"] == "interrupted"  # not overwritten later


def test_partial_tables_are_set_aside(tmp_path: Path) -> None:
    job = tmp_path / "20270101-000000-matmul-dead"
    (job / "tables").mkdir(parents=True)
    (job / "tables" / "runs.parquet").write_bytes(b"PAR1 half")
    write_manifest(job, {"job_id": job.name, "status": "running", "spec": TINY,
                         "server": {"pid": 2**22 + 7, "host": os.uname().nodename}})
    assert mark_interrupted(tmp_path) == [job.name]
    assert not (job / "tables").exists()
    assert (job / "partial" / "tables" / "runs.parquet").read_bytes() == b"PAR1 half"
    assert "partial/" in read_manifest(job)["error"]["hint"]
    assert load_bundle(job).table("runs").empty  # no view reads the half-written table


def test_restart_recovery_never_follows_a_linked_job_folder_out_of_the_store(
        tmp_path: Path) -> None:
    """A link in the results folder to a folder elsewhere (a job or a sweep there) is not the
    store's: its manifest is not rewritten, its tables not moved, its sweep not claimed."""
    from app.services.slurm_executor import SlurmExecutor
    from app.services.sweep_plan import SWEEP_FILE

    results, outside = tmp_path / "results", tmp_path / "outside"
    results.mkdir()
    server = {"pid": 2**22 + 7, "host": os.uname().nodename}  # a gone server
    for name in ("20270101-000000-matmul-link", "20270101-000001-matmul-swep"):
        folder = outside / name
        (folder / "tables").mkdir(parents=True)
        (folder / "tables" / "runs.parquet").write_bytes(b"PAR1 theirs")
        write_manifest(folder, {"job_id": name, "status": "running", "spec": TINY,
                                "server": server})
        (results / name).symlink_to(folder, target_is_directory=True)
    sweep = outside / "20270101-000001-matmul-swep"
    (sweep / SWEEP_FILE).write_text("{}", encoding="utf-8")
    before = {p: p.read_bytes() for p in sorted(outside.rglob("*")) if p.is_file()}
    assert mark_interrupted(results) == []
    assert SlurmExecutor(results, sys.executable).resume() == []
    after = {p: p.read_bytes() for p in sorted(outside.rglob("*")) if p.is_file()}
    assert after == before, "recovery wrote in a folder outside the store"


def test_a_server_on_another_host_is_left_alone(tmp_path: Path) -> None:
    job = tmp_path / "20270101-000000-matmul-othr"
    job.mkdir()
    write_manifest(job, {"job_id": job.name, "status": "running", "spec": TINY,
                         "server": {"pid": 1234, "host": "some-other-host.example"}})
    assert mark_interrupted(tmp_path) == []
    assert read_manifest(job)["status"] == "running"


def test_unrelated_process_with_the_recorded_pid_is_not_killed(tmp_path: Path) -> None:
    sleeper = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        job = tmp_path / "20270101-000000-matmul-pid0"
        job.mkdir()
        write_manifest(job, {"job_id": job.name, "status": "running", "spec": TINY,
                             "server": {"pid": 2**22 + 9, "host": os.uname().nodename},
                             "worker": {"pid": sleeper.pid, "host": os.uname().nodename}})
        assert mark_interrupted(tmp_path) == [job.name]
        assert sleeper.poll() is None  # a reused pid: not a worker of this job, not touched
    finally:
        sleeper.kill()
        sleeper.wait()


def test_shutdown_without_keeping_marks_running_and_queued_jobs_interrupted(
        tmp_path: Path) -> None:
    """The agent door's shutdown (``keep_measured=False``: its client kills it 2 s after
    closing its stdin); the dashboard's keeps what a running job measured
    (test_shutdown_keeps.py)."""
    manager = JobManager(tmp_path / "results", sys.executable, env=settings.worker_env())
    running = manager.submit(validate_spec(LONG, CATALOG))
    queued = manager.submit(validate_spec(TINY, CATALOG))
    deadline = time.monotonic() + 90
    while running not in manager._procs and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sorted(manager.shutdown(keep_measured=False)) == sorted([running, queued])
    for job_id in (running, queued):  # on disk when shutdown returns (issue 39: the agent
        # door's process exits right after it)
        assert read_manifest(manager.get(job_id).path)["status"] == "interrupted"
    assert manager.get(running).status == manager.get(queued).status == "interrupted"


def test_a_killed_orphan_is_waited_for_until_it_is_gone_not_until_its_argv_empties() -> None:
    """The wait after the SIGKILL follows the process (its start time), not its argv: a dying
    process's cmdline reads empty before it is a zombie, which ended the wait early under load
    (CI on 2 busy cores: the restarted server went on while the orphan still ran)."""
    from app.services import job_recovery

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        started = job_recovery._start_time(child.pid)
        assert started is not None
        child.send_signal(signal.SIGKILL)
        deadline = time.monotonic() + 10
        while job_recovery._start_time(child.pid) is not None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert job_recovery._start_time(child.pid) is None  # a zombie counts as gone
    finally:
        child.kill()
        child.wait()
    assert job_recovery._start_time(child.pid) is None  # reaped
