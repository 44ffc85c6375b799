"""The stopping rule of runs "auto" (profiling_worker/bundle/stats/adaptive.py): replayed on the per-run
durations of a recorded H200 CUPTI job, and run for real on the cpu backend (host wall-clock)."""

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from profiling_worker.bundle.stats import adaptive
from profiling_worker.backends import cpu
from profiling_worker.catalog.registry import load_registry, make_body
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.intervals import ci95_half_width
from profiling_worker.bundle.schema.run_target import RunTarget
from profiling_worker.bundle.schema.spec import validate_spec
from tests.scenarios import scenario_dir

REPO = Path(__file__).resolve().parents[3]
#: fp16 matmul n = 256, 1024, 8192 on the H200, 30 CUPTI runs each (RSD 3.3, 2.2, 0.41 %).
RECORDED = scenario_dir("h200-cupti-stability") / "tables" / "runs.parquet"


def recorded_runs() -> dict[int, list[float]]:
    runs = pd.read_parquet(RECORDED)
    return {int(c): g.sort_values(C.RUN)[C.VALUE].tolist() for c, g in runs.groupby(C.CONFIG)}


class Replay:
    """measure() over recorded runs; the clock advances by each run's recorded duration plus a
    fixed per-run cost, so the budget is spent as on the device."""

    def __init__(self, per_config: dict[int, list[float]], overhead_s: float = 0.01):
        self.per_config, self.overhead_s = per_config, overhead_s
        self.taken = {c: 0 for c in per_config}
        self.now = 0.0

    def clock(self) -> float:
        return self.now

    def measure(self, config: int, runs: int) -> dict[str, list[float]]:
        first = self.taken[config]
        values = self.per_config[config][first:first + runs]
        assert len(values) == runs, "the rule asked for more runs than max_runs allows"
        self.taken[config] += runs
        self.now += sum(v * 1e-9 + self.overhead_s for v in values)
        return {"fp16": values}


def test_rel_ci95_is_the_student_t_half_width_over_the_mean():
    values = recorded_runs()[1][:7]
    expected = 100 * ci95_half_width(np.std(values, ddof=1), 7) / np.mean(values)
    assert adaptive.rel_ci95_pct(values) == pytest.approx(float(expected))
    assert math.isinf(adaptive.rel_ci95_pct(values[:1]))
    assert adaptive.rel_ci95_pct([0.0, 0.0]) == 0.0


def test_replayed_h200_runs_stop_quiet_configs_early_and_spend_on_noisy_ones():
    target = RunTarget(rel_ci95_pct=2.0, min_runs=5, max_runs=30, budget_s=10.0)
    replay = Replay(recorded_runs())
    states = adaptive.run_adaptive(target, 3, replay.measure, replay.clock)
    runs = [s.runs for s in states]
    assert all(target.min_runs <= n <= target.max_runs for n in runs)
    assert runs[2] == target.min_runs  # RSD 0.41 %: 5 runs give a CI95 under 2 %
    assert runs[0] > runs[2]  # RSD 3.3 %: the rule had to add runs
    for s in states:  # every config the budget could reach meets the target
        assert s.width_pct() <= target.rel_ci95_pct
    fixed = sum(v * 1e-9 + replay.overhead_s for c in range(3) for v in recorded_runs()[c])
    assert replay.now < fixed / 2  # half the time of 30 fixed runs each, same target met


def test_a_config_that_cannot_meet_the_target_stops_at_max_runs():
    """n=256's first recorded run took 3072 ns against 2592-2624 after (a first-call outlier):
    30 runs leave its CI95 at 1.2 %, above a 1 % target."""
    target = RunTarget(rel_ci95_pct=1.0, min_runs=5, max_runs=30, budget_s=10.0)
    replay = Replay(recorded_runs())
    rows = adaptive.summary(adaptive.run_adaptive(target, 3, replay.measure, replay.clock),
                            target)["configs"]
    assert (rows[0]["runs"], rows[0]["target_met"], rows[0]["stopped"]) == (30, False,
                                                                            adaptive.AT_MAX)
    assert rows[2]["target_met"] and rows[2]["runs"] == 5


def test_budget_stops_extra_runs_and_the_summary_says_so():
    target = RunTarget(rel_ci95_pct=0.05, min_runs=4, max_runs=30, budget_s=0.3)
    replay = Replay(recorded_runs(), overhead_s=0.01)
    states = adaptive.run_adaptive(target, 3, replay.measure, replay.clock)
    summary = adaptive.summary(states, target)
    rows = summary["configs"]
    assert [r["runs"] for r in rows] == [s.runs for s in states]
    assert not any(r["target_met"] for r in rows)
    assert {r["stopped"] for r in rows} == {adaptive.OUT_OF_BUDGET}
    one_batch = max(s.seconds / s.runs for s in states) * 30
    assert replay.now <= target.budget_s + one_batch
    assert summary["target"] == target.to_json() and "Student-t" in summary["method"]


def test_next_batch_at_most_doubles_and_stays_under_max_runs():
    state = adaptive.ConfigRuns(0, {"a": [1.0, 2.0, 3.0, 4.0]}, seconds=0.4)
    assert adaptive.next_batch(state, RunTarget(rel_ci95_pct=0.5, max_runs=100), 100.0) == 4
    assert adaptive.next_batch(state, RunTarget(rel_ci95_pct=0.5, max_runs=6), 100.0) == 2
    assert adaptive.next_batch(state, RunTarget(rel_ci95_pct=0.5), 0.2) == 2  # 0.1 s a run


