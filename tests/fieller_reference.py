"""An independent reference for the ratio interval tests: Fieller's confidence set of
``mu_c / mu_b`` found as the roots of its quadratic, from raw runs or summary statistics, with
scipy.stats' t (not the product's code path: profiling_worker.bundle.schema.intervals solves the
closed form with scipy.special)."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats


def fieller_roots(mean_b: float, std_b: float, n_b: float, mean_c: float, std_c: float,
                  n_c: float) -> tuple[float, float]:
    """The set ``{R : (m_c - R m_b)^2 <= t^2 (v_c + R^2 v_b)}`` (``v = s^2/n``), ``t`` at the
    Welch-Satterthwaite df of ``m_c - R m_b`` at ``R = m_c/m_b`` (Tamhane & Logan 2004; R's
    mratios::ttestratio, var.equal=FALSE): (-inf, inf) where it is not a bounded interval."""
    vb, vc = std_b**2 / n_b, std_c**2 / n_c
    est = mean_c / mean_b
    df = (vc + est**2 * vb) ** 2 / (vc**2 / (n_c - 1) + est**4 * vb**2 / (n_b - 1))
    t2 = float(stats.t.ppf(0.975, df)) ** 2
    # a R^2 + b R + c <= 0
    a, b, c = mean_b**2 - t2 * vb, -2 * mean_b * mean_c, mean_c**2 - t2 * vc
    if a <= 0:
        return -math.inf, math.inf
    lo, hi = sorted(np.roots([a, b, c]).real)
    return float(lo), float(hi)


def fieller_of_runs(base: np.ndarray, cand: np.ndarray) -> tuple[float, float]:
    """:func:`fieller_roots` of two sets of runs (sample std dev, ddof=1)."""
    return fieller_roots(base.mean(), base.std(ddof=1), len(base), cand.mean(),
                         cand.std(ddof=1), len(cand))
