"""pandas' groupby reductions of a float column, without a groupby: one path for any number of
rows.

A warm job's runs and aggregated tables reduce 40-60 rows into as many groups; each pandas
groupby reduction costs about 0.1 ms there whatever the rows, so a dozen of them were most of
``launches_to_runs`` and ``aggregate_runs`` (issue 40). These give the same floats as pandas
3.1 (pandas/core/groupby/ops.py and the cython kernels of pandas/_libs/groupby.pyx), missing
values (NaN) skipped as they skip them, so a table of 40 rows and an import of 100,000 take
the same path. Where pandas reduces in cython, these call its cython kernels as its groupby
calls them for a float64 Series, without the groupby around them (a Python loop over the rows
with pandas' arithmetic made an import of 30,000+ rows 1.5x slower than pandas' groupby):

- :func:`sums`: where the group numbers never decrease along the rows and no value is NaN,
  numpy's ``add.reduceat`` over each group's run of rows (pandas 3.1's ``_reduceat_aggregate``);
  else pandas' ``group_sum``, Kahan's compensated sum in row order; a group with no value sums
  to 0.0. A mean is that sum over the count (``group_mean``, and reduceat's sum over the
  group's size);
- :func:`stds`: pandas' ``group_var`` with ddof=1 and ``name="std"``, Welford's running mean and
  sum of squared deviations in row order, ``sqrt(M2 / (n - 1))``; NaN for fewer than two
  values;
- :func:`medians`: pandas' ``group_median_float64``; NaN for no value;
- :func:`extremes`: pandas' ``group_min`` and ``group_max``; :func:`distinct`: the distinct
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
# pandas' own kernels (private: no stubs); test_group_reduce holds them to groupby's results
from pandas._libs import groupby as libgroupby  # type: ignore[attr-defined]


def _groups(codes: np.ndarray) -> int:
    """How many groups ``codes`` numbers (0..k-1, first seen order, as
    ``aggregate.group_codes`` numbers them)."""
    return int(codes.max()) + 1 if len(codes) else 0


def _kernel(kernel: str, values: np.ndarray, codes: np.ndarray, **options: Any) -> np.ndarray:
    """pandas' cython groupby ``kernel`` over the float64 ``values`` grouped by ``codes``,
    called as pandas 3.1's ``WrappedCythonOp`` calls it for a float64 Series (no mask): one
    float64 result per group."""
    out = np.zeros((_groups(codes), 1), dtype="float64")
    counts = np.zeros(len(out), dtype="int64")  # the kernel's own row count, NaN included
    getattr(libgroupby, kernel)(out, counts, np.asarray(values, dtype="float64").reshape(-1, 1),
                              codes.astype(np.intp, copy=False), **options)
    result: np.ndarray = out[:, 0]
    return result


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
    return (_kernel("group_sum", values, codes, mask=None, min_count=0),
            np.bincount(codes[~missing], minlength=_groups(codes)).astype("int64"))


def means(total: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """pandas' group means from :func:`sums`: the sum over the count; NaN for no value."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out: np.ndarray = np.where(counts > 0, total / np.maximum(counts, 1), np.nan)
    return out


def stds(values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """pandas' group standard deviations, ddof=1 (Welford, in row order); NaN for fewer than
    two values. float64, one per group."""
    return _kernel("group_var", values, codes, min_count=-1, ddof=1, name="std")


def medians(values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """pandas' group medians of the non-NaN values (``group_median_float64``); NaN for none.
    float64, one per group."""
    return _kernel("group_median_float64", values, codes, min_count=-1)


def extremes(values: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each group's least and greatest non-NaN value (``group_min``, ``group_max``); NaN for
    none (float64, one per group)."""
    return (_kernel("group_min", values, codes, min_count=-1),
            _kernel("group_max", values, codes, min_count=-1))


def distinct(values: "pd.Series[Any]", codes: np.ndarray) -> np.ndarray:
    """Each group's number of distinct values, missing ones left out (``nunique``): int64, one
    per group."""
    found, _ = pd.factorize(values, use_na_sentinel=True)  # missing: -1
    kept = found >= 0
    width = int(found.max(initial=0)) + 1  # (group, value) as one number
    pairs = np.unique(codes[kept].astype("int64") * width + found[kept])
    return np.bincount(pairs // width, minlength=_groups(codes)).astype("int64")


__all__ = ["sums", "means", "stds", "medians", "extremes", "distinct"]
