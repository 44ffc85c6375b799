"""The t-quantile table equals scipy's ``stdtrit`` to the bit, and ``intervals.t975`` gives
scipy's value for every n (from the table or, beyond it, from scipy)."""

import subprocess
import sys

import numpy as np
from scipy.special import stdtrit

from profiling_worker.bundle.schema import intervals
from profiling_worker.bundle.schema.t_table import T975


def test_every_entry_is_scipys_value_to_the_bit() -> None:
    df = np.arange(1, len(T975) + 1, dtype="float64")
    assert len(T975) == 1000
    assert np.array_equal(np.asarray(T975), stdtrit(df, 0.975))


def test_t975_equals_scipy_inside_and_beyond_the_table() -> None:
    n = np.array([2, 3, 10, 30, 100, 1001, 1002, 5000, 10_000, 7.5])
    assert np.array_equal(intervals.t975(n), stdtrit(n - 1, 0.975))


def test_t975_is_zero_below_two_runs_and_for_missing_counts() -> None:
    assert intervals.t975(np.array([0.0, 1.0, np.nan, 2.0])).tolist() == [
        0.0, 0.0, 0.0, float(T975[0])]


def test_the_worker_run_path_does_not_import_scipy() -> None:
    """A cold worker pays no scipy import for a job's CI95 (0.39 s on the H200)."""
    code = ("import sys, numpy as np; from profiling_worker.bundle.schema import intervals; "
            "from profiling_worker.job import results, runner; "
            "intervals.ci95_bounds([1.0], [0.1], [10], [0.5]); "
            "print('scipy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
