"""Sweeps without Slurm: submitit's local executor runs the same per-task entry point and the
merge (real cpu-backend tasks), and the pure parts: options, the split, squeue's output, the
task states and the slow-GPU rule."""

from __future__ import annotations

import json
import os
import shlex
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from profiling_worker.bundle.loader import load_bundle
from app.services import sweep_plan as plan
from app.services.job_recovery import mark_interrupted
from app.services.slurm_executor import SUBMITTING, SlurmExecutor, slurm_available
from app.services.sweep_resume import read_record
from app.services.sweep_queue import (QueueState, SlurmMissing, SubmititQueue, parse_squeue,
                                      slurm_parameters)
from app.services.sweep_tasks import GRACE_S, Attempt, decide
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import JobStatus
from profiling_worker.bundle.schema.spec import validate_spec
from profiling_worker.bundle.schema.spec_errors import SpecInvalid
from profiling_worker.sweep.reference import slow_notes, slow_tasks
from tests.sweep_processes import assert_all_gone, task_processes

SWEEP_KERNELS = Path(__file__).resolve().parents[2] / "fixtures" / "kernel_files_sweep"


def test_local_executor_runs_the_tasks_and_merges_one_bundle(tmp_path: Path) -> None:
    spec = validate_spec({"kernels": ["matmul"], "configs": [{"n": 16}, {"n": 32}, {"n": 48}],
                          "runs": 2, "backend": "cpu", "warmup": 0})
    executor = SlurmExecutor(tmp_path, sys.executable, poll_s=0.3)
    job_id = executor.submit(spec, plan.SweepOptions(cluster="local", configs_per_task=2))
    assert executor.wait(job_id, 240) == JobStatus.DONE
    job = executor.get(job_id)
    assert [(t.name, t.state, t.configs) for t in job.tasks] == [
        ("t0000", "done", (0, 1)), ("t0001", "done", (2,))]
    bundle = load_bundle(job.path)
    assert sorted(bundle.table(C.TABLE_AGGREGATED)["n"].unique()) == [16, 32, 48]
    tasks = bundle.manifest["sweep"]["tasks"]
    assert [t["folder"] for t in tasks] == ["tasks/t0000/a0", "tasks/t0001/a0"]
    assert all(t["reference"]["avg_ns"] > 0 and t["node"] for t in tasks)
    assert json.loads((job.path / plan.SWEEP_FILE).read_text())["tasks"][1]["configs"] == [2]
    assert not (job.path / ".disk-reserve").exists()  # freed once the final manifest is written


def test_split_puts_consecutive_configs_in_each_task() -> None:
    assert plan.split_configs(5, 2) == [(0, 1), (2, 3), (4,)]
    assert plan.split_configs(3, 10) == [(0, 1, 2)]
    assert len(plan.split_configs(1000, 1)) == 1000


def test_options_name_each_bad_field() -> None:
    with pytest.raises(SpecInvalid) as err:
        plan.sweep_options({"retries": -1, "partition": "a b", "parallel": 3})
    fields = sorted(e.field for e in err.value.errors)
    assert fields == ["slurm.parallel", "slurm.partition", "slurm.retries"]
    assert plan.sweep_options({"gpu_type": "h200", "retries": 2}).retries == 2


def test_gpu_sweeps_ask_for_gres_with_the_type() -> None:
    gpu = validate_spec({"kernels": ["matmul"], "configs": [{"n": 64}], "backend": "cupti"})
    params = slurm_parameters(gpu, plan.SweepOptions(gpu_type="h200", gpus_per_task=1,
                                                     partition="gpu", parallelism=4), "kprof-x")
    assert params["gres"] == "gpu:h200:1" and params["partition"] == "gpu"
    assert params["array_parallelism"] == 4
    cpu = validate_spec({"kernels": ["matmul"], "configs": [{"n": 64}], "backend": "cpu"})
    assert "gres" not in slurm_parameters(cpu, plan.SweepOptions(), "kprof-x")
    types = plan.per_gpu_type(plan.SweepOptions(), ["a100", "h200"])
    assert [o.gpu_type for o in types] == ["a100", "h200"]


