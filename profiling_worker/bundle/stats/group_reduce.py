"""pandas' groupby reductions of a float column, in plain Python over a warm job's few rows.

A warm job's runs and aggregated tables reduce 40-60 rows into as many groups; each pandas
groupby reduction costs about 0.1 ms there whatever the rows, so a dozen of them were most of
``launches_to_runs`` and ``aggregate_runs`` (issue 40). These give the same floats as pandas
3.1 (pandas/core/groupby/ops.py and the cython kernels of pandas/_libs/groupby.pyx), missing
values (NaN) skipped as they skip them:

- :func:`sums`: where the group numbers never decrease along the rows and no value is NaN,
  numpy's ``add.reduceat`` over each group's run of rows (pandas 3.1's ``_reduceat_aggregate``);
  else Kahan's compensated sum in row order (``group_sum``); a group with no value sums to 0.0.
  A mean is that sum over the count (``group_mean``, and reduceat's sum over the group's size);
- :func:`stds`: Welford's running mean and sum of squared deviations, ``sqrt(M2 / (n - 1))``
  (``group_var`` with ddof=1); NaN for fewer than two values;
- :func:`medians`: numpy's median of the values (``group_median_float64``: the middle value, or
  the mean of the two middle ones); NaN for none.

Above :data:`PANDAS_ABOVE` rows (an import) pandas' groupby itself runs. Equal to the bit to
``Series.groupby(codes, sort=False)``'s ``sum``, ``mean``, ``std``, ``median``, ``min``, ``max``
and ``nunique`` (tests/unit/profiling_worker/test_group_reduce.py: recorded values in groups
of 1-11 rows, in row order and shuffled, with and without NaN).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

NAN = float("nan")


#: Above this many rows pandas' own groupby does it (vectorised: a 100k-row import's 20k
#: groups took 1.6 s in the per-group Python loops against 0.1 s in pandas).
PANDAS_ABOVE = 1000


def groups(codes: np.ndarray) -> list[list[int]]:
    """Row positions of each group, in row order; ``codes`` numbers the groups 0..k-1 (first
    seen order, as ``aggregate.group_codes`` does), so group ``i`` is item ``i``."""
    out: list[list[int]] = [[] for _ in range(int(codes.max()) + 1 if len(codes) else 0)]
    for row, code in enumerate(codes.tolist()):
        out[code].append(row)
    return out


def _grouped(values: np.ndarray, codes: np.ndarray) -> Any:
    return pd.Series(values).groupby(codes, sort=False)


def _each(values: np.ndarray, codes: np.ndarray, reduce: Callable[[list[Any]], Any],
          dtype: str) -> np.ndarray:
    """``reduce`` of each group's values (a list, in row order)."""
    listed = values.tolist()
    return np.array([reduce([listed[i] for i in rows]) for rows in groups(codes)], dtype=dtype)


def compensated_sum(values: Sequence[float]) -> tuple[float, int]:
    """(Kahan's sum of the non-NaN ``values`` in order, their count) as pandas' ``group_sum``
    adds them (its compensation reset to 0 where it turns NaN: an infinite value)."""
    total = compensation = 0.0
    count = 0
    for v in values:
        if v != v:
            continue
        count += 1
        y = v - compensation
        t = total + y
        compensation = t - total - y
        if compensation != compensation:
            compensation = 0.0
        total = t
    return total, count


def sums(values: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(each group's sum, its count of non-NaN values) as pandas 3.1's groupby ``sum`` adds
    them (module docstring); ``codes`` as :func:`groups` takes them.

    Returns:
        float64 sums and int64 counts, one per group.
    """
    values = np.asarray(values, dtype="float64")
    missing = np.isnan(values)
    counts = np.bincount(codes, weights=~missing).astype("int64")
    if len(codes) and not missing.any() and bool(np.all(codes[1:] >= codes[:-1])):
        starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
        total: np.ndarray = np.add.reduceat(values, starts)
        return total, counts
    if len(values) > PANDAS_ABOVE:
        return _grouped(values, codes).sum().to_numpy(dtype="float64"), counts
    return _each(values, codes, lambda v: compensated_sum(v)[0], "float64"), counts


def means(total: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """pandas' group means from :func:`sums`: the sum over the count; NaN for no value."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out: np.ndarray = np.where(counts > 0, total / np.maximum(counts, 1), np.nan)
    return out


def _std(values: list[float]) -> float:
    count, running, m2 = 0, 0.0, 0.0
    for v in values:
        if v != v:
            continue
        count += 1
        old = running
        running += (v - old) / count
        m2 += (v - running) * (v - old)
    return math.sqrt(m2 / (count - 1)) if count > 1 else NAN


def stds(values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """pandas' group standard deviations, ddof=1 (Welford); NaN for fewer than two values."""
    values = np.asarray(values, dtype="float64")
    if len(values) > PANDAS_ABOVE:
        out: np.ndarray = _grouped(values, codes).std(ddof=1).to_numpy(dtype="float64")
        return out
    return _each(values, codes, _std, "float64")


def _median(values: list[float]) -> float:
    kept = [v for v in values if v == v]
    return float(np.median(kept)) if kept else NAN


def medians(values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """pandas' group medians of the non-NaN values; NaN for none."""
    values = np.asarray(values, dtype="float64")
    if len(values) > PANDAS_ABOVE:
        out: np.ndarray = _grouped(values, codes).median().to_numpy(dtype="float64")
        return out
    return _each(values, codes, _median, "float64")


def extremes(values: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each group's least and greatest non-NaN value; NaN for none."""
    values = np.asarray(values, dtype="float64")
    if len(values) > PANDAS_ABOVE:
        g = _grouped(values, codes)
        return g.min().to_numpy(dtype="float64"), g.max().to_numpy(dtype="float64")
    return (_each(values, codes, lambda v: min((x for x in v if x == x), default=NAN),
                  "float64"),
            _each(values, codes, lambda v: max((x for x in v if x == x), default=NAN),
                  "float64"))


def distinct(values: "pd.Series[Any]", codes: np.ndarray) -> np.ndarray:
    """Each group's number of distinct values, missing ones left out (``nunique``)."""
    if len(values) > PANDAS_ABOVE:
        return values.groupby(codes, sort=False).nunique().to_numpy(dtype="int64")
    listed, present = values.tolist(), (~values.isna()).tolist()
    return np.array([len({listed[i] for i in rows if present[i]}) for rows in groups(codes)],
                    dtype="int64")


__all__ = ["groups", "compensated_sum", "sums", "means", "stds", "medians", "extremes",
           "distinct", "PANDAS_ABOVE"]
