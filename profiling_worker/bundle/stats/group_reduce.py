"""pandas' groupby reductions of a float column, without a groupby: one path for any number of
rows.

A warm job's runs and aggregated tables reduce 40-60 rows into as many groups; each pandas
groupby reduction costs about 0.1 ms there whatever the rows, so a dozen of them were most of
``launches_to_runs`` and ``aggregate_runs`` (issue 40). These give the same floats as pandas
3.1 (pandas/core/groupby/ops.py and the cython kernels of pandas/_libs/groupby.pyx), missing
values (NaN) skipped as they skip them, by the same arithmetic in the same order, so a table of
40 rows and an import of 100,000 take the same path (an earlier second path, pandas' own
groupby above 1,000 rows, is gone: the per-group Python loops it stood in for are too):

- :func:`sums`: where the group numbers never decrease along the rows and no value is NaN,
  numpy's ``add.reduceat`` over each group's run of rows (pandas 3.1's ``_reduceat_aggregate``);
  else Kahan's compensated sum in row order (``group_sum``), one pass over the rows; a group
  with no value sums to 0.0. A mean is that sum over the count (``group_mean``, and reduceat's
  sum over the group's size);
- :func:`stds`: Welford's running mean and sum of squared deviations in row order,
  ``sqrt(M2 / (n - 1))`` (``group_var`` with ddof=1), one pass over the rows; NaN for fewer
  than two values;
- :func:`medians`: the middle value of each group's sorted values, or the mean of the two
  middle ones (``group_median_float64``, as numpy's median), all groups sorted at once; NaN
  for none;
- :func:`extremes`: each group's first and last sorted value; :func:`distinct`: the distinct
  (group, value) pairs counted per group (``nunique``).

Equal to the bit to ``Series.groupby(codes, sort=False)``'s ``sum``, ``mean``, ``std``,
``median``, ``min``, ``max`` and ``nunique`` (tests/unit/profiling_worker/test_group_reduce.py:
recorded values in groups of 1-11 rows, in row order and shuffled, with and without NaN, on
the runs tables of recorded bundles and on 100,000 rows of them).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd


def _kahan(values: np.ndarray, codes: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each group's Kahan sum and count, one pass over the rows in order (``group_sum``: the
    compensation reset to 0 where it turns NaN, an infinite value)."""
    total, compensation, count = [0.0] * k, [0.0] * k, [0] * k
    for v, g in zip(values.tolist(), codes.tolist()):
        if v != v:
            continue
        count[g] += 1
        y = v - compensation[g]
        t = total[g] + y
        c = t - total[g] - y
        compensation[g] = 0.0 if c != c else c
        total[g] = t
    return np.array(total, dtype="float64"), np.array(count, dtype="int64")


def _groups(codes: np.ndarray) -> int:
    """How many groups ``codes`` numbers (0..k-1, first seen order, as
    ``aggregate.group_codes`` numbers them)."""
    return int(codes.max()) + 1 if len(codes) else 0