def test_squeue_lines_with_a_pending_range_are_expanded() -> None:
    text = "41_2|RUNNING|node7|None\n41_[3-5,8%2]|PENDING|(null)|JobArrayTaskLimit\n"
    states = parse_squeue(text)
    assert states["41_2"] == QueueState("RUNNING", "node7", "")
    assert sorted(states) == ["41_2", "41_3", "41_4", "41_5", "41_8"]
    assert states["41_8"].reason == "JobArrayTaskLimit"


def test_states_without_a_result_follow_the_scheduler(tmp_path: Path) -> None:
    attempt = Attempt(tmp_path, "7_0", submitted=0.0)
    assert decide(attempt, QueueState("PENDING"), False, now=1.0)[0] == "pending"
    assert decide(attempt, QueueState("RUNNING", "n3"), False, now=1.0) == ("running", "")
    assert attempt.node == "n3"
    assert decide(attempt, QueueState("PREEMPTED"), False, now=1.0)[0] == "preempted"
    assert decide(attempt, QueueState("NODE_FAIL"), False, now=1.0) == (
        "failed", "Slurm ended the task: NODE_FAIL")
    assert decide(attempt, QueueState("CANCELLED"), True, now=1.0)[0] == "cancelled"
    # gone from squeue without a result: pending for the grace time, then failed
    assert decide(attempt, None, False, now=2.0)[0] == "pending"
    state, reason = decide(attempt, None, False, now=100.0)
    assert state == "failed" and "without a result" in reason


def _ref(avg: float, half: float = 1.0) -> dict[str, float]:
    return {"avg_ns": avg, "ci95_lower_ns": avg - half, "ci95_upper_ns": avg + half, "runs": 10}


def test_a_gpu_slower_than_its_peers_beyond_their_spread_is_flagged() -> None:
    """The rule on given reference times (the rule, not a measurement)."""
    entries = [{"task": f"t{i}", "gpu_model": "H200", "reference": _ref(v)}
               for i, v in enumerate((100.0, 101.0, 99.0, 100.5, 130.0))]
    entries.append({"task": "other", "gpu_model": "A100", "reference": _ref(300.0)})
    flagged = slow_tasks(entries)
    assert list(flagged) == ["t4"] and flagged["t4"]["peers"] == 4
    # within the spread of noisy peers: not flagged; too few peers of a model: not judged
    noisy = [{"task": f"t{i}", "gpu_model": "H200", "reference": _ref(v, 20.0)}
             for i, v in enumerate((100.0, 101.0, 99.0, 130.0))]
    assert slow_tasks(noisy) == {}
    assert slow_tasks(entries[:2]) == {}
    notes = slow_notes(flagged, {"t4": {"configs": [7, 8], "node": "n4", "gpu_uuid": "GPU-1"}})
    assert [n["config"] for n in notes] == [7, 8] and notes[0]["check"] == "slow_gpu"
    assert "ran on a slow GPU: task t4 on n4 (GPU-1)" in notes[0]["message"]


def test_a_slow_task_of_the_cpu_backend_names_the_host_not_a_gpu() -> None:
    """On the cpu backend the reference kernel ran on the host's CPU: host contention is not
    reported as a slow GPU."""
    entries = [{"task": f"t{i}", "gpu_model": None, "reference": _ref(v)}
               for i, v in enumerate((100.0, 101.0, 99.0, 100.5, 130.0))]
    notes = slow_notes(slow_tasks(entries), {"t4": {"configs": [3], "node": "n4",
                                                    "gpu_uuid": None}}, on_gpu=False)
    (message,) = [n["message"] for n in notes]
    assert "GPU" not in message and "ran on a slow or busy host: task t4 on n4" in message


