"""One population or not (profiling_worker/bundle/schema/populations.py): seeded false-alarm rates on
one-population data (normal, and skewed as GPU timings are), the power on planted modes and
steps, and the recorded H200 runs the gate misread (issue 34)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from profiling_worker.bundle.schema import columns as C, populations as P
from tests.scenarios import SCENARIOS

SIMULATIONS = 150  # per case; a 1 % rate gives more than 5 of 150 with probability < 0.1 %


def _timeline_runs(job: str, n: int) -> np.ndarray:
    runs = pd.read_parquet(SCENARIOS / job / C.TABLES_DIR / f"{C.TABLE_RUNS}.parquet")
    rows = runs[(runs[C.METRIC] == C.GPU_TIME) & (runs["n"] == n)].sort_values(C.RUN)
    return rows[C.VALUE].to_numpy(float)


@pytest.mark.parametrize("shape", ["normal", "lognormal"])
@pytest.mark.parametrize("n", [10, 30, 100])
def test_one_population_is_rarely_called_two(shape: str, n: int) -> None:
    rng = np.random.default_rng(34 + n)
    alarms = 0
    for _ in range(SIMULATIONS):
        x = (rng.normal(1e6, 2e4, n) if shape == "normal"
             else 1e6 * np.exp(rng.normal(0.0, 0.05, n)))  # skewed, 5 % spread
        alarms += not P.check(x).one
    assert alarms <= 5, f"{alarms} of {SIMULATIONS} one-population samples flagged"


def test_a_planted_mode_and_a_planted_step_are_found() -> None:
    rng = np.random.default_rng(36)
    modes = steps = 0
    for _ in range(50):
        x = rng.normal(1e6, 5e3, 30)
        modes += P.check(np.where(rng.random(30) < 0.4, x * 1.05, x)).two_modes
        stepped = x.copy()
        stepped[15:] *= 1.03
        steps += not P.check(stepped).one
    assert modes >= 45 and steps >= 45, (modes, steps)


def test_timer_quanta_and_a_lone_slow_run_are_one_population() -> None:
    x = np.full(30, 6144.0)
    x[::3] = 6176.0  # CUPTI's 32 ns steps: two "modes" 0.5 % apart
    assert P.check(x).one
    y = np.random.default_rng(1).normal(1e6, 2e3, 30)
    y[0] = 1.3e6  # a slow first run is an outlier, not a mode
    assert P.check(y).one


def test_the_timelines_slow_mode_is_named_and_gate_base_is_one_population() -> None:
    slow = P.check(_timeline_runs("h200-cupti-timeline", 8192))
    assert not slow.one and sum(slow.slow) == 61
    assert "61 of 100 runs at 1.13" in slow.describe()
    assert list(np.flatnonzero(slow.slow)[:2]) == [39, 40]  # from run 39 on
    for n in (2048, 4096, 8192):
        assert P.check(_timeline_runs("h200-cupti-gate-base", n)).one, n


def test_too_few_runs_is_said_not_guessed() -> None:
    found = P.check([1.0, 2.0, 3.0])
    assert not found.checked and found.one
    assert found.describe() == f"not checked: 3 run(s), at least {P.MIN_RUNS} needed"
