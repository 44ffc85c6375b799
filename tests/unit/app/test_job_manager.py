"""JobManager against the real worker: end to end, queue, cancel, crash, missing interpreter."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from app import settings
from profiling_worker.bundle.loader import load_bundle
from profiling_worker.bundle.schema import partial
from app.services.job_manager import JobManager
from app.services.job_model import new_job_id
from app.services.job_recovery import mark_interrupted
from app.services.result_store import JOB_ID_RE
from profiling_worker.catalog.builtin import CATALOG
from profiling_worker.bundle.schema.manifest import read_manifest, write_manifest
from profiling_worker.bundle.schema.spec import validate_spec

TINY_SPEC = {"kernels": ["matmul"], "configs": [{"n": 32}, {"n": 64}], "runs": 3,
             "backend": "cpu", "warmup": 1}


def _manager(tmp_path: Path, python: str = sys.executable) -> JobManager:
    return JobManager(tmp_path / "results", python, env=settings.worker_env(), kill_grace_s=2.0)


def _wait_running(manager: JobManager, job_id: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        job = manager.get(job_id)
        if job.status == "running" and job.job_id in manager._procs:
            return
        time.sleep(0.05)
    raise AssertionError(f"{job_id} never started")


def _wait_measuring(manager: JobManager, job_id: str, timeout_s: float = 60.0) -> None:
    """Wait until the job's worker has said its runs' total (it measures: a cancel now is
    the worker's to record, not a process killed while it starts)."""
    _wait_running(manager, job_id, timeout_s)
    deadline = time.monotonic() + timeout_s
    while manager.get(job_id).total == 0:
        assert time.monotonic() < deadline, f"{job_id} never said its total"
        time.sleep(0.05)


def test_job_id_is_time_based_and_safe() -> None:
    job_id = new_job_id(validate_spec(TINY_SPEC, CATALOG), when=0)
    assert JOB_ID_RE.match(job_id)
    assert job_id.startswith("19700101-000000-matmul-")


def test_real_cpu_jobs_run_one_at_a_time_to_done(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    spec = validate_spec(TINY_SPEC, CATALOG)
    first, second = manager.submit(spec), manager.submit(spec)
    assert manager.get(second).status == "queued"
    assert manager.active()
    assert manager.wait(first, 120) == "done"
    assert manager.wait(second, 120) == "done"
    assert not manager.active()
    job = manager.get(first)
    assert (job.done, job.total) == (1, 1)  # last progress event: "writing bundle" 1/1
    bundle = load_bundle(job.path)
    assert bundle.status == "done" and bundle.host_timer
    assert set(bundle.table("runs")["n"]) == {32, 64}
    m1, m2 = read_manifest(job.path), read_manifest(manager.get(second).path)
    assert m2["started_at"] >= m1["finished_at"]  # same lane: never overlapping


def test_cancel_running_job(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    spec = validate_spec({**TINY_SPEC, "configs": [{"n": 256}], "runs": 5000}, CATALOG)
    job_id = manager.submit(spec)
    _wait_running(manager, job_id)
    _wait_measuring(manager, job_id)  # its signal handler set: the cancel is the worker's
    manager.cancel(job_id)
    assert manager.wait(job_id, 60) == "cancelled"
    manifest = read_manifest(manager.get(job_id).path)
    assert manifest["status"] == "cancelled"
    assert manifest["error"]["message"].endswith(f"{partial.USER_CANCEL})")  # the default


def test_the_agent_doors_cancel_records_its_own_reason(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Every cancel reaches the worker one way (the reason left in its folder, then SIGTERM):
    the agent door's cancel_job is recorded as the door's, not as the panel's or a bare
    signal."""
    from app.agent_door.door import Door

    monkeypatch.setenv("KPROF_RESULTS_DIR", str(tmp_path / "results"))
    door = Door()
    door._manager = manager = _manager(tmp_path)
    spec = validate_spec({**TINY_SPEC, "configs": [{"n": 256}], "runs": 5000}, CATALOG)
    job_id = manager.submit(spec)
    _wait_measuring(manager, job_id)
    assert door.cancel_job(job_id)["status"] == "cancelled"
    message = read_manifest(manager.get(job_id).path)["error"]["message"]
    assert "SIGTERM" in message and message.endswith(f"{partial.DOOR_CANCEL})")


def test_cancel_queued_job_never_starts(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    spec = validate_spec(TINY_SPEC, CATALOG)
    first, second = manager.submit(spec), manager.submit(spec)
    manager.cancel(second)
    assert manager.get(second).status == "cancelled"
    assert manager.wait(first, 120) == "done"
    assert not (manager.get(second).path / "events.jsonl").exists()


def test_a_queued_jobs_cancel_records_its_reason_as_a_running_ones(tmp_path: Path) -> None:
    """A cancel of a job still queued (no worker yet) recorded no reason (issue 37, session
    25): its reason goes through the reason file as a running job's does, and its manifest's
    error reads as a running job's cancel, whose cancel came before any signal."""
    manager = _manager(tmp_path)
    spec = validate_spec(TINY_SPEC, CATALOG)
    first, second, third = (manager.submit(spec) for _ in range(3))
    manager.cancel(second)  # the panel's default reason
    manager.cancel(third, partial.DOOR_CANCEL)
    for job_id, reason in ((second, partial.USER_CANCEL), (third, partial.DOOR_CANCEL)):
        path = manager.get(job_id).path
        assert partial.cancel_reason(path) == reason  # the one reason file
        error = read_manifest(path)["error"]
        assert error == manager.get(job_id).error  # the panel's job and its manifest agree
        assert error["kind"] == "cancelled"
        assert error["message"].startswith("the job was cancelled (" + partial.IN_QUEUE)
        assert error["message"].endswith(f"{reason})")
    assert manager.wait(first, 120) == "done"


def test_worker_killed_without_manifest_is_failed_with_log_tail(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    spec = validate_spec({**TINY_SPEC, "configs": [{"n": 256}], "runs": 5000}, CATALOG)
    job_id = manager.submit(spec)
    _wait_running(manager, job_id)
    time.sleep(0.5)
    os.killpg(manager._procs[job_id].pid, signal.SIGKILL)  # a crash, not a cancel
    assert manager.wait(job_id, 60) == "failed"
    job = manager.get(job_id)
    assert job.error["kind"] == "worker_died"
    assert "signal 9" in job.error["message"]
    manifest = read_manifest(job.path)
    assert manifest["status"] == "failed" and manifest["error"]["kind"] == "worker_died"
    assert "manifest.json" in manifest["error"]["message"]


def test_missing_worker_python_fails_with_fix(tmp_path: Path) -> None:
    manager = _manager(tmp_path, python=str(tmp_path / "no-such-python"))
    job_id = manager.submit(validate_spec(TINY_SPEC, CATALOG))
    assert manager.wait(job_id, 30) == "failed"
    error = read_manifest(manager.get(job_id).path)["error"]
    assert error["kind"] == "worker_python_missing"
    assert "no-such-python" in error["message"]
    assert "KPROF_WORKER_PYTHON" in error["hint"]


def test_restart_marks_orphaned_running_jobs_interrupted(tmp_path: Path) -> None:
    results = tmp_path / "results"
    for name, pid in (("dead-server-job", 2**22 + 12345), ("live-server-job", os.getppid())):
        (results / name).mkdir(parents=True)
        write_manifest(results / name, {"job_id": name, "status": "running", "spec": TINY_SPEC,
                                        "server": {"pid": pid, "host": os.uname().nodename}})
    assert mark_interrupted(results) == ["dead-server-job"]
    dead = read_manifest(results / "dead-server-job")
    assert dead["status"] == "interrupted" and dead["error"]["kind"] == "interrupted"
    assert read_manifest(results / "live-server-job")["status"] == "running"
    manager = _manager(tmp_path)  # a new manager does the same on start-up
    assert manager.recovered == []


def test_finished_results_are_never_rewritten(tmp_path: Path, cpu_bundle: Path) -> None:
    before = (cpu_bundle / "manifest.json").read_bytes()
    assert mark_interrupted(cpu_bundle.parent) == []
    assert (cpu_bundle / "manifest.json").read_bytes() == before
    assert json.loads(before)["status"] == "done"


def test_history_index_learns_of_a_job_when_it_ends(tmp_path: Path) -> None:
    """The server's job manager syncs the history index when a job ends (app/ui/cached.py
    wires history_index.sync_quietly), not only when History or Import is opened."""
    from app.services import history_index

    results = tmp_path / "results"
    ended = []
    manager = JobManager(results, sys.executable, env=settings.worker_env(),
                         on_end=lambda job: (ended.append(job.status),
                                             history_index.sync_quietly(results)))
    history_index.sync(results)
    done = manager.submit(validate_spec(TINY_SPEC, CATALOG))
    assert manager.wait(done, 120) == "done"
    queued = manager.submit(validate_spec(TINY_SPEC, CATALOG))
    manager.cancel(queued)  # cancelled while queued: it ends too
    deadline = time.monotonic() + 10
    while len(ended) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sorted(ended) == ["cancelled", "done"]
    rows = {r.job_id: r.status for r in history_index.rows(results)}  # no sync called here
    assert rows[done] == "done"
