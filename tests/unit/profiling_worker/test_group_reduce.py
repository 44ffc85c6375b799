"""group_reduce gives pandas' groupby sums, means, std devs and medians to the bit (issue 40:
launches_to_runs and aggregate_runs use it in place of a groupby per statistic), on recorded
H200 durations and byte counts grouped as a job groups them (in row order: pandas' reduceat
path) and shuffled (its compensated cython path), with and without missing values, by one
path for a warm job's rows and an import's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from profiling_worker.bundle.stats import group_reduce
from tests.scenarios import scenario_dir

RUNS = [scenario_dir(name) / "tables" / "runs.parquet"
        for name in ("h200-cupti-timeline", "h200-ncu-matmul-rules", "h200-cupti-stability")]


def _equal(a: Any, b: Any) -> bool:
    return bool(np.array_equal(np.asarray(a, float), np.asarray(b, float), equal_nan=True))


def _assert_each_statistic_equals_pandas(values: np.ndarray, codes: np.ndarray) -> None:
    """Every statistic of ``values`` grouped by ``codes`` equals pandas' groupby's, to the bit."""
    g = pd.Series(values).groupby(codes, sort=False)
    total, counts = group_reduce.sums(values, codes)
    low, high = group_reduce.extremes(values, codes)
    assert _equal(total, g.sum()) and _equal(counts, g.count())
    assert _equal(group_reduce.means(total, counts), g.mean())
    assert _equal(group_reduce.stds(values, codes), g.std())
    assert _equal(group_reduce.medians(values, codes), g.median())
    assert _equal(low, g.min()) and _equal(high, g.max())
    assert _equal(group_reduce.distinct(pd.Series(values), codes), g.nunique())


@pytest.mark.parametrize("path", RUNS, ids=lambda p: p.parent.parent.name)
@pytest.mark.parametrize("order", ["rows", "shuffled"])
@pytest.mark.parametrize("missing", [False, True])
def test_each_statistic_equals_pandas_groupby(path: Path, order: str, missing: bool) -> None:
    values = pd.read_parquet(path)["Value"].to_numpy(float)
    rng = np.random.default_rng(7)
    sizes = rng.integers(1, 12, size=len(values))
    codes = np.repeat(np.arange(len(values)), sizes)[:len(values)]  # groups of 1-11 rows
    if order == "shuffled":
        codes = pd.factorize(rng.permutation(codes))[0]  # numbered in first-seen order again
    if missing:
        values = np.where(rng.random(len(values)) < 0.1, np.nan, values)
    _assert_each_statistic_equals_pandas(values, codes)


@pytest.mark.parametrize("order", ["rows", "shuffled"])
def test_an_import_sized_table_takes_the_same_path_and_equals_pandas(order: str) -> None:
    """One path for any size (the second, pandas' own groupby above 1,000 rows, is gone): the
    three recorded runs tables' durations repeated to 120,000 rows in 30,000 groups of 1-7 rows
    and a few of 2,000, 5 % of the values missing, give pandas' statistics to the bit."""
    recorded = np.concatenate([pd.read_parquet(p)["Value"].to_numpy(float) for p in RUNS])
    values = np.resize(recorded, 120_000)
    rng = np.random.default_rng(11)
    sizes = np.r_[np.full(4, 2_000), rng.integers(1, 8, size=len(values))]
    codes = np.repeat(np.arange(len(sizes)), sizes)[:len(values)]
    if order == "shuffled":
        codes = pd.factorize(rng.permutation(codes))[0]
    values = np.where(rng.random(len(values)) < 0.05, np.nan, values)
    _assert_each_statistic_equals_pandas(values, codes)


def test_the_two_sums_differ_where_pandas_differs() -> None:
    """In row order without NaN pandas 3.1 adds with numpy's reduceat, else with Kahan's
    compensation; on these durations the two differ in the last digit, and each is pandas'."""
    values = np.array([8.7, 5.5, 3.1, 4.3, 0.4, 1.3, 6.8, 2.0])
    in_rows = np.array([0, 0, 0, 0, 0, 0, 0, 1])
    shuffled = np.array([0, 0, 0, 0, 0, 0, 1, 0])
    for codes in (in_rows, shuffled):
        assert _equal(group_reduce.sums(values, codes)[0],
                      pd.Series(values).groupby(codes, sort=False).sum())
    # numpy's reduceat adds in row order; Kahan's compensation keeps the lost digits
    plain = np.add.reduceat(values, [0, 7])[0]
    with_a_gap = np.r_[values[:7], np.nan]  # a missing value: the compensated path
    compensated = group_reduce.sums(with_a_gap, np.zeros(8, dtype=int))[0][0]
    assert (plain, compensated) == (30.099999999999998, 30.1)
    assert compensated == pd.Series(with_a_gap).groupby(np.zeros(8, dtype=int)).sum()[0]
    assert group_reduce.sums(values, in_rows)[0][0] == plain


def _factorize_cases() -> list[Any]:
    """Columns as a job's tables hold them (recorded runs: arrow strings, int64) and the kinds
    factorize leaves to pandas (missing values, an object column of 1, 1.0 and True, floats,
    an import's many rows)."""
    runs = pd.read_parquet(RUNS[0])
    text = pd.Series(["b", "a", "b", "c", "a"])
    return [runs[C] for C in ("Annotation", "Metric", "Config", "Run", "Unit")] + [
        text, text.astype(object), pd.Index(text), text.array,
        pd.Series(["b", None, "a", None], dtype=text.dtype),
        pd.Series(["b", None, "a", np.nan], dtype=object),
        pd.Series([1, 1.0, True, "1"], dtype=object),
        pd.Series([2.0, np.nan, 1.0, 2.0]), pd.Series([], dtype="int64"),
        pd.Series(np.arange(5_000) % 7), pd.Series(np.arange(5_000).astype(str))]


@pytest.mark.parametrize("na_sentinel", [False, True])
def test_factorize_numbers_as_pandas_does(na_sentinel: bool) -> None:
    """group_reduce.factorize (a dict of a short column's ints or strings) gives
    pd.factorize's codes and count of values, in both missing-value modes; first_seen gives
    pd.factorize's numbers of int64 keys."""
    for column in _factorize_cases():
        codes, width = group_reduce.factorize(column, na_sentinel=na_sentinel)
        want, uniques = pd.factorize(column, use_na_sentinel=na_sentinel)
        assert codes.dtype == np.int64 and codes.tolist() == want.tolist(), column
        assert width == len(uniques), column
    for keys in (np.array([5, 3, 5, 9, 3]), np.arange(5_000) % 13, np.array([], dtype="int64")):
        assert group_reduce.first_seen(keys).tolist() == pd.factorize(keys)[0].tolist()