def test_without_slurm_a_sweep_is_refused_with_the_reason(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no sbatch, squeue, scancel
    spec = validate_spec({"kernels": ["matmul"], "configs": [{"n": 16}], "backend": "cpu"})
    executor = SlurmExecutor(tmp_path / "results", sys.executable)
    with pytest.raises(SlurmMissing, match="sbatch is not on PATH"):
        executor.submit(spec, plan.SweepOptions())
    assert slurm_available() == "Slurm commands not found here: sbatch, squeue, scancel"
    (folder,) = (tmp_path / "results").iterdir()
    manifest = json.loads((folder / C.MANIFEST_FILE).read_text())
    assert manifest["status"] == "failed" and manifest["error"]["kind"] == "slurm_missing"
    assert executor.snapshot() == []  # nothing left queued


def test_kernel_sweep_runs_a_spec_head_less(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                            ) -> None:
    from app import sweep_cli

    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"kernels": ["matmul"], "configs": [{"n": 16}, {"n": 32}],
                                "runs": 2, "backend": "cpu", "warmup": 0}), encoding="utf-8")
    assert sweep_cli.main([str(spec), "--results", str(tmp_path / "res"), "--retries", "-1"]) == 2
    assert "slurm.retries" in capsys.readouterr().err
    code = sweep_cli.main([str(spec), "--results", str(tmp_path / "res"), "--local",
                           "--no-reference", "--poll", "0.5"])
    out = capsys.readouterr().out
    assert code == 0, out
    (bundle,) = (tmp_path / "res").iterdir()
    assert f"done: {bundle}" in out
    assert sorted(load_bundle(bundle).table(C.TABLE_AGGREGATED)["n"].unique()) == [16, 32]


class _GatedExecutor(SlurmExecutor):
    """The executor with a scheduler whose submission waits until ``gate`` opens (the local
    executor's real submission then runs): the state while sbatch is still busy. A dashboard
    stopped meanwhile never hears back (nothing is submitted)."""

    gate = threading.Event()

    def _queue(self, spec, options, folder):  # type: ignore[no-untyped-def]
        real = super()._queue(spec, options, folder)
        submit = real.submit

        def gated(folders: list[Path], name: str) -> list[str]:
            assert self.gate.wait(60)
            return [] if self._stopped else submit(folders, name)

        real.submit = gated  # type: ignore[method-assign]
        return real


def test_submit_returns_before_the_array_is_submitted_and_a_cancel_meanwhile_holds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Tasks that sleep 10 minutes: a cancel can only find them running, however late it lands
    # (two matmul tasks of n=16 finished before it on a loaded machine and ended 'done').
    monkeypatch.setenv("KPROF_KERNEL_DIRS", str(SWEEP_KERNELS))
    spec = validate_spec({"kernels": ["sweep_sleep"], "configs": [{"ms": 600_000}, {"ms": 600_001}],
                          "runs": 2, "backend": "cpu", "warmup": 0})
    executor = _GatedExecutor(tmp_path, sys.executable, poll_s=0.3)
    executor.gate.clear()
    job_id = executor.submit(spec, plan.SweepOptions(cluster="local", reference=False))
    job = executor.get(job_id)
    assert job.active and job.stage == SUBMITTING  # the sidebar got its id at once
    assert [(t.state, t.stage, t.scheduler_id) for t in job.tasks] == [
        ("pending", SUBMITTING, "")] * 2
    executor.cancel(job_id)  # the Cancel button, while the submission is still under way
    executor.gate.set()
    # generous: on a busy 2-core machine the cancelled tasks' processes end slowly
    assert executor.wait(job_id, 600) == JobStatus.CANCELLED, executor.get(job_id)
    # the tasks' states follow their processes' end, a poll later (on a loaded machine they
    # still read 'running' when the job already reads cancelled): wait for that event
    deadline = time.monotonic() + 300
    job = executor.get(job_id)
    while [t.state for t in job.tasks] != ["cancelled"] * 2:
        assert time.monotonic() < deadline, f"tasks not cancelled within 300 s: {job.tasks}"
        time.sleep(0.3)
        job = executor.get(job_id)
    assert all(t.scheduler_id for t in job.tasks)
    record = read_record(job.path)
    assert record.cancelled and sorted(record.attempts) == [0, 1]
    assert_all_gone(job.path)  # issue 41: no process of its tasks runs on
    executor.shutdown()


def test_a_sweep_that_cannot_be_rebuilt_ends_interrupted_saying_why(tmp_path: Path) -> None:
    spec = validate_spec({"kernels": ["matmul"], "configs": [{"n": 16}], "backend": "cpu"})
    executor = _GatedExecutor(tmp_path, sys.executable, poll_s=0.3)
    executor.gate.clear()
    job_id = executor.submit(spec, plan.SweepOptions(cluster="local", reference=False))
    executor.shutdown()  # the dashboard stops before sbatch answered
    executor.gate.set()
    executor._threads[0].join(30)
    sweep = tmp_path / job_id
    assert mark_interrupted(tmp_path) == []  # a sweep is not the job manager's to end
    (sweep / plan.SWEEP_FILE).write_text("{", encoding="utf-8")  # cut short
    assert SlurmExecutor(tmp_path, sys.executable).resume() == []
    manifest = json.loads((sweep / C.MANIFEST_FILE).read_text())
    assert manifest["status"] == "interrupted"
    assert "cannot be watched again from its folder: JSONDecodeError" in manifest["error"]["message"]


