"""Statistics over runs, one method for the worker's aggregated table and the app's derived
quantities (issue 11, case 5): the CI95, the relative std dev and StableMeasurement.

**CI95** (:data:`CI_METHOD`): Student's t interval of the mean, ``mean -/+ t(0.975, n-1) s/sqrt(n)``
(s the sample std dev, ddof=1), intersected with [0, inf) for a quantity that cannot be negative
(every run >= 0: times, byte counts, FLOP/s, GB/s, percentages). Intersecting a confidence
interval with the set of possible values keeps its 95 % coverage, and unlike an interval on log
values it also works for quantities that are sometimes exactly 0 (``dram__bytes_write.sum`` reads
0 bytes in some runs of the bundled H200 jobs: the write-back happens after the region).

**One run** (fewer than :data:`MIN_RUNS`): the sample std dev has n - 1 = 0 degrees of freedom and
is undefined, so StdDev, both CI95 bounds and the relative std dev are missing (NaN, as
nsight-python leaves them), never 0 or a zero-width interval, and the measurement is not stable;
pages say :data:`ONE_RUN_NOTE`.

The t quantile comes from :func:`scipy.special.stdtrit`, imported where it is used: importing
``scipy.stats`` costs about a second and ``scipy.special`` 0.15-0.3 s, which the app's first
page load after a server start paid even for pages that never compute an interval.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

from profiling_worker.schema import columns as C

CI_METHOD = ("Student-t CI95 of the mean, t(0.975, n-1)·s/√n, cut at 0 for quantities that "
             "cannot be negative")
#: Fewer runs than this on a side: no verdict, no stability (no spread can be estimated).
MIN_RUNS = 2
#: What a page says where a config has fewer than :data:`MIN_RUNS` runs.
ONE_RUN_NOTE = "1 run per config: no spread, no CI95"
#: The statistics that need a spread: NaN below :data:`MIN_RUNS` runs.
SPREAD_COLUMNS = (C.STD, C.CI95_LOWER, C.CI95_UPPER, C.RSD)


#: What the functions here return: float64 values (bool for :func:`stable`), one per group.
Floats = npt.NDArray[np.float64]


def t975(n: npt.ArrayLike) -> Floats:
    """The 0.975 quantile of Student's t with n-1 degrees of freedom; 0 where n < 2.

    Whole run counts up to 1,001 come from :data:`~profiling_worker.schema.t_table.T975`
    (scipy's values, without scipy's 0.4-0.5 s import in a cold worker); any other n from
    :func:`scipy.special.stdtrit`, imported only then."""
    from profiling_worker.schema.t_table import T975

    n = np.asarray(n, dtype="float64")
    used = n >= MIN_RUNS  # False for NaN
    df = np.where(used, n - 1, 1.0)
    if np.all((df == np.floor(df)) & (df <= len(T975))):
        t = np.asarray(T975, dtype="float64")[df.astype("int64") - 1]
    else:
        from scipy.special import stdtrit  # here, not at module level: see the module docstring

        t = stdtrit(df, 0.975)
    return np.where(used, t, 0.0)


def ci95_half_width(std: npt.ArrayLike, n: npt.ArrayLike) -> Floats:
    """``t(0.975, n-1) * std / sqrt(n)`` (same unit as ``std``); NaN where n < :data:`MIN_RUNS`
    (no spread) or std is NaN; inf for an infinite std."""
    n = np.asarray(n, dtype="float64")
    with np.errstate(over="ignore", invalid="ignore"):  # huge imported StdDev: inf, not a warning
        half = t975(n) * np.asarray(std, dtype="float64") / np.sqrt(np.maximum(n, 1))
    return np.asarray(np.where(n >= MIN_RUNS, half, np.nan), dtype="float64")


def ci95_bounds(mean: npt.ArrayLike, std: npt.ArrayLike, n: npt.ArrayLike,
                minimum: npt.ArrayLike) -> tuple[Floats, Floats]:
    """(CI95_Lower, CI95_Upper) by :data:`CI_METHOD`.

    Args:
        mean, std, n: per group mean, sample std dev (ddof=1) and number of runs.
        minimum: the smallest run value of each group; groups with ``minimum >= 0`` are
            non-negative quantities and their lower bound is cut at 0.

    Returns:
        Both bounds in the unit of ``mean``; NaN where :func:`ci95_half_width` is NaN (one run).
    """
    mean_ = np.asarray(mean, dtype="float64")
    half = ci95_half_width(std, n)
    with np.errstate(invalid="ignore"):  # inf - inf from a huge imported StdDev: NaN, quietly
        lower = mean_ - half
        lower = np.where(np.asarray(minimum, dtype="float64") >= 0, np.maximum(lower, 0.0), lower)
        return lower, mean_ + half


def welch_ci95_half_width(std_b: npt.ArrayLike, n_b: npt.ArrayLike, std_c: npt.ArrayLike,
                          n_c: npt.ArrayLike) -> tuple[Floats, Floats]:
    """Half-width of the 95 % confidence interval of a difference of two means ``m_c - m_b``
    (unit of the stds) and its Welch-Satterthwaite degrees of freedom: ``t(0.975, v) SE`` with
    ``SE = sqrt(s_b^2/n_b + s_c^2/n_c)`` and ``v = SE^4 / ((s_b^2/n_b)^2/(n_b-1) +
    (s_c^2/n_c)^2/(n_c-1))`` (B. L. Welch, Biometrika 34 (1947) 28-35; NIST/SEMATECH
    e-Handbook, section 1.3.5.3). No spread on either side: ``v = n_b + n_c - 2`` and width 0.
    Both NaN where a side has fewer than :data:`MIN_RUNS` runs; a NaN std counts as 0.
    The regression gate and the deep dive's baselines both decide with it."""
    from scipy.special import stdtrit  # here, not at module level: see the module docstring

    nb, nc = (np.asarray(n, dtype="float64") for n in (n_b, n_c))
    vb = np.nan_to_num(np.asarray(std_b, dtype="float64"), nan=0.0) ** 2 / nb
    vc = np.nan_to_num(np.asarray(std_c, dtype="float64"), nan=0.0) ** 2 / nc
    se = np.sqrt(vb + vc)
    with np.errstate(divide="ignore", invalid="ignore"):
        df = se**4 / (vb**2 / (nb - 1) + vc**2 / (nc - 1))
        df = np.where(se > 0, df, nb + nc - 2)
        df = np.where((nb >= MIN_RUNS) & (nc >= MIN_RUNS), df, np.nan)
        half = stdtrit(np.maximum(np.nan_to_num(df, nan=1.0), 1.0), 0.975) * se
    return np.where(np.isnan(df), np.nan, half), df


