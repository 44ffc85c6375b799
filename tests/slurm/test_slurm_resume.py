"""A sweep outlives the dashboard that submitted it, against a real Slurm: the submitting
process (``kernel-sweep``, the executor the dashboard runs) is killed while a task runs; the
next executor on the results folder finds the sweep, asks Slurm about its tasks by id and
merges it. And a 1,000-task sweep is submitted without holding the caller."""

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
from app.services.job_recovery import mark_interrupted
from app.services.slurm_executor import SUBMITTING, SlurmExecutor
from app.services.sweep_plan import SweepOptions
from app.services.sweep_resume import QUEUE_FILE
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import JobStatus
from profiling_worker.bundle.schema.spec import validate_spec

pytestmark = pytest.mark.slurm
START_S = 180  # a task's worker process starts slowly on a loaded 2-core machine


def _kernel_sweep_until_running(spec: Path, results: Path) -> tuple[str, subprocess.Popen[str]]:
    """Start ``kernel-sweep`` (one task at a time) and read its status lines until a task
    runs; returns the sweep's job id and the process."""
    proc = subprocess.Popen([sys.executable, "-m", "app.sweep_cli", str(spec), "--results",
                             str(results), "--parallelism", "1", "--retries", "0",
                             "--no-reference", "--poll", "0.3"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + START_S
    assert proc.stdout is not None
    for line in proc.stdout:  # "<job id>: running · tasks 0/3 · 1 running, 2 pending"
        if ": running" in line and "1 running" in line:
            return line.split(":", 1)[0], proc
        assert time.monotonic() < deadline, f"no task ran in {START_S} s; last line {line!r}"
    raise AssertionError(f"kernel-sweep ended before a task ran (exit {proc.wait()})")


def test_a_sweep_whose_dashboard_was_killed_is_watched_again_and_merged(
        shared_results: Path, executor: SlurmExecutor, tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"kernels": ["sweep_sleep"], "runs": 2, "backend": "cpu",
                                "warmup": 0, "configs": [{"ms": 1500 + i} for i in range(3)]}))
    job_id, proc = _kernel_sweep_until_running(spec, shared_results)
    os.kill(proc.pid, signal.SIGKILL)  # the dashboard is gone; its array runs on in Slurm
    proc.wait(30)
    sweep = shared_results / job_id
    assert json.loads((sweep / C.MANIFEST_FILE).read_text())["status"] == "running"

    assert mark_interrupted(shared_results) == []  # a server start leaves the sweep alone
    assert executor.resume() == [job_id]
    assert executor.resume() == []  # watched once
    owner = json.loads((sweep / C.MANIFEST_FILE).read_text())["server"]
    assert owner["pid"] == os.getpid()  # a third server would leave it to this one
    assert executor.wait(job_id, 300) == JobStatus.DONE
    job = executor.get(job_id)
    assert [(t.state, t.attempt) for t in job.tasks] == [("done", 0)] * 3
    rows = [json.loads(line) for line in (sweep / QUEUE_FILE).read_text().splitlines()]
    ids = [row["scheduler_id"] for row in rows if "scheduler_id" in row]
    assert [t.scheduler_id for t in job.tasks] == ids  # the same array, not submitted again
    bundle = load_bundle(sweep)
    assert sorted(bundle.table(C.TABLE_AGGREGATED)[C.CONFIG].unique()) == [0, 1, 2]


def test_a_1000_task_sweep_returns_at_once_and_submits_in_the_background(
        shared_results: Path, executor: SlurmExecutor) -> None:
    spec = validate_spec({"kernels": ["sweep_sleep"], "runs": 1, "backend": "cpu",
                          "warmup": 0, "configs": [{"ms": 1 + i} for i in range(1000)]})
    t0 = time.perf_counter()
    job_id = executor.submit(spec, SweepOptions(parallelism=1, retries=0, reference=False))
    returned_s = time.perf_counter() - t0
    assert returned_s < 5.0, returned_s  # was 28 s here: 1,000 attempt folders in the callback
    deadline = time.monotonic() + 120
    while not all(t.scheduler_id for t in executor.get(job_id).tasks):
        assert time.monotonic() < deadline, executor.get(job_id).stage
        time.sleep(0.2)
    submitted_s = time.perf_counter() - t0
    job = executor.get(job_id)
    assert job.stage != SUBMITTING and len({t.scheduler_id for t in job.tasks}) == 1000
    assert len({t.scheduler_id.split("_")[0] for t in job.tasks}) == 1  # one array, one sbatch
    executor.cancel(job_id)
    assert executor.wait(job_id, 240) == JobStatus.CANCELLED
    array = job.tasks[0].scheduler_id.split("_")[0]
    left = subprocess.run(["squeue", "--noheader", "--array", "-j", array, "-o", "%i"],
                          capture_output=True, text=True, check=False).stdout.strip()
    assert left == "", left
    print(f"1,000-task sweep: submit returned in {returned_s:.2f} s, array submitted after "
          f"{submitted_s:.2f} s")
