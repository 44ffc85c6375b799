"""Sweeps without Slurm: submitit's local executor runs the same per-task entry point and the
merge (real cpu-backend tasks), and the pure parts: options, the split, squeue's output, the
task states and the slow-GPU rule."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from app.core.bundle_loader import load_bundle
from app.services import sweep_plan as plan
from app.services.slurm_executor import SlurmExecutor, slurm_available
from app.services.sweep_queue import QueueState, SlurmMissing, parse_squeue, slurm_parameters
from app.services.sweep_tasks import Attempt, decide
from profiling_worker.schema import columns as C
from profiling_worker.schema.manifest import JobStatus
from profiling_worker.schema.spec import validate_spec
from profiling_worker.schema.spec_errors import SpecInvalid
from profiling_worker.sweep_reference import slow_notes, slow_tasks


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