def ratio_ci95_bounds(mean_b: npt.ArrayLike, std_b: npt.ArrayLike, n_b: npt.ArrayLike,
                      mean_c: npt.ArrayLike, std_c: npt.ArrayLike, n_c: npt.ArrayLike
                      ) -> tuple[Floats, Floats]:
    """CI95 of the ratio of two means ``mean_c / mean_b`` (unitless): the Welch interval of the
    difference (:func:`welch_ci95_half_width`, the regression gate's) over the baseline mean,
    ``(m_c -/+ t(0.975, v) SE) / m_b``, so a ratio's interval and the gate's DiffPct interval are
    one interval (ratio - 1 = DiffPct / 100); the lower bound is cut at 0 for non-negative means,
    as the gate's is at -100 %. The baseline mean is taken as known, as the gate takes it.
    NaN where a side has fewer than :data:`MIN_RUNS` runs. Used by the Compare and backends
    pages and by the Size sweep's "Normalise to"."""
    mb, mc = (np.asarray(m, dtype="float64") for m in (mean_b, mean_c))
    half, _ = welch_ci95_half_width(std_b, n_b, std_c, n_c)
    with np.errstate(divide="ignore", invalid="ignore"):
        lower, upper = (mc - half) / mb, (mc + half) / mb
    lower = np.where((mb >= 0) & (mc >= 0), np.maximum(lower, 0.0), lower)
    return lower, upper


def rsd_pct(mean: npt.ArrayLike, std: npt.ArrayLike) -> Floats:
    """``100 * std / |mean|`` (%); 0 when both are 0, inf when only the mean is 0, NaN when
    std is NaN (one run)."""
    m, s = np.asarray(mean, dtype="float64"), np.asarray(std, dtype="float64")
    with np.errstate(divide="ignore", invalid="ignore"):
        rsd = 100.0 * s / np.abs(m)
    rsd = np.where((m == 0) & (s == 0), 0.0, rsd)
    return np.where((m == 0) & (s > 0), np.inf, rsd)


def stable(n: npt.ArrayLike, rsd: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """StableMeasurement: at least :data:`MIN_RUNS` runs and RSD < ``columns.STABLE_RSD_PCT``."""
    enough = np.asarray(n, dtype="float64") >= MIN_RUNS
    low: npt.NDArray[np.bool_] = (np.nan_to_num(np.asarray(rsd, dtype="float64"), nan=np.inf)
                                  < C.STABLE_RSD_PCT)
    return enough & low


def restate(aggregated: pd.DataFrame) -> pd.DataFrame:
    """An aggregated table written by an older method, restated by this one: CI95_Lower cut at
    0 where no run was negative (MinValue >= 0; AvgValue >= 0 when MinValue is missing),
    StableMeasurement False and the :data:`SPREAD_COLUMNS` NaN below :data:`MIN_RUNS` runs
    (older bundles wrote StdDev 0 and CI95 [v, v] for one run). Other values are kept as
    stored, so a table of the current method comes back unchanged.

    Args:
        aggregated: a bundle's ``aggregated`` table (columns of ``columns.TABLE_AGGREGATED``;
            missing columns are left alone).
    """
    if aggregated.empty or C.CI95_LOWER not in aggregated:
        return aggregated
    out = aggregated.copy()
    floor = out[C.MIN] if C.MIN in out else out.get(C.AVG)
    if floor is not None:
        if C.AVG in out:
            floor = floor.fillna(out[C.AVG])
        lower = out[C.CI95_LOWER]
        out[C.CI95_LOWER] = lower.where(~((floor >= 0) & (lower < 0)), 0.0)
    if C.NUM_RUNS in out:
        few = out[C.NUM_RUNS] < MIN_RUNS
        spread = [c for c in SPREAD_COLUMNS if c in out]
        if few.any() and spread:
            out[spread] = out[spread].astype("float64").mask(few)
        if C.STABLE in out:
            out[C.STABLE] = out[C.STABLE].astype(bool) & ~few
    return out