def test_a_sweep_whose_submission_never_answered_is_submitted_by_the_next_dashboard(
        tmp_path: Path) -> None:
    spec = validate_spec({"kernels": ["matmul"], "configs": [{"n": 16}], "runs": 2,
                          "backend": "cpu", "warmup": 0})
    first = _GatedExecutor(tmp_path, sys.executable, poll_s=0.3)
    first.gate.clear()
    job_id = first.submit(spec, plan.SweepOptions(cluster="local", reference=False))
    first.shutdown()
    first.gate.set()
    first._threads[0].join(30)
    nxt = SlurmExecutor(tmp_path, sys.executable, poll_s=0.3)
    assert nxt.resume() == [job_id]
    assert nxt.wait(job_id, 240) == JobStatus.DONE
    assert [(t.state, t.attempt) for t in nxt.get(job_id).tasks] == [("done", 0)]
    assert not load_bundle(tmp_path / job_id).table(C.TABLE_AGGREGATED).empty


def test_a_local_task_left_running_is_followed_by_its_process_after_a_restart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The task runs longer than the grace time (sweep_tasks.GRACE_S) after the restart: it is
    known by its pid, not failed for missing from the new executor's submitit jobs."""
    monkeypatch.setenv("KPROF_KERNEL_DIRS", str(SWEEP_KERNELS))
    spec = validate_spec({"kernels": ["sweep_sleep"], "configs": [{"ms": 14_000}], "runs": 2,
                          "backend": "cpu", "warmup": 0})
    first = SlurmExecutor(tmp_path, sys.executable, poll_s=0.3)
    job_id = first.submit(spec, plan.SweepOptions(cluster="local", reference=False, retries=0))
    deadline = time.monotonic() + 120
    while first.get(job_id).tasks[0].state != "running":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    first.shutdown()  # the dashboard stops; the task's process runs on
    nxt = SlurmExecutor(tmp_path, sys.executable, poll_s=0.3)
    assert nxt.resume() == [job_id]
    # Through the grace time (a task unknown to the scheduler fails past it) the task is never
    # failed; whether it still runs at the end depends on the machine's load, so not asserted.
    past_grace = time.monotonic() + GRACE_S + 1
    while time.monotonic() < past_grace:
        assert nxt.get(job_id).tasks[0].state != "failed", nxt.get(job_id).tasks[0]
        time.sleep(0.2)  # polling interval, not a correctness wait
    assert nxt.wait(job_id, 300) == JobStatus.DONE, nxt.get(job_id).tasks
    assert [(t.state, t.attempt) for t in nxt.get(job_id).tasks] == [("done", 0)]



#: A head-less sweep in another process: submits a short local sweep, says its id once its
#: task runs, then waits to be killed (as a kernel-sweep killed mid-sweep).
_OTHER_SWEEP = """
import sys, time
from pathlib import Path
from app.services.slurm_executor import SlurmExecutor
from app.services.sweep_plan import SweepOptions
from profiling_worker.bundle.schema.spec import validate_spec
ex = SlurmExecutor(Path(sys.argv[1]), sys.executable, poll_s=0.3)
spec = validate_spec({"kernels": ["sweep_sleep"], "configs": [{"ms": 3000}], "runs": 2,
                      "backend": "cpu", "warmup": 0})
job_id = ex.submit(spec, SweepOptions(cluster="local", reference=False, retries=0))
while ex.get(job_id).tasks[0].state != "running":
    time.sleep(0.1)
print(job_id, flush=True)
time.sleep(600)
"""


