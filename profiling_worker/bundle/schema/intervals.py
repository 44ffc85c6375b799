"""Statistics over runs, one method for the worker's aggregated table and the app's derived
quantities (issue 11, case 5): the CI95, the relative std dev and StableMeasurement; and the
intervals of two sides (issue 34): the difference of means (Welch) and the ratio of means
(Fieller, :data:`RATIO_METHOD`), which is also the regression gate's relative difference.
Their coverage is simulated in ``tests/unit/profiling_worker/test_interval_coverage.py`` and
``benchmarks/interval_coverage.py`` (``docs/statistics.md``); the line said beside each interval
(method and coverage): :mod:`profiling_worker.bundle.schema.interval_words`.

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

from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import pandas as pd

from profiling_worker.bundle.schema import columns as C

CI_METHOD = ("Student-t CI95 of the mean, t(0.975, n-1)·s/√n, cut at 0 for quantities that "
             "cannot be negative")
#: Where the CI95 is shown to users who set it against nsight-python's output: its
#: CI95_Lower/Upper are AvgValue -/+ 1.96 * StdDev / sqrt(NumRuns) (nsight/transformation.py,
#: NVIDIA/nsight-python at 8736723), the normal quantile, narrower than Student's t for few runs.
SEED_CI_NOTE = ("nsight-python's own CI95_Lower/Upper use 1.96·s/√n (the normal quantile, not "
                "cut at 0): narrower for few runs, t(0.975, n-1) being 4.30 at 3 runs and 2.26 "
                "at 10")
#: The method of every ratio interval (:func:`ratio_ci95_bounds`) and of the gate's relative
#: difference (the same interval minus 1).
RATIO_METHOD = ("Fieller's CI95 of a ratio of two independent means (Fieller 1954), t at the "
                "Welch-Satterthwaite df at the estimated ratio (Tamhane & Logan 2004); unbounded "
                "where the baseline mean cannot be told from 0")
#: What a page says for an unbounded ratio interval (:func:`unbounded`).
UNBOUNDED_NOTE = ("unbounded: the baseline mean cannot be told from 0 at 95 % "
                  "(Fieller's g ≥ 1)")
#: Fewer runs than this on a side: no verdict, no stability (no spread can be estimated).
MIN_RUNS = 2
#: What a page says where a config has fewer than :data:`MIN_RUNS` runs.
ONE_RUN_NOTE = "1 run per config: no spread, no CI95"
#: What a page says where every run of a row read the same value (:func:`constant`).
CONSTANT_NOTE = ("every run read the same value: StdDev 0, relative std dev 0 %, a CI95 of zero "
                 "width")
#: The statistics that need a spread: NaN below :data:`MIN_RUNS` runs.
SPREAD_COLUMNS = (C.STD, C.CI95_LOWER, C.CI95_UPPER, C.RSD)


#: What the functions here return: float64 values (bool for :func:`stable`), one per group.
Floats = npt.NDArray[np.float64]


def t975(n: npt.ArrayLike) -> Floats:
    """The 0.975 quantile of Student's t with n-1 degrees of freedom; 0 where n < 2.

    Whole run counts up to 1,001 come from :data:`~profiling_worker.bundle.schema.t_table.T975`
    (scipy's values, without scipy's 0.4-0.5 s import in a cold worker); any other n from
    :func:`scipy.special.stdtrit`, imported only then."""
    from profiling_worker.bundle.schema.t_table import T975

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
                minimum: npt.ArrayLike, metric: npt.ArrayLike | None = None
                ) -> tuple[Floats, Floats]:
    """(CI95_Lower, CI95_Upper) by :data:`CI_METHOD`.

    Args:
        mean, std, n: per group mean, sample std dev (ddof=1) and number of runs.
        minimum, metric: the smallest run value and the metric of each group; a quantity that
            cannot be negative (:func:`cannot_be_negative`: a duration, or no run below 0) is
            cut at 0 (:func:`cut_at_zero`).

    Returns:
        Both bounds in the unit of ``mean``; NaN where :func:`ci95_half_width` is NaN (one run).
    """
    mean_ = np.asarray(mean, dtype="float64")
    half = ci95_half_width(std, n)
    with np.errstate(invalid="ignore"):  # inf - inf from a huge imported StdDev: NaN, quietly
        return cut_at_zero(mean_ - half, mean_ + half, cannot_be_negative(minimum, metric))


def cannot_be_negative(minimum: npt.ArrayLike, metric: npt.ArrayLike | None = None
                       ) -> npt.NDArray[np.bool_]:
    """Per group: whether its quantity cannot be negative, so that its CI95 is cut at 0: a
    duration (``metric`` in :data:`~profiling_worker.bundle.schema.metrics.DURATION_METRICS`,
    ns), whatever its values (a negative one is a faulty value, which the plausibility check
    names, not a sign that durations may be negative), or one with no value below 0
    (``minimum >= 0``; NaN: not known to be).

    Args:
        minimum: each group's smallest value (its mean where no smallest is known).
        metric: each group's metric name (None: none known, ``minimum`` alone decides).
    """
    out: npt.NDArray[np.bool_] = np.asarray(minimum, dtype="float64") >= 0
    if metric is not None:
        out = out | np.isin(np.asarray(metric, dtype=object), C.DURATION_METRICS)
    return out


def cut_at_zero(lower: npt.ArrayLike, upper: npt.ArrayLike, non_negative: npt.ArrayLike
                ) -> tuple[Floats, Floats]:
    """CI95 bounds intersected with [0, inf) where ``non_negative``
    (:func:`cannot_be_negative`): the lower bound cut at 0, and both NaN where the whole
    interval lies below 0 (an imported mean of -5 ns: no duration it allows is possible, so
    there is no interval to show); elsewhere as given."""
    low, high = np.asarray(lower, dtype="float64"), np.asarray(upper, dtype="float64")
    keep = np.asarray(non_negative, dtype=bool)
    empty = keep & (high < 0)
    low = np.where(keep, np.maximum(low, 0.0), low)
    return np.where(empty, np.nan, low), np.where(empty, np.nan, high)


def _satterthwaite_df(var_b: Floats, n_b: Floats, var_c: Floats, n_c: Floats) -> Floats:
    """Welch-Satterthwaite degrees of freedom of ``var_b + var_c``, each the variance of a
    mean of ``n`` runs: ``(var_b + var_c)^2 / (var_b^2/(n_b-1) + var_c^2/(n_c-1))``;
    ``n_b + n_c - 2`` where both are 0; NaN where a side has fewer than :data:`MIN_RUNS`."""
    with np.errstate(divide="ignore", invalid="ignore"):
        total = var_b + var_c
        df = total**2 / (var_b**2 / (n_b - 1) + var_c**2 / (n_c - 1))
        df = np.where(total > 0, df, n_b + n_c - 2)
    return np.where((n_b >= MIN_RUNS) & (n_c >= MIN_RUNS), df, np.nan)


def _t975_df(df: Floats, q: float = 0.975) -> Floats:
    """The ``q`` quantile (0.975 unless told) of Student's t with ``df`` degrees of freedom
    (NaN stays NaN)."""
    from scipy.special import stdtrit  # here, not at module level: see the module docstring

    return np.where(np.isnan(df), np.nan, stdtrit(np.maximum(np.nan_to_num(df, nan=1.0), 1.0),
                                                  q))


def _mean_variances(std_b: npt.ArrayLike, n_b: npt.ArrayLike, std_c: npt.ArrayLike,
                    n_c: npt.ArrayLike) -> tuple[Floats, Floats, Floats, Floats]:
    """(s_b^2/n_b, n_b, s_c^2/n_c, n_c) as float64 arrays; a NaN std counts as 0."""
    nb, nc = (np.asarray(n, dtype="float64") for n in (n_b, n_c))
    with np.errstate(divide="ignore", invalid="ignore"):
        vb = np.nan_to_num(np.asarray(std_b, dtype="float64"), nan=0.0) ** 2 / nb
        vc = np.nan_to_num(np.asarray(std_c, dtype="float64"), nan=0.0) ** 2 / nc
    return vb, nb, vc, nc


def welch_ci95_half_width(std_b: npt.ArrayLike, n_b: npt.ArrayLike, std_c: npt.ArrayLike,
                          n_c: npt.ArrayLike) -> tuple[Floats, Floats]:
    """Half-width of the 95 % confidence interval of a difference of two means ``m_c - m_b``
    (unit of the stds) and its Welch-Satterthwaite degrees of freedom: ``t(0.975, v) SE`` with
    ``SE = sqrt(s_b^2/n_b + s_c^2/n_c)`` and ``v = SE^4 / ((s_b^2/n_b)^2/(n_b-1) +
    (s_c^2/n_c)^2/(n_c-1))`` (B. L. Welch, Biometrika 34 (1947) 28-35; NIST/SEMATECH
    e-Handbook, section 1.3.5.3). No spread on either side: ``v = n_b + n_c - 2`` and width 0.
    Both NaN where a side has fewer than :data:`MIN_RUNS` runs; a NaN std counts as 0.
    The deep dive's baselines decide with it; a *relative* difference is a ratio
    (:func:`fieller_ci95`)."""
    vb, nb, vc, nc = _mean_variances(std_b, n_b, std_c, n_c)
    df = _satterthwaite_df(vb, nb, vc, nc)
    return _t975_df(df) * np.sqrt(vb + vc), df


class Fieller(NamedTuple):
    """:func:`fieller_ci95`'s answer, one value per row: the bounds (unitless; ``-inf``/``+inf``
    where unbounded), Fieller's ``g`` and the Welch-Satterthwaite degrees of freedom (all NaN
    where a side has fewer than :data:`MIN_RUNS` runs)."""

    lower: Floats
    upper: Floats
    g: Floats
    df: Floats


def fieller_ci95(mean_b: npt.ArrayLike, std_b: npt.ArrayLike, n_b: npt.ArrayLike,
                 mean_c: npt.ArrayLike, std_c: npt.ArrayLike, n_c: npt.ArrayLike,
                 level: float = 0.95) -> Fieller:
    """Fieller's 95 % (or ``level``: the replication verdict's 90 %) confidence interval of the
    ratio of two independent means
    ``R = mu_c / mu_b`` (:data:`RATIO_METHOD`), before any cut.

    With ``R^ = m_c/m_b``, ``v_b = s_b^2/n_b``, ``v_c = s_c^2/n_c``, ``t = t(0.975, v)`` and
    ``g = t^2 v_b / m_b^2``, the set of ``R`` with ``(m_c - R m_b)^2 <= t^2 (v_c + R^2 v_b)``
    is, for ``g < 1``, the interval ``(R^ -/+ (t/|m_b|) sqrt(v_c (1 - g) + R^2 v_b)) / (1 - g)``
    (E. C. Fieller, J. R. Stat. Soc. B 16 (1954) 175-185; the standard form with zero covariance,
    e.g. V. H. Franz, "Ratios: a short guide to confidence limits and proper use",
    arXiv:0710.2024). ``v`` is the Welch-Satterthwaite degrees of freedom of ``m_c - R m_b``
    at ``R = R^``
    (``(v_c + R^2 v_b)^2 / (v_c^2/(n_c-1) + R^4 v_b^2/(n_b-1))``; A. C. Tamhane and B. R.
    Logan, J. Biopharm. Stat. 14 (2004) 843-856, as R's ``mratios::ttestratio`` with
    ``var.equal=FALSE``). Unlike the Welch interval of ``m_c - m_b`` over ``m_b``, the
    baseline's variance enters scaled by ``R^2``.

    For ``g >= 1`` the baseline mean cannot be told from 0 at 95 % and the set is unbounded
    (the whole line, or two half-lines): lower ``-inf``, upper ``+inf``; so for a baseline mean
    of exactly 0.

    Args:
        mean_b, std_b, n_b: the baseline's mean, sample std dev (ddof=1) and runs, per row.
        mean_c, std_c, n_c: the same of the candidate (the numerator).

    Returns:
        :class:`Fieller`: lower, upper, g, df.
    """
    mb, mc = (np.asarray(m, dtype="float64") for m in (mean_b, mean_c))
    vb, nb, vc, nc = _mean_variances(std_b, n_b, std_c, n_c)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = mc / mb
        r2vb = np.where(vb > 0, ratio**2 * vb, 0.0)  # a zero-spread baseline adds nothing
        df = _satterthwaite_df(r2vb, nb, vc, nc)
        t = _t975_df(df, 0.5 + level / 2)
        g = np.where(vb > 0, t**2 * vb / mb**2, 0.0)
        g = np.where(mb == 0, np.inf, g)  # also where R^ = inf left t NaN
        g = np.where((nb >= MIN_RUNS) & (nc >= MIN_RUNS), g, np.nan)
        spread = t / np.abs(mb) * np.sqrt(vc * (1 - g) + r2vb)
        lower, upper = (ratio - spread) / (1 - g), (ratio + spread) / (1 - g)
    bounded = g < 1
    lower = np.where(bounded, lower, np.where(np.isnan(g), np.nan, -np.inf))
    upper = np.where(bounded, upper, np.where(np.isnan(g), np.nan, np.inf))
    return Fieller(lower, upper, g, df)


def ratio_pivot(mean_b: npt.ArrayLike, std_b: npt.ArrayLike, n_b: npt.ArrayLike,
                mean_c: npt.ArrayLike, std_c: npt.ArrayLike, n_c: npt.ArrayLike,
                ratio: float) -> tuple[Floats, Floats]:
    """Fieller's pivot for the hypothesis ``mu_c / mu_b = ratio``: the statistic
    ``(m_c - ratio m_b) / sqrt(v_c + ratio^2 v_b)`` and its Welch-Satterthwaite degrees of
    freedom at ``ratio``; under the hypothesis it is about Student-t. The interval of
    :func:`fieller_ci95` is the set of ratios this does not reject, so tests on a ratio
    (the replication verdict's equivalence test: Hauschke, Kieser & Hothorn, Biometrical J. 41
    (1999) 909-920, "Proof of safety ... based on the ratio of two means") and its intervals
    agree. NaN where a side has fewer than :data:`MIN_RUNS` runs or there is no spread."""
    mb, mc = (np.asarray(m, dtype="float64") for m in (mean_b, mean_c))
    vb, nb, vc, nc = _mean_variances(std_b, n_b, std_c, n_c)
    with np.errstate(divide="ignore", invalid="ignore"):
        r2vb = ratio**2 * vb
        stat = (mc - ratio * mb) / np.sqrt(vc + r2vb)
    return np.where(vc + r2vb > 0, stat, np.nan), _satterthwaite_df(r2vb, nb, vc, nc)


def ratio_ci95_bounds(mean_b: npt.ArrayLike, std_b: npt.ArrayLike, n_b: npt.ArrayLike,
                      mean_c: npt.ArrayLike, std_c: npt.ArrayLike, n_c: npt.ArrayLike
                      ) -> tuple[Floats, Floats]:
    """CI95 of the ratio of two means ``mean_c / mean_b`` (unitless) by :data:`RATIO_METHOD`
    (:func:`fieller_ci95`), the lower bound cut at 0 where both means are >= 0 (a ratio of
    non-negative quantities cannot be negative). Unbounded (the baseline mean cannot be told
    from 0): upper ``+inf`` (:func:`unbounded`, :data:`UNBOUNDED_NOTE`), lower ``-inf`` or 0.
    NaN where a side has fewer than :data:`MIN_RUNS` runs. The one ratio interval of the
    Compare and backends pages, the Size sweep's "Normalise to" and (as ``ratio - 1``) the
    regression gate's relative difference."""
    mb, mc = (np.asarray(m, dtype="float64") for m in (mean_b, mean_c))
    lower, upper, _g, _df = fieller_ci95(mb, std_b, n_b, mc, std_c, n_c)
    return np.where((mb >= 0) & (mc >= 0), np.maximum(lower, 0.0), lower), upper


