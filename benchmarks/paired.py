"""A paired speed ratio and its verdict (issue 40): candidate / reference, pair by pair.

Each pair is one run of each side, interleaved in time (benchmarks/overhead.py alternates which
side goes first), so a drift of the machine hits both. Method:

- **estimate**: the geometric mean of the per-pair ratios, ``exp(mean(log r))``;
- **CI95**: Student's t interval of the mean log ratio, ``mean -/+ t(0.975, n-1) s/sqrt(n)``,
  exponentiated (the paired t test on log times; t from ``profiling_worker.bundle.schema.intervals``);
- **p**: the exact two-sided Wilcoxon signed-rank test of ``log r = 0`` (no normality assumed;
  ``scipy.stats.wilcoxon``), the check that does not lean on the t interval;
- **verdict** against a target (e.g. at most 1.0x) and a bound (the interval below 1.05x):
  ``met`` when the estimate is at most the target and the CI95's upper end below the bound;
  ``missed`` when the CI95's lower end is above the target; otherwise ``not shown`` (the pairs
  cannot tell). A ratio is never called met from its median alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from profiling_worker.bundle.schema.intervals import t975


def paired_ratio(candidate: Sequence[float], reference: Sequence[float],
                 target: float = 1.0, bound: float = 1.05) -> dict[str, Any]:
    """Summary of ``candidate[i] / reference[i]`` over the pairs (both in the same unit, s).

    Returns:
        ``{"n", "ratios", "min", "median", "max", "estimate", "ci95": [lo, hi], "p_wilcoxon",
        "slower_pairs", "target", "bound", "verdict"}``; with fewer than 2 pairs the interval
        and p are NaN and the verdict ``not shown``.

    Raises:
        ValueError: the two sides differ in length, or a time is not positive.
    """
    from scipy.stats import wilcoxon

    c, r = np.asarray(candidate, dtype="float64"), np.asarray(reference, dtype="float64")
    if c.shape != r.shape or not (np.all(c > 0) and np.all(r > 0)):
        raise ValueError("paired_ratio needs as many candidate as reference times, all > 0 s")
    logs = np.log(c / r)
    n = len(logs)
    est = float(np.exp(logs.mean())) if n else math.nan
    lo = hi = p = math.nan
    if n >= 2:
        half = float(t975(n)) * float(logs.std(ddof=1)) / math.sqrt(n)
        lo, hi = float(np.exp(logs.mean() - half)), float(np.exp(logs.mean() + half))
        p = 1.0 if not np.any(logs) else float(wilcoxon(logs, method="exact").pvalue)
    verdict = ("met" if est <= target and hi < bound else
               "missed" if lo > target else "not shown")
    ratios = (c / r).tolist()
    return {"n": n, "ratios": ratios, "min": min(ratios, default=math.nan),
            "median": float(np.median(ratios)) if n else math.nan,
            "max": max(ratios, default=math.nan), "estimate": est, "ci95": [lo, hi],
            "p_wilcoxon": p, "slower_pairs": int(np.sum(logs > 0)), "target": target,
            "bound": bound, "verdict": verdict}


def ratio_line(r: dict[str, Any]) -> str:
    """A :func:`paired_ratio` summary as the benchmarks print it: ``"0.87 (CI95 0.82-0.91, 0 of
    6 pairs slower, Wilcoxon p 0.031)"``."""
    return (f"{r['estimate']:.2f} (CI95 {r['ci95'][0]:.2f}-{r['ci95'][1]:.2f}, "
            f"{r['slower_pairs']} of {r['n']} pairs slower, Wilcoxon p {r['p_wilcoxon']:.3f})")
