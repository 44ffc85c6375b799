"""Failures around a sweep's record, against a real Slurm: ``queue.jsonl`` that cannot be
written (a retry and a cancel), sbatch refusing a retry, a dashboard killed between sbatch returning and the ids being
recorded, and two servers on one results folder after a restart. Each test is bounded by
its tasks (a few seconds of cpu work each) and the waits below."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from profiling_worker.bundle.loader import load_bundle
from app.services import sweep_lock
from app.services.slurm_executor import FOLLOW_S, SlurmExecutor
from app.services.sweep_plan import SweepOptions
from app.services.sweep_resume import QUEUE_FILE, RECORD_HINT, read_record
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import JobStatus
from profiling_worker.bundle.schema.spec import validate_spec
from tests.slurm.conftest import wait_for

pytestmark = pytest.mark.slurm
START_S = 180  # a task's worker process starts slowly on a loaded 2-core machine
CPU = {"runs": 2, "backend": "cpu", "warmup": 0}
# A dashboard server in a process of its own: submits a sweep, then waits to be killed.
SUBMITTER = """
import json, sys, time
from pathlib import Path
from app.services.slurm_executor import SlurmExecutor
from app.services.sweep_plan import SweepOptions
from profiling_worker.bundle.schema.spec import validate_spec
from tests.slurm.conftest import wait_for
ex = SlurmExecutor(Path(sys.argv[1]), sys.executable, poll_s=0.3)
ex.submit(validate_spec(json.loads(sys.argv[2])), SweepOptions(retries=0, reference=False))
time.sleep(600)
"""


def _unwritable(sweep: Path) -> None:
    """From now on every write of the sweep's queue.jsonl fails with ENOSPC, as on a full
    disk (/dev/full is the kernel's always-full device)."""
    record = sweep / QUEUE_FILE
    record.unlink()
    record.symlink_to("/dev/full")


def _arrays_named(prefix: str) -> set[str]:
    """Names of the Slurm jobs (also ended ones, for MinJobAge) that start with ``prefix``."""
    out = subprocess.run(["squeue", "--noheader", "--states=all", "--format=%j"],
                         capture_output=True, text=True, check=True).stdout.split()
    return {name for name in out if name.startswith(prefix)}


def _submitted_rows(sweep: Path) -> list[dict[str, object]]:
    return [row for line in (sweep / QUEUE_FILE).read_text().splitlines()
            if "scheduler_id" in (row := json.loads(line))]


def test_a_retry_queue_jsonl_cannot_record_is_not_submitted_and_says_why(
        shared_results: Path, executor: SlurmExecutor) -> None:
    spec = validate_spec({"kernels": ["sweep_fails_13"], "configs": [{"n": 13}], **CPU})
    job_id = executor.submit(spec, SweepOptions(retries=1, reference=False))
    job = wait_for(executor, job_id, lambda j: all(t.scheduler_id for t in j.tasks), 60)
    _unwritable(job.path)  # the disk fills while the first attempt runs
    assert executor.wait(job_id, START_S) == JobStatus.FAILED
    (task,) = executor.get(job_id).tasks
    assert (task.state, task.attempt) == ("failed", 0)
    assert "size 13 is refused" in task.reason  # what failed, and why there was no retry:
    assert f"not retried: cannot write {job.path / QUEUE_FILE}" in task.reason
    assert "No space left on device" in task.reason and RECORD_HINT in task.reason
    assert not (job.path / "tasks" / "t0000" / "a1").exists()  # nothing made for it
    assert _arrays_named(f"kprof-{job_id}") == {f"kprof-{job_id}-t0000a0"}  # no array unrecorded


def test_a_cancel_queue_jsonl_cannot_record_still_cancels_and_says_so(
        shared_results: Path, executor: SlurmExecutor) -> None:
    spec = validate_spec({"kernels": ["sweep_sleep"], "configs": [{"ms": 30_000}], **CPU})
    job_id = executor.submit(spec, SweepOptions(retries=1, reference=False))
    job = wait_for(executor, job_id, lambda j: j.tasks[0].state == "running", START_S)
    _unwritable(job.path)
    executor.cancel(job_id)  # raised OSError before, and scancel never ran
    assert executor.wait(job_id, 120) == JobStatus.CANCELLED
    job = executor.get(job_id)
    assert any(w.startswith(f"the cancel is not recorded (cannot write {job.path / QUEUE_FILE}")
               for w in job.warnings), job.warnings
    array = job.tasks[0].scheduler_id.split("_")[0]
    left = subprocess.run(["squeue", "--noheader", "--array", "-j", array, "-o", "%i"],
                          capture_output=True, text=True, check=False).stdout.strip()
    assert left == "", left


def _start_submitter(results: Path, spec: dict[str, object],
                     env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", SUBMITTER, str(results), json.dumps(spec)],
                            env={**os.environ, **(env or {})})


def _only_sweep(results: Path) -> Path:
    deadline = time.monotonic() + 60
    while not (found := [p for p in results.iterdir() if (p / C.MANIFEST_FILE).is_file()]):
        assert time.monotonic() < deadline, "the submitter made no sweep"
        time.sleep(0.1)
    return found[0]


def _sbatch_wrapper(folder: Path, body: str) -> str:
    """A PATH with an ``sbatch`` first that runs ``body`` (bash; ``$REAL`` is the real sbatch)."""
    real = subprocess.run(["which", "sbatch"], capture_output=True, text=True,
                          check=True).stdout.strip()
    (folder / "bin").mkdir()
    wrapper = folder / "bin" / "sbatch"
    wrapper.write_text(f'#!/bin/bash\nREAL="{real}"\n{body}\n')
    wrapper.chmod(0o755)
    return f"{folder / 'bin'}:{os.environ['PATH']}"


def test_a_retry_sbatch_refuses_ends_the_task_and_the_sweep_still_merges(
        shared_results: Path, executor: SlurmExecutor, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    refuse = tmp_path / "refuse"  # once it exists, sbatch fails as a controller that times out
    monkeypatch.setenv("PATH", _sbatch_wrapper(tmp_path, f'[ -e "{refuse}" ] && {{ echo '
                                               f'"sbatch: error: Socket timed out" >&2; exit 1; }}'
                                               '\nexec "$REAL" "$@"'))
    spec = validate_spec({"kernels": ["sweep_fails_13"], "configs": [{"n": 8}, {"n": 13}], **CPU})
    job_id = executor.submit(spec, SweepOptions(retries=1, reference=False))
    wait_for(executor, job_id, lambda j: all(t.scheduler_id for t in j.tasks), 60)
    refuse.touch()
    assert executor.wait(job_id, START_S) == JobStatus.DONE  # was failed (internal), no merge
    done, failed = executor.get(job_id).tasks
    assert (done.state, failed.state, failed.attempt) == ("done", "failed", 0)
    assert "size 13 is refused" in failed.reason
    assert "not retried: sbatch refused the array" in failed.reason
    assert "Socket timed out" in failed.reason
    agg = load_bundle(shared_results / job_id).table(C.TABLE_AGGREGATED)
    assert sorted(agg[C.CONFIG].unique()) == [0]  # the finished task is merged


def test_an_array_sbatch_refuses_ends_the_sweep_failed_with_slurms_message(
        shared_results: Path, executor: SlurmExecutor) -> None:
    spec = validate_spec({"kernels": ["sweep_sleep"], "configs": [{"ms": 1}], **CPU})
    job_id = executor.submit(spec, SweepOptions(partition="nosuch", reference=False))
    assert executor.wait(job_id, 60) == JobStatus.FAILED
    error = executor.get(job_id).error
    assert error is not None and error["kind"] == "slurm_missing", error  # was internal
    assert error["message"].startswith("sbatch refused the array")
    assert "invalid partition" in error["message"].lower(), error["message"]


def test_an_array_whose_ids_a_killed_dashboard_never_recorded_is_found_and_adopted(
        shared_results: Path, executor: SlurmExecutor, tmp_path: Path) -> None:
    """sbatch on PATH is the real one, then SIGKILL of its caller: the dashboard dies the
    moment sbatch returned, before it wrote the Slurm ids."""
    path = _sbatch_wrapper(tmp_path, 'out=$("$REAL" "$@") || exit $?\nkill -9 $PPID\n'
                                     'echo "$out"')
    spec = {"kernels": ["sweep_sleep"], "configs": [{"ms": 500}, {"ms": 501}], **CPU}
    proc = _start_submitter(shared_results, spec, {"PATH": path})
    assert proc.wait(120) == -signal.SIGKILL
    sweep = _only_sweep(shared_results)
    record = read_record(sweep)
    assert record.attempts == {} and len(record.unrecorded) == 1  # written before sbatch only
    name = record.unrecorded[0].name
    assert _arrays_named(f"kprof-{sweep.name}") == {name}  # in Slurm, known to nobody

    assert executor.resume() == [sweep.name]
    assert executor.wait(sweep.name, START_S) == JobStatus.DONE
    job = executor.get(sweep.name)
    array = subprocess.run(["squeue", "--noheader", "--states=all", f"--name={name}",
                            "--format=%F"], capture_output=True, text=True,
                           check=True).stdout.split()[0]
    assert [(t.state, t.attempt, t.scheduler_id) for t in job.tasks] == [
        ("done", 0, f"{array}_0"), ("done", 0, f"{array}_1")]  # the same array, adopted
    assert any("found in Slurm by its name and adopted" in w and name in w
               for w in job.warnings), job.warnings
    assert _arrays_named(f"kprof-{sweep.name}") == {name}  # not submitted a second time
    assert [r["scheduler_id"] for r in _submitted_rows(sweep)] == [f"{array}_0", f"{array}_1"]


def test_of_two_servers_on_one_results_folder_one_watches_the_other_shows_it_read_only(
        shared_results: Path, executor: SlurmExecutor) -> None:
    spec = {"kernels": ["sweep_sleep"], "configs": [{"ms": 3000}, {"ms": 3001}], **CPU}
    proc = _start_submitter(shared_results, spec)
    sweep = _only_sweep(shared_results)
    deadline = time.monotonic() + 60
    while len(_submitted_rows(sweep) if (sweep / QUEUE_FILE).is_file() else []) < 2:
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.1)
    proc.kill()  # the dashboard that submitted it is gone; its array runs on
    proc.wait(30)
    # another server took the sweep the same instant and has not yet written its pid into
    # the manifest (the window in which both saw the old pid dead and both watched)
    other = subprocess.Popen([sys.executable, "-c", "import sys; from pathlib import Path; "
                              "from app.services import sweep_lock; "
                              f"assert sweep_lock.claim(Path({str(sweep)!r})); "
                              "print('held', flush=True); sys.stdin.read()"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert other.stdout is not None and other.stdout.readline() == "held\n"

    assert executor.resume() == []  # watched elsewhere: not a second watcher
    job = executor.get(sweep.name)
    assert job is not None and job.active and f"pid {proc.pid}" in job.watched_by
    executor.cancel(sweep.name)  # read-only here: no cancel of someone else's sweep
    assert not read_record(sweep).cancelled and not job.tasks

    assert other.stdin is not None
    other.stdin.close()  # that server stops: its lock is free
    assert other.wait(30) == 0
    job = wait_for(executor, sweep.name, lambda j: not j.watched_by, FOLLOW_S * 4)
    assert sweep_lock.held(sweep)
    assert any(w.startswith("taken over by this server") for w in job.warnings), job.warnings
    assert executor.wait(sweep.name, START_S) == JobStatus.DONE
    job = executor.get(sweep.name)
    assert [(t.state, t.attempt) for t in job.tasks] == [("done", 0)] * 2
    assert len(_submitted_rows(sweep)) == 2  # the one array, never submitted again