def sums(values: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(each group's sum, its count of non-NaN values) as pandas 3.1's groupby ``sum`` adds
    them (module docstring).

    Args:
        values: float values, one per row.
        codes: each row's group, 0..k-1 in first seen order.

    Returns:
        float64 sums and int64 counts, one per group.
    """
    values = np.asarray(values, dtype="float64")
    missing = np.isnan(values)
    if len(codes) and not missing.any() and bool(np.all(codes[1:] >= codes[:-1])):
        starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
        total: np.ndarray = np.add.reduceat(values, starts)
        return total, np.bincount(codes).astype("int64")
    return _kahan(values, codes, _groups(codes))


def means(total: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """pandas' group means from :func:`sums`: the sum over the count; NaN for no value."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out: np.ndarray = np.where(counts > 0, total / np.maximum(counts, 1), np.nan)
    return out


def stds(values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """pandas' group standard deviations, ddof=1 (Welford, in row order); NaN for fewer than
    two values. float64, one per group."""
    k = _groups(codes)
    count, mean, m2 = [0] * k, [0.0] * k, [0.0] * k
    for v, g in zip(np.asarray(values, dtype="float64").tolist(), codes.tolist()):
        if v != v:
            continue
        count[g] += 1
        old = mean[g]
        mean[g] = old + (v - old) / count[g]
        m2[g] += (v - mean[g]) * (v - old)
    n = np.array(count, dtype="float64")
    with np.errstate(divide="ignore", invalid="ignore"):
        out: np.ndarray = np.where(n > 1, np.sqrt(np.array(m2, dtype="float64") / (n - 1)),
                                   np.nan)
    return out


def _sorted(values: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The non-NaN values sorted by group, then value; each group's first position in them and
    its count (0: no value)."""
    values = np.asarray(values, dtype="float64")
    kept = ~np.isnan(values)
    v, g = values[kept], codes[kept]
    order = np.lexsort((v, g))
    counts = np.bincount(g, minlength=_groups(codes))
    starts = np.cumsum(counts) - counts
    return v[order], starts, counts


def medians(values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """pandas' group medians of the non-NaN values: the middle one, or the mean of the two
    middle ones (numpy's ``(a + b) / 2``); NaN for none. float64, one per group."""
    v, starts, counts = _sorted(values, codes)
    some = counts > 0
    low = starts + np.maximum(counts - 1, 0) // 2
    high = starts + counts // 2
    out = np.full(len(counts), np.nan)
    middle = v[low[some]]
    even = counts[some] % 2 == 0  # the mean only there: a lone 1.7e308 overflowed a + b
    middle[even] = (middle[even] + v[high[some]][even]) / 2
    out[some] = middle
    return out


def extremes(values: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each group's least and greatest non-NaN value; NaN for none (float64, one per group)."""
    v, starts, counts = _sorted(values, codes)
    some = counts > 0
    low, high = np.full(len(counts), np.nan), np.full(len(counts), np.nan)
    low[some], high[some] = v[starts[some]], v[starts[some] + counts[some] - 1]
    return low, high


#: Rows up to which a column is factorized by a dict of its Python values (issue 40: pandas'
#: factorize costs 20-60 µs a call whatever the rows, a dict about 2 µs for 40 rows); a
#: larger table (an import) goes to pandas, whose per-row cost is lower.
_DICT_ROWS = 2_000


def factorize(values: Any, na_sentinel: bool = False) -> tuple[np.ndarray, int]:
    """``pd.factorize(values, use_na_sentinel=na_sentinel)``'s codes (int64, first-seen order;
    the missing values one code, or -1 with ``na_sentinel``) and its number of distinct values.

    ``values``: a Series, Index or array. A short one of numpy integers, or of only strings, is
    numbered by a dict of its Python values: the same numbers (equal strings or integers are one
    value to both, and it has no missing value for the two modes to differ on); an object
    column's 1, 1.0 and True would be one key to a dict, so it must hold strings only."""
    dtype = values.dtype
    numpy_ints = isinstance(dtype, np.dtype) and dtype.kind in "iu"
    if len(values) <= _DICT_ROWS and (numpy_ints or dtype == object
                                      or isinstance(dtype, pd.StringDtype)):
        items = values.tolist()
        if numpy_ints or all(type(v) is str for v in items):
            seen: dict[Any, int] = {}
            codes = [seen.setdefault(v, len(seen)) for v in items]
            return np.array(codes, dtype="int64"), len(seen)
    array = np.asarray(values) if isinstance(dtype, np.dtype) else values
    found, uniques = pd.factorize(array, use_na_sentinel=na_sentinel)
    return found.astype("int64", copy=False), len(uniques)


def first_seen(keys: np.ndarray) -> np.ndarray:
    """``pd.factorize(keys)[0]`` of int64 ``keys``: each key's number in first-seen order."""
    if len(keys) > _DICT_ROWS:
        return pd.factorize(keys)[0].astype("int64")
    seen: dict[int, int] = {}
    return np.array([seen.setdefault(k, len(seen)) for k in keys.tolist()], dtype="int64")


def distinct(values: "pd.Series[Any]", codes: np.ndarray) -> np.ndarray:
    """Each group's number of distinct values, missing ones left out (``nunique``): int64, one
    per group."""
    found = factorize(values, na_sentinel=True)[0]  # missing: -1
    kept = found >= 0
    width = int(found.max(initial=0)) + 1  # (group, value) as one number
    pairs = np.unique(codes[kept].astype("int64") * width + found[kept])
    return np.bincount(pairs // width, minlength=_groups(codes)).astype("int64")


__all__ = ["sums", "means", "stds", "medians", "extremes", "distinct", "factorize",
           "first_seen"]