def test_a_sweep_that_appears_after_the_start_is_adopted_when_its_watcher_dies(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """resume() at the server's start saw no sweep; keep_resuming() looks again, so a sweep a
    kernel-sweep started later and then died with is watched and merged here (it stayed
    ``running`` until a restart before)."""
    import subprocess

    monkeypatch.setenv("KPROF_KERNEL_DIRS", str(SWEEP_KERNELS))
    executor = SlurmExecutor(tmp_path, sys.executable, poll_s=0.3)
    assert executor.resume() == []
    executor.keep_resuming(every_s=0.5)
    other = subprocess.Popen([sys.executable, "-c", _OTHER_SWEEP, str(tmp_path)],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout is not None
        job_id = other.stdout.readline().strip()
        assert job_id, "the other process submitted nothing"
    finally:
        other.kill()  # its watch lock goes with it; its task runs on
        other.wait(60)
    deadline = time.monotonic() + 240
    while executor.get(job_id) is None or executor.get(job_id).watched_by:
        assert time.monotonic() < deadline, f"{job_id} not adopted: {executor.get(job_id)}"
        time.sleep(0.2)
    assert executor.wait(job_id, 300) == JobStatus.DONE, executor.get(job_id)
    assert json.loads((tmp_path / job_id / C.MANIFEST_FILE).read_text())["status"] == "done"
    executor.shutdown()


def test_a_disk_full_mid_merge_ends_the_sweep_failed_on_disk(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk fills while the sweep runs: the merge fails for space, and so does every
    manifest write until the sweep's disk reserve is deleted. The sweep ends ``failed`` in its
    manifest, not ``running`` (before: a sweep had no reserve, so its final write failed too)."""
    import errno

    from app.services import job_book, sweep_watch
    from app.services.job_recovery import RESERVE_FILE

    spec = validate_spec({"kernels": ["matmul"], "configs": [{"n": 16}], "runs": 2,
                          "backend": "cpu", "warmup": 0})
    executor = SlurmExecutor(tmp_path, sys.executable, poll_s=0.3)
    job_id = executor.submit(spec, plan.SweepOptions(cluster="local", reference=False))
    reserve = tmp_path / job_id / RESERVE_FILE
    had_reserve = reserve.is_file()  # the space the full disk can give back
    real_update = job_book.update_manifest

    def full_disk(*args, **kwargs):  # type: ignore[no-untyped-def]
        if had_reserve and not reserve.exists():
            return real_update(*args, **kwargs)
        raise OSError(errno.ENOSPC, "No space left on device")

    def merge_without_space(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(job_book, "update_manifest", full_disk)
    monkeypatch.setattr(sweep_watch, "merge_sweep", merge_without_space)
    assert executor.wait(job_id, 600) == JobStatus.FAILED, executor.get(job_id)
    executor.shutdown()
    manifest = json.loads((tmp_path / job_id / C.MANIFEST_FILE).read_text())
    assert manifest["status"] == "failed", f"the manifest says {manifest['status']}"
    assert "No space left on device" in manifest["error"]["message"]


def test_an_outside_scancel_is_cancelled_not_preempted_nor_retried(tmp_path: Path) -> None:
    """Issue 41: scancel run on the array outside the dashboard was retried, and its running
    tasks (their workers end 'cancelled' on SIGTERM) were labelled 'preempted'. Slurm says
    CANCELLED for a scancel and PREEMPTED for a preemption."""
    from profiling_worker.bundle.schema.manifest import write_manifest
    from app.services.sweep_tasks import RETRIED

    pending = Attempt(tmp_path / "never-started", "7_0", submitted=0.0)
    assert decide(pending, QueueState("CANCELLED"), False, now=1.0) == (
        "cancelled", "cancelled outside the dashboard (scancel): not retried")
    ran = tmp_path / "ran"
    ran.mkdir()
    write_manifest(ran, {"job_id": "ran", "status": "cancelled"})  # its worker got SIGTERM
    running = Attempt(ran, "7_1", submitted=0.0)
    state, reason = decide(running, QueueState("CANCELLED", "n1"), False, now=1.0)
    assert (state, reason) == ("cancelled", "cancelled outside the dashboard (scancel): "
                                            "not retried") and state not in RETRIED
    assert decide(running, QueueState("PREEMPTED", "n1"), False, now=1.0)[0] == "preempted"


def test_a_sweep_not_resumed_for_the_same_reason_is_logged_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The scan retries a sweep it cannot watch every SCAN_S; it logged "not resumed" each
    time (every 5 s for as long as Slurm was missing). Now once per reason."""
    executor = SlurmExecutor(tmp_path, sys.executable)
    for _ in range(3):
        executor._say_not_resumed("20261205-000000-matmul-0001", "sbatch not found")
    executor._say_not_resumed("20261205-000000-matmul-0001", "squeue timed out")
    lines = [line for line in capsys.readouterr().err.splitlines() if "not resumed" in line]
    assert len(lines) == 2 and "sbatch not found" in lines[0] and "squeue" in lines[1], lines
    executor.shutdown()


def _python_ignoring_sigint(tmp_path: Path) -> str:
    """A worker Python whose processes ignore SIGINT (the disposition is inherited through
    exec and by the worker): submitit's task and the worker it starts never act on a SIGINT,
    and submitit's controller SIGKILLs its task a second after passing one on, which orphans
    the worker (a task still starting, or too slow on a loaded machine, loses it the same
    way)."""
    wrapper = tmp_path / "python-ignoring-sigint"
    wrapper.write_text(f"#!/bin/sh\ntrap '' INT\nexec {shlex.quote(sys.executable)} \"$@\"\n")
    wrapper.chmod(0o755)
    return str(wrapper)


def _cancel_when_running(executor: SlurmExecutor, job_id: str, ready: Callable[[], bool]) -> None:
    """Cancel once ``ready()`` (the task has reached the stage to cancel it in), waiting for
    it with a generous bound."""
    deadline = time.monotonic() + 300
    while not ready():
        assert time.monotonic() < deadline, (f"the task did not reach its stage within 300 s: "
                                             f"{executor.get(job_id)}")
        time.sleep(0.05)
    executor.cancel(job_id)


def _stubborn_sweep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                    kernel: str) -> tuple[SlurmExecutor, str, Path]:
    """A local one-task sweep of ``kernel`` (10 minutes) whose task Python ignores SIGINT: the
    executor, the sweep's id and its folder."""
    monkeypatch.setenv("KPROF_KERNEL_DIRS", str(SWEEP_KERNELS))
    spec = validate_spec({"kernels": [kernel], "configs": [{"ms": 600_000}], "runs": 1,
                          "backend": "cpu", "warmup": 0})
    executor = SlurmExecutor(tmp_path / "res", sys.executable, poll_s=0.3)
    job_id = executor.submit(spec, plan.SweepOptions(
        cluster="local", reference=False, worker_python=_python_ignoring_sigint(tmp_path)))
    return executor, job_id, tmp_path / "res" / job_id


@pytest.mark.parametrize("when", ["starting", "worker running"])
def test_a_cancel_reaches_a_local_task_that_ignores_sigint_and_its_orphaned_worker(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, when: str) -> None:
    """Issue 41: the local queue sent one SIGINT to submitit's controller (and the watcher one
    more): a task that did not act on it (still starting, slow on a loaded machine, or, here,
    ignoring it) lost the cancel; the controller SIGKILLed it or died first, and its worker
    ran on, orphaned, while the sweep read ``cancelled`` (before the fix the "worker running"
    case left the task and the worker alive 300 s after the cancel). Now the cancel is sent to
    the task's process group on every poll, SIGTERM after SIGINT, whenever it lands: while
    submitit's processes are still starting, or once the worker runs (then SIGTERM ends it,
    and the task says so)."""
    executor, job_id, sweep = _stubborn_sweep(tmp_path, monkeypatch, "sweep_sleep")
    started: dict[str, Callable[[], bool]] = {
        "starting": lambda: bool(executor.get(job_id).tasks[0].scheduler_id),
        "worker running": lambda: any("profiling_worker run" in a
                                      for a in task_processes(sweep).values())}
    try:
        _cancel_when_running(executor, job_id, started[when])
        assert executor.wait(job_id, 600) == JobStatus.CANCELLED, executor.get(job_id)
        assert_all_gone(sweep)
        (task,) = executor.get(job_id).tasks
        assert task.state == "cancelled", task
        if when == "worker running":  # it ignored SIGINT: SIGTERM stopped it
            assert "SIGTERM" in task.reason, task
    finally:
        executor.shutdown()
        assert_all_gone(sweep)


def test_a_local_task_deaf_to_sigint_and_sigterm_is_killed_and_named_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The end of the cancel's ladder: a worker that ignores SIGINT and SIGTERM (a kernel stuck
    in code that masks them) is SIGKILLed with its process group, and its task says so."""
    executor, job_id, sweep = _stubborn_sweep(tmp_path, monkeypatch, "sweep_deaf")
    try:
        _cancel_when_running(executor, job_id, lambda: any(sweep.glob("tasks/*/*/deaf.ready")))
        assert executor.wait(job_id, 600) == JobStatus.CANCELLED, executor.get(job_id)
        assert_all_gone(sweep)
        (task,) = executor.get(job_id).tasks
        assert task.state == "cancelled" and "SIGKILL" in task.reason, task
        manifest = json.loads((sweep / C.MANIFEST_FILE).read_text())
        assert "SIGKILL" in manifest["sweep"]["tasks"][0]["reason"], manifest["sweep"]["tasks"]
    finally:
        executor.shutdown()
        assert_all_gone(sweep)


def test_a_task_that_finished_after_the_cancel_is_cancelled_not_done(tmp_path: Path) -> None:
    """Issue 41: tasks whose cancel was lost ran on and ended ``done`` after the cancel, and
    were merged. A worker's ``finished_at`` after the cancel (to the second) means it ran on
    through it; one that finished before, or in the same second, is done."""
    from profiling_worker.bundle.schema.manifest import write_manifest

    for name, finished in (("before", "2026-12-05T10:00:04+00:00"),
                           ("same", "2026-12-05T10:00:05+00:00"),
                           ("after", "2026-12-05T10:00:09+00:00")):
        (tmp_path / name).mkdir()
        write_manifest(tmp_path / name, {"job_id": name, "status": "done",
                                         "finished_at": finished})
    cancel = "2026-12-05T10:00:05+00:00"
    ended = QueueState("COMPLETED")
    assert decide(Attempt(tmp_path / "before", "1"), ended, True, cancelled_at=cancel) == (
        "done", "")
    assert decide(Attempt(tmp_path / "same", "2"), ended, True, cancelled_at=cancel)[0] == "done"
    state, reason = decide(Attempt(tmp_path / "after", "3"), ended, True, cancelled_at=cancel)
    # both times as a person reads them (issue 37: the note showed ISO 8601)
    assert state == "cancelled" and "after the cancel at 10:00:05 UTC" in reason, reason
    assert "finished at 10:00:09 UTC" in reason and "T10:" not in reason, reason
    # a cancel whose time is not known (given before a restart): the manifest decides
    assert decide(Attempt(tmp_path / "after", "3"), ended, True)[0] == "done"


def test_a_local_task_runs_in_its_controllers_session_with_submitits_environment(
        tmp_path: Path) -> None:
    """The local executor that starts each controller in a new session (so a cancel reaches
    the whole task) keeps what submitit's own gives the task: its job id, and
    CUDA_VISIBLE_DEVICES set to its GPUs (as Slurm's --gres does)."""
    from app.services.local_tasks import GroupLocalExecutor

    executor = GroupLocalExecutor(folder=tmp_path, python=sys.executable)
    executor.update_parameters(timeout_min=5, gpus_per_node=1)
    job = executor.submit(lambda: (os.getsid(0), os.getpgid(0),
                                   os.environ["SUBMITIT_LOCAL_JOB_ID"],
                                   os.environ["CUDA_VISIBLE_DEVICES"]))
    deadline = time.monotonic() + 300
    while not job.done():
        assert time.monotonic() < deadline, f"the task did not end within 300 s: {job.state}"
        time.sleep(0.2)
    session, group, job_id, gpus = job.result()
    assert session == group == int(job.job_id) and job_id == job.job_id, job.result()
    assert gpus == "0"


def test_a_failed_scancel_is_made_again_and_a_taken_one_is_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 41 on Slurm: the watcher sends the cancel on every poll until the tasks end. A
    scancel that failed (slurmctld busy or down: scancel exits 1) is made again; one that
    scancel took is not repeated (Slurm itself SIGKILLs a task that outlives SIGTERM). Here a
    scancel on PATH that records its calls and fails while ``down`` exists."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls, down = tmp_path / "calls", tmp_path / "down"
    scancel = bin_dir / "scancel"
    scancel.write_text(f'#!/bin/sh\necho "$@" >> {shlex.quote(str(calls))}\n'
                       f'test ! -e {shlex.quote(str(down))}\n')
    scancel.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    queue = SubmititQueue("slurm", tmp_path / ".submitit", sys.executable, {})
    down.touch()
    queue.cancel(["41_0", "41_1"])  # slurmctld down: not taken
    down.unlink()
    queue.cancel(["41_0", "41_1"])  # made again, taken
    queue.cancel(["41_1"])  # the next poll: not sent again
    queue.cancel(["57_0"])  # a new array (a retry submitted before the cancel)
    assert calls.read_text().splitlines() == ["41", "41", "57"]


PARTIAL_KERNELS = Path(__file__).resolve().parents[2] / "fixtures" / "kernel_files_partial"


def test_a_task_that_kept_some_configs_gives_them_to_the_sweep(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``raise_at_3`` raises at n=3: the task of n=3, 4 ends failed with n=4 measured (the
    worker's partial record), is retried once and fails the same way; the sweep keeps n=4 from
    its last attempt beside the done task's n=1 and n=2, and records n=3 as not measured with
    the kernel's error, as a partial job does (so the gate does not judge it as complete)."""
    from profiling_worker.bundle.schema import partial

    monkeypatch.setenv("KPROF_KERNEL_DIRS", str(PARTIAL_KERNELS))
    spec = validate_spec({"kernels": ["raise_at_3"], "runs": 2, "backend": "cpu", "warmup": 0,
                          "configs": [{"n": 1}, {"n": 2}, {"n": 3}, {"n": 4}]})
    executor = SlurmExecutor(tmp_path, sys.executable, poll_s=0.3)
    job_id = executor.submit(spec, plan.SweepOptions(cluster="local", configs_per_task=2,
                                                     retries=1))
    assert executor.wait(job_id, 300) == JobStatus.DONE
    bundle = load_bundle(executor.get(job_id).path)
    assert sorted(bundle.table(C.TABLE_AGGREGATED)["n"].unique()) == [1, 2, 4]
    record = bundle.manifest[partial.CONFIGS_KEY]
    assert record["measured"] == [0, 1, 3] and record["total"] == 4
    [missing] = record["not_measured"]
    assert missing["config"] == 2 and "size 3 is refused by this kernel" in missing["why"]
    assert bundle.manifest[partial.PARTIAL_KEY] == [partial.note_of(record)]
    tasks = bundle.manifest["sweep"]["tasks"]
    assert [(t["task"], t["state"], t["attempts"]) for t in tasks] == [
        ("t0000", "done", 1), ("t0001", "failed", 2)]
    assert tasks[1]["kept_configs"] == [3]  # n=4, the sweep's config 3
    assert [r["config"] for r in bundle.manifest["sweep"]["configs"]] == [0, 1, 3]


def test_a_cancel_of_a_local_sweep_keeps_the_configs_its_running_task_measured(
        tmp_path: Path) -> None:
    """Issue 37: submitit passes the cancel's SIGINT on to the task, whose KeyboardInterrupt
    made subprocess SIGKILL its worker 0.25 s later, while the worker wrote the configs it had
    measured: the sweep kept nothing of the task. The task now passes the SIGINT on to its
    worker and waits (sweep.task.SigintToWorker): the worker's whole configs measured before the
    cancel are merged (kept_configs), as a local job's Cancel keeps them. Waits for the
    worker's progress events, never a fixed time."""
    from profiling_worker.bundle.schema import partial
    from tests.unit.profiling_worker.test_cancel_sigint import RUNS, SPEC, _config

    spec = validate_spec(SPEC)
    executor = SlurmExecutor(tmp_path, sys.executable, poll_s=0.3)
    job_id = executor.submit(spec, plan.SweepOptions(cluster="local", reference=False,
                                                     configs_per_task=len(SPEC["configs"])))
    attempt = executor.get(job_id).path / "tasks" / "t0000" / "a0"
    try:
        _cancel_when_running(executor, job_id, lambda: _config(attempt) >= 1)
        assert executor.wait(job_id, 600) == JobStatus.CANCELLED, executor.get(job_id)
    finally:
        executor.shutdown()
        assert_all_gone(executor.get(job_id).path)
    bundle = load_bundle(executor.get(job_id).path)
    (task,) = bundle.manifest["sweep"]["tasks"]
    kept = task["kept_configs"]
    assert kept == list(range(len(kept))) and 1 <= len(kept) < len(SPEC["configs"]), task
    assert bundle.manifest[partial.CONFIGS_KEY]["measured"] == kept
    runs = bundle.table(C.TABLE_RUNS)
    assert runs.groupby(C.CONFIG).size().to_dict() == {i: RUNS for i in kept}