def unbounded(upper: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Where a :func:`ratio_ci95_bounds` interval is unbounded (upper ``+inf``)."""
    out: npt.NDArray[np.bool_] = np.isposinf(np.asarray(upper, dtype="float64"))
    return out


def rsd_pct(mean: npt.ArrayLike, std: npt.ArrayLike) -> Floats:
    """``100 * std / |mean|`` (%); 0 when both are 0, inf when only the mean is 0, NaN when
    std is NaN (one run)."""
    m, s = np.asarray(mean, dtype="float64"), np.asarray(std, dtype="float64")
    with np.errstate(divide="ignore", invalid="ignore"):
        rsd = 100.0 * s / np.abs(m)
    rsd = np.where((m == 0) & (s == 0), 0.0, rsd)
    return np.where((m == 0) & (s > 0), np.inf, rsd)


def with_ci95_half_pct(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with ``columns.CI95_HALF_PCT`` = ``100 (CI95_Upper - AvgValue) / |AvgValue|``
    (%) beside StableMeasurement (after it; last without it): the half-width of a Student-t
    CI95, the upper half of a ratio's (Fieller's is not symmetric). NaN where the bounds are
    (one run); 0 for a zero mean with a zero-width interval, inf for a zero mean otherwise and
    for an unbounded ratio. Frames without AvgValue or CI95_Upper come back unchanged."""
    if C.AVG not in frame or C.CI95_UPPER not in frame:
        return frame
    mean = frame[C.AVG].to_numpy(dtype="float64")
    excess = frame[C.CI95_UPPER].to_numpy(dtype="float64") - mean
    with np.errstate(divide="ignore", invalid="ignore"):
        pct = np.where((mean == 0) & (excess == 0), 0.0, 100.0 * excess / np.abs(mean))
    out = frame.drop(columns=[C.CI95_HALF_PCT], errors="ignore")
    at = list(out.columns).index(C.STABLE) + 1 if C.STABLE in out else len(out.columns)
    out.insert(at, C.CI95_HALF_PCT, pct)
    return out


def constant(n: npt.ArrayLike, std: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Per row: at least :data:`MIN_RUNS` runs, all of one value (StdDev exactly 0): the spread
    is defined and 0, so the CI95 has zero width and the relative std dev is 0 %
    (:data:`CONSTANT_NOTE`), not a missing value as for one run."""
    enough = np.asarray(n, dtype="float64") >= MIN_RUNS
    out: npt.NDArray[np.bool_] = enough & (np.asarray(std, dtype="float64") == 0)
    return out


def stable(n: npt.ArrayLike, rsd: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """StableMeasurement: at least :data:`MIN_RUNS` runs and RSD < ``columns.STABLE_RSD_PCT``."""
    enough = np.asarray(n, dtype="float64") >= MIN_RUNS
    low: npt.NDArray[np.bool_] = (np.nan_to_num(np.asarray(rsd, dtype="float64"), nan=np.inf)
                                  < C.STABLE_RSD_PCT)
    return enough & low


def restate(aggregated: pd.DataFrame) -> pd.DataFrame:
    """An aggregated table written by an older method, restated by this one: the CI95 cut at 0
    (:func:`cut_at_zero`) for a duration and where no run was negative (MinValue >= 0;
    AvgValue >= 0 when MinValue is missing),
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
        lower, upper = cut_at_zero(out[C.CI95_LOWER], out.get(C.CI95_UPPER, np.inf),
                                   cannot_be_negative(floor, out.get(C.METRIC)))
        out[C.CI95_LOWER] = lower
        if C.CI95_UPPER in out:
            out[C.CI95_UPPER] = upper
    if C.NUM_RUNS in out:
        few = out[C.NUM_RUNS] < MIN_RUNS
        spread = [c for c in SPREAD_COLUMNS if c in out]
        if few.any() and spread:
            out[spread] = out[spread].astype("float64").mask(few)
        if C.STABLE in out:
            out[C.STABLE] = out[C.STABLE].astype(bool) & ~few
    return out
