"""Sweeps against a real Slurm (scripts/local_slurm.sh): submit, watch, fail, retry, cancel and
merge, through :class:`app.services.slurm_executor.SlurmExecutor`, the code the dashboard runs.
The tasks run the cpu backend on the local node; their kernels are in
tests/fixtures/kernel_files_sweep."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from profiling_worker.bundle.loader import load_bundle
from app.services import result_store
from app.services.slurm_executor import SlurmExecutor
from app.services.sweep_plan import SweepOptions
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import JobStatus
from profiling_worker.bundle.schema.spec import validate_spec
from tests.slurm.conftest import wait_for

pytestmark = pytest.mark.slurm
CPU = {"runs": 2, "backend": "cpu", "warmup": 0}


def _spec(kernel: str, configs: list[dict[str, int]]) -> object:
    return validate_spec({"kernels": [kernel], "configs": configs, **CPU})


def test_a_sweep_is_one_array_split_watched_and_merged(shared_results: Path,
                                                        executor: SlurmExecutor) -> None:
    spec = _spec("matmul", [{"n": n} for n in (8, 16, 24, 32, 40)])
    job_id = executor.submit(spec, SweepOptions(configs_per_task=2, parallelism=2, retries=0))
    assert [t.configs for t in executor.get(job_id).tasks] == [(0, 1), (2, 3), (4,)]
    # the watcher submits the array right after submit returned
    job = wait_for(executor, job_id, lambda j: all(t.scheduler_id for t in j.tasks), 60)
    array = {t.scheduler_id.split("_")[0] for t in job.tasks}
    assert len(array) == 1  # one Slurm job array, one element per task
    queued = subprocess.run(["squeue", "--noheader", "--array", "--states=all", "-j",
                             array.pop(), "-o", "%i"], capture_output=True, text=True,
                            check=True).stdout.split()
    assert sorted(queued) == sorted(t.scheduler_id for t in job.tasks)
    seen = set()
    while executor.get(job_id).active:
        seen |= {t.state for t in executor.get(job_id).tasks}
        time.sleep(0.1)
    assert executor.wait(job_id, 1) == JobStatus.DONE
    assert "running" in seen  # watched while it ran
    bundle = load_bundle(job.path)
    agg = bundle.table(C.TABLE_AGGREGATED)
    assert sorted(agg[C.CONFIG].unique()) == [0, 1, 2, 3, 4]
    assert sorted(agg["n"].unique()) == [8, 16, 24, 32, 40]  # each config once, renumbered
    sweep = bundle.manifest["sweep"]
    assert [t["task"] for t in sweep["tasks"]] == ["t0000", "t0001", "t0002"]
    for task in sweep["tasks"]:
        assert task["state"] == "done" and task["node"] and task["slurm"]["SLURM_ARRAY_JOB_ID"]
        assert task["versions"]["torch"] and task["reference"]["runs"] == 10
    assert [c["task"] for c in sweep["configs"]] == ["t0000", "t0000", "t0001", "t0001", "t0002"]
    assert not any(f.startswith("tasks/") for f in bundle.manifest["files"])
    listed, problems = result_store.list_bundles(shared_results)
    assert [b.job_id for b in listed] == [job_id] and problems == []


def test_a_failing_config_is_retried_then_reported_by_name(shared_results: Path,
                                                           executor: SlurmExecutor) -> None:
    spec = _spec("sweep_fails_13", [{"n": 8}, {"n": 13}])
    job_id = executor.submit(spec, SweepOptions(configs_per_task=1, retries=1, reference=False))
    assert executor.wait(job_id, 180) == JobStatus.DONE
    job = executor.get(job_id)
    by_name = {t.name: t for t in job.tasks}
    assert by_name["t0000"].state == "done" and by_name["t0000"].attempt == 0
    assert by_name["t0001"].state == "failed" and by_name["t0001"].attempt == 1  # retried once
    assert "size 13 is refused" in by_name["t0001"].reason
    assert any(w.startswith("task t0001 (configs 1) failed after 2 attempts")
               for w in job.warnings), job.warnings
    # both attempts' folders are kept; the finished config is in the bundle
    assert (job.path / "tasks" / "t0001" / "a0" / C.MANIFEST_FILE).is_file()
    assert (job.path / "tasks" / "t0001" / "a1" / C.MANIFEST_FILE).is_file()
    agg = load_bundle(job.path).table(C.TABLE_AGGREGATED)
    assert sorted(agg[C.CONFIG].unique()) == [0]


def test_a_task_that_fails_once_succeeds_on_retry(shared_results: Path,
                                                  executor: SlurmExecutor) -> None:
    spec = _spec("sweep_flaky", [{"n": 8}])
    job_id = executor.submit(spec, SweepOptions(retries=2, reference=False))
    assert executor.wait(job_id, 180) == JobStatus.DONE
    job = executor.get(job_id)
    assert [(t.state, t.attempt) for t in job.tasks] == [("done", 1)]
    retries = json.loads((job.path / C.MANIFEST_FILE).read_text())["sweep"]["retries"]
    assert len(retries) == 1 and retries[0].startswith("task t0000 failed ("), retries
    assert "first attempt fails" in retries[0] and retries[0].endswith("retry 1 of 2")
    assert not load_bundle(job.path).table(C.TABLE_AGGREGATED).empty


def test_cancel_stops_the_array_and_keeps_finished_tasks(shared_results: Path,
                                                         executor: SlurmExecutor) -> None:
    spec = _spec("sweep_sleep", [{"ms": 1}] + [{"ms": 20_000 + i} for i in range(5)])
    job_id = executor.submit(spec, SweepOptions(parallelism=2, retries=2, reference=False))
    job = wait_for(executor, job_id, lambda j: j.tasks[0].state == "done"
                    and any(t.state == "running" for t in j.tasks[1:]), 180)
    executor.cancel(job_id)
    assert executor.wait(job_id, 120) == JobStatus.CANCELLED
    job = executor.get(job_id)
    states = [t.state for t in job.tasks]
    assert states[0] == "done" and set(states[1:]) == {"cancelled"}, states
    assert all(t.attempt == 0 for t in job.tasks)  # a cancel is never retried
    array = job.tasks[0].scheduler_id.split("_")[0]
    left = subprocess.run(["squeue", "--noheader", "--array", "-j", array, "-o", "%i %T"],
                          capture_output=True, text=True, check=False).stdout.strip()
    assert left == "", left  # nothing of the array still pending or running
    bundle = load_bundle(job.path)
    assert bundle.status == JobStatus.CANCELLED
    assert sorted(bundle.table(C.TABLE_AGGREGATED)[C.CONFIG].unique()) == [0]


def test_preempted_task_is_retried(shared_results: Path, executor: SlurmExecutor) -> None:
    """A job of the higher-priority partition "urgent" that needs every CPU of the node makes
    Slurm preempt the sweep's task (PreemptMode=CANCEL in scripts/local_slurm.sh); the
    executor retries it, and the retry runs once the node is free."""
    # 2 runs of 4 s: the task is still running when Slurm preempts it, however loaded the host
    # (with 300 ms runs a loaded CI machine once finished the task first)
    spec = _spec("sweep_sleep", [{"ms": 4000}])
    job_id = executor.submit(spec, SweepOptions(retries=1, reference=False, partition="debug"))
    job = wait_for(executor, job_id, lambda j: j.tasks[0].state == "running", 180)
    cpus = subprocess.run(["sinfo", "--noheader", "-p", "urgent", "-o", "%c"], capture_output=True,
                          text=True, check=True).stdout.split()[0]
    subprocess.run(["sbatch", "--partition=urgent", f"--ntasks={cpus}", "--output=/dev/null",
                    "--wrap", "sleep 3"], check=True, capture_output=True, cwd=shared_results)
    assert executor.wait(job_id, 180) == JobStatus.DONE
    job = executor.get(job_id)
    assert [(t.state, t.attempt) for t in job.tasks] == [("done", 1)]
    assert any(w.startswith("task t0000 preempted") for w in _all_warnings(executor, job_id,
                                                                          job.path)), job.warnings


def _all_warnings(executor: SlurmExecutor, job_id: str, path: Path) -> list[str]:
    """Retry notes of the watch (the job's warnings while it ran are replaced by the merged
    bundle's at the end) and the bundle's warnings."""
    manifest = json.loads((path / C.MANIFEST_FILE).read_text())
    return list(manifest.get("warnings") or []) + list(manifest["sweep"]["retries"])


def test_a_sigint_to_a_running_task_keeps_the_configs_its_worker_measured(
        shared_results: Path, executor: SlurmExecutor) -> None:
    """Issue 37: ``scancel --signal=INT`` reaches the task and its worker; the task's
    KeyboardInterrupt made subprocess SIGKILL the worker 0.25 s later, and the task kept
    nothing. The task now passes the SIGINT on and waits (sweep.task.SigintToWorker): the
    worker ends its attempt cancelled with the whole configs measured before it, and the sweep
    merges them. The task reads cancelled from outside the dashboard, by its SIGINT, with
    what Slurm recorded (COMPLETED: the task ended by itself, not PREEMPTED), not preempted
    (session 25: it read preempted, and was retried where retries were on). Waits for the
    worker's progress events, never a fixed time."""
    from profiling_worker.bundle.schema import partial
    from tests.unit.profiling_worker.test_cancel_sigint import RUNS, SPEC, _config

    configs = len(SPEC["configs"])
    job_id = executor.submit(validate_spec(SPEC), SweepOptions(
        retries=1, reference=False, configs_per_task=configs))
    attempt = executor.get(job_id).path / "tasks" / "t0000" / "a0"
    job = wait_for(executor, job_id, lambda j: _config(attempt) >= 1, 300)
    subprocess.run(["scancel", "--signal=INT", job.tasks[0].scheduler_id], check=True,
                   capture_output=True)
    executor.wait(job_id, 300)
    worker = json.loads((attempt / C.MANIFEST_FILE).read_text())
    assert worker["status"] == "cancelled", worker.get("error")
    record = worker[partial.CONFIGS_KEY]
    assert record["cancelled"].startswith("SIGINT at ")
    bundle = load_bundle(executor.get(job_id).path)
    (task,) = bundle.manifest["sweep"]["tasks"]
    kept = task["kept_configs"]
    assert kept == record["measured"] == list(range(len(kept))), task
    assert 1 <= len(kept) < configs
    assert bundle.table(C.TABLE_RUNS).groupby(C.CONFIG).size().to_dict() == {
        i: RUNS for i in kept}
    (view,) = executor.get(job_id).tasks
    assert (view.state, view.attempt) == ("cancelled", 0), view  # not retried
    assert "SIGINT" in view.reason and "outside the dashboard" in view.reason, view.reason
    assert task["state"] == "cancelled" and task["attempts"] == 1, task