def test_cpu_backend_auto_runs_records_per_config_runs_matching_its_table():
    """The cpu backend measures host wall-clock time (not GPU): the rule runs on those values."""
    registry = load_registry()
    spec = validate_spec({"kernels": ["matmul"], "configs": [{"n": 16}, {"n": 128}],
                          "annotations": ["fp32"], "backend": "cpu", "runs": "auto",
                          "run_target": {"rel_ci95_pct": 5.0, "min_runs": 3, "max_runs": 40,
                                         "budget_s": 20}}, registry.kernels)
    collection = cpu.collect(
        spec, lambda k, timed: make_body(registry, k, ("fp32",), "cpu", timed), lambda *a, **k: None)
    auto = collection.backend_info["auto_runs"]
    launches = collection.launches
    assert collection.backend_info["measurement"] == "host wall-clock, not GPU, 1 torch thread"
    for row in auto["configs"]:
        mine = launches[launches[C.CONFIG] == row[C.CONFIG]].sort_values(C.RUN)
        assert mine[C.RUN].tolist() == list(range(row["runs"]))
        assert 3 <= row["runs"] <= 40
        width = adaptive.rel_ci95_pct(mine[C.VALUE].tolist())
        assert row["rel_ci95_pct"] == pytest.approx(width, rel=1e-3)
        assert row["target_met"] == (width <= 5.0)


def test_worker_cli_auto_job_records_auto_runs_and_its_tables_agree(tmp_path):
    import json
    import subprocess
    import sys

    from profiling_worker.bundle.schema.manifest import read_manifest

    job = tmp_path / "auto-job"
    job.mkdir()
    (job / C.SPEC_FILE).write_text(json.dumps({
        "kernels": ["matmul"], "annotations": ["fp32", "fp16"], "configs": [{"n": 32}, {"n": 64}],
        "backend": "cpu", "runs": "auto",
        "run_target": {"rel_ci95_pct": 3.0, "min_runs": 3, "max_runs": 25, "budget_s": 20}}))
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(job)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    manifest = read_manifest(job)
    assert manifest["spec"]["runs"] == "auto" and manifest["spec"]["run_target"]["max_runs"] == 25
    auto = manifest["backend"]["auto_runs"]["configs"]
    agg = pd.read_parquet(job / C.TABLES_DIR / "aggregated.parquet")
    for row in auto:  # both annotations of a config get the config's runs
        assert set(agg[agg[C.CONFIG] == row[C.CONFIG]][C.NUM_RUNS]) == {row["runs"]}
        widest = agg[agg[C.CONFIG] == row[C.CONFIG]]
        half = (widest[C.CI95_UPPER] - widest[C.AVG]) / widest[C.AVG] * 100
        assert row["rel_ci95_pct"] == pytest.approx(float(half.max()), rel=1e-3)


def test_a_split_sweep_records_auto_runs_in_the_sweeps_config_indices(tmp_path):
    """submitit's local executor runs two real cpu tasks of runs "auto"; the merged bundle's
    record numbers configs as the sweep does (each task's own record starts at 0)."""
    import sys

    from app.services import sweep_plan as plan
    from app.services.slurm_executor import SlurmExecutor
    from profiling_worker.bundle.schema.manifest import JobStatus, read_manifest

    # budget_s far above what 4 runs cost: on a loaded host the first torch call alone took
    # 4.7 s, which spent a 10 s budget after the min runs
    spec = validate_spec({"kernels": ["matmul"], "annotations": ["fp32"], "warmup": 0,
                          "configs": [{"n": 16}, {"n": 32}, {"n": 48}], "backend": "cpu",
                          "runs": "auto", "run_target": {"rel_ci95_pct": 0.01, "min_runs": 2,
                                                         "max_runs": 4, "budget_s": 600}})
    executor = SlurmExecutor(tmp_path, sys.executable, poll_s=0.3)
    job_id = executor.submit(spec, plan.SweepOptions(cluster="local", configs_per_task=2))
    assert executor.wait(job_id, 240) == JobStatus.DONE
    auto = read_manifest(executor.get(job_id).path)["backend"]["auto_runs"]
    assert [r[C.CONFIG] for r in auto["configs"]] == [0, 1, 2]
    assert [r["runs"] for r in auto["configs"]] == [4, 4, 4] and auto["budget_per_task"]


def test_a_config_that_gives_no_values_is_closed_not_retried_until_the_budget():
    """An annotation that launched nothing on a config (CUPTI records no kernel): its first
    runs give no values, so the rule has no interval to narrow there."""
    replay = Replay(recorded_runs())
    calls = []

    def measure(config, runs):
        calls.append(config)
        return {} if config == 1 else replay.measure(config, runs)

    target = RunTarget(rel_ci95_pct=2.0, min_runs=5, max_runs=30, budget_s=10.0)
    summary = adaptive.summary(adaptive.run_adaptive(target, 3, measure, replay.clock), target)
    assert calls.count(1) == 1
    assert summary["configs"][1]["stopped"] == adaptive.NO_VALUES
    assert summary["configs"][1]["rel_ci95_pct"] is None and not summary["configs"][1]["target_met"]


@pytest.mark.parametrize("target_pct, runs", [(2.0, [20, 18, 5]), (0.5, [30, 30, 5])])
def test_the_replayed_figures_of_docs_performance(target_pct, runs):
    """docs/performance.md's table: runs taken and kernel time against 30 fixed runs."""
    recorded = recorded_runs()
    target = RunTarget(rel_ci95_pct=target_pct, min_runs=5, max_runs=30, budget_s=10.0)
    replay = Replay(recorded)
    states = adaptive.run_adaptive(target, 3, replay.measure, replay.clock)
    assert [s.runs for s in states] == runs
    kernel = sum(sum(recorded[s.config][:s.runs]) for s in states)
    assert kernel / sum(sum(v) for v in recorded.values()) == pytest.approx(0.17, abs=0.005)
