"""benchmarks/gate_aa.py, the gate's A/A and power study (issue 21): its planted slowdown and
its rates' intervals, on recorded H200 bundles (scenarios in tests/fixtures/bundles); and one
small study on the cpu backend, recorded here with the worker, end to end."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from profiling_worker.bundle.gate.judge import DIFF_PCT, OUTCOME, GateOptions, judge
from profiling_worker.bundle.gate.sides import GateSide
from tests.scenarios import SCENARIOS

REPO = Path(__file__).resolve().parents[3]
BUNDLES = SCENARIOS
_spec = importlib.util.spec_from_file_location("gate_aa", REPO / "benchmarks" / "gate_aa.py")
assert _spec and _spec.loader
aa = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(aa)


def test_a_planted_slowdown_scales_every_run_and_is_found() -> None:
    """The gate pair's baseline against itself slowed by 1 + 2 x 3 %: +6 % exactly, regressed
    in every row (its runs spread 0.4-1 %); the per-run durations moved with the means."""
    base = GateSide.load(BUNDLES / "h200-cupti-gate-base")
    slow = aa.planted(base, 1.06)
    rows = judge(base, slow, GateOptions()).rows
    assert set(rows[OUTCOME]) == {"regressed"} and (rows[DIFF_PCT].round(9) == 6.0).all()
    time = slow.runs[slow.runs["Metric"] == "gpu__time_duration.sum"]["Value"]
    orig = base.runs[base.runs["Metric"] == "gpu__time_duration.sum"]["Value"]
    assert (time / orig).round(12).eq(1.06).all()


def test_rates_carry_the_exact_binomial_interval() -> None:
    from scipy.stats import binomtest

    for k, n in ((0, 40), (1, 40), (38, 40), (40, 40)):
        exact = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
        assert aa.clopper_pearson(k, n) == pytest.approx((exact.low, exact.high), abs=1e-9)


def test_a_small_cpu_study_records_and_analyses(tmp_path: Path) -> None:
    """Three identical cpu jobs give two pairs; every row of each kind is counted once for A/A
    and once planted (the outcomes depend on the host's load, so only the bookkeeping is
    asserted)."""
    lines = aa.record(tmp_path, "cpu", pairs=2, runs=5, budget_s=600, sizes=[32, 64])
    assert [line["status"] for line in lines] == ["done"] * 3
    assert aa.main(["analyse", str(tmp_path), "--json", str(tmp_path / "aa.json")]) == 0
    res = json.loads((tmp_path / "aa.json").read_text())["backends"]["cpu"]
    assert res["pairs"] == 2 and res["planted_factor"] == pytest.approx(1.06)
    kinds = res["kinds"]
    assert kinds["small"]["aa_not_same"]["n"] == 4  # 2 pairs x 2 regions at the first size
    assert kinds["gemm"]["aa_not_same"]["n"] == kinds["memory"]["planted_found"]["n"] == 2
    # disjoint pairs (independent: no job in two pairs): jobs 0-1 only of the three
    assert aa.main(["analyse", str(tmp_path), "--disjoint", "--json", str(tmp_path / "d.json")]) == 0
    res = json.loads((tmp_path / "d.json").read_text())["backends"]["cpu"]
    assert (res["pairs"], res["pairing"]) == (1, "disjoint")
    assert res["kinds"]["small"]["aa_not_same"]["n"] == 2
