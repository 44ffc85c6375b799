"""The one rule that turns two sides' runs into a verdict (issue 21), used by the gate CLI, its
Markdown and JUnit, the Compare page and the backends page alike.

Per region x config, with baseline and candidate means ``m_b, m_c``, sample std devs
``s_b, s_c`` and run counts ``n_b, n_c``:

- relative difference ``d = (m_c - m_b) / m_b = R - 1`` (durations: > 0 is slower);
- its 95 % interval: Fieller's interval of the ratio ``R = m_c / m_b`` minus 1
  (:func:`profiling_worker.bundle.schema.intervals.fieller_ci95`: the t quantile at the
  Welch-Satterthwaite degrees of freedom of ``m_c - R m_b``, the baseline's variance scaled by
  ``R^2``; E. C. Fieller, J. R. Stat. Soc. B 16 (1954) 175-185), the interval the Compare page
  shows as RatioCI95. Unbounded (``+inf`` above) where the baseline mean cannot be told from 0
  at 95 %: such a row is ambiguous, never a direction. The lower bound is cut at -100 % when
  both means are >= 0 (a duration cannot fall below 0).

Against the allowed change ``T`` (``--max-slowdown``, %), judged on the whole interval:

- **regressed**: the lower bound is above ``+T``; **improved**: the upper bound is below ``-T``;
- **same**: the whole interval lies inside ``[-T, +T]``;
- **ambiguous**: the interval straddles ``+T`` or ``-T``; :func:`runs_to_decide` says how many
  runs a side would likely decide it.

**Cycle check** (as nvbench's ``nvbench-compare-robust``, which reports FAST/SLOW only when the
gap also holds in cycles, ``cycles = time x SM clock``): where both sides hold each run's SM clock
(:mod:`profiling_worker.bundle.gate.cycles`), the same rule is applied to the cycles; a regressed or
improved time whose cycles do not say the same is **clock-explained**: the kernel did as many
cycles, at another clock (thermal, power or a different clock state).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from profiling_worker.bundle.schema import columns as C, intervals

#: z quantiles of the sample-size estimate (:func:`runs_to_decide`): a one-sided test at 2.5 %
#: (the 95 % interval's bound) with 80 % power.
ALPHA_TWO_SIDED, POWER = 0.05, 0.80
#: Beyond this many runs a side the estimate is given as "more than".
MAX_RUNS_SAID = 10_000


class Outcome(str, enum.Enum):
    """A region x config's outcome: the five of issue 21 and the cycle check's."""

    REGRESSED = "regressed"
    IMPROVED = "improved"
    SAME = "same"
    AMBIGUOUS = "ambiguous"
    CLOCK_EXPLAINED = "clock-explained"
    NOT_COMPARABLE = "not comparable"

    def __str__(self) -> str:
        return str(self.value)


#: Outcomes that decide nothing about the kernel yet (more runs, or the clock, would).
UNDECIDED = (Outcome.AMBIGUOUS, Outcome.CLOCK_EXPLAINED)


@dataclass(frozen=True)
class Interval:
    """One quantity's relative difference, candidate vs baseline (figures in %).

    Attributes:
        diff_pct: ``100 d``.
        lower_pct, upper_pct: its 95 % interval (``upper_pct`` ``+inf`` where unbounded).
        half_pct: half the interval's width before the -100 % cut (``+inf`` unbounded).
        rel_var: ``(s_c^2 + R^2 s_b^2) / m_b^2``, the spread :func:`runs_to_decide` uses.
        runs: ``max(n_b, n_c)``, the runs a side already has.
        uncut_lower_pct: the lower bound before the -100 % cut (:func:`relative_difference`).
    """

    diff_pct: float
    lower_pct: float
    upper_pct: float
    half_pct: float
    rel_var: float
    runs: int
    uncut_lower_pct: float | None = None


def relative_difference(frame: pd.DataFrame, prefix_b: str, prefix_c: str, avg: str, std: str,
                        runs: str) -> pd.DataFrame:
    """The relative difference and its 95 % interval for every row (module docstring).

    Args:
        frame: one row per region x config with ``<prefix><avg|std|runs>`` for both sides.
        prefix_b, prefix_c: the column prefixes of the baseline and the candidate.
        avg, std, runs: the column suffixes (mean, sample std dev, number of runs).

    Returns:
        DiffPct, LowerPct, UpperPct (``+inf`` unbounded), UncutLowerPct, HalfPct, Df (NaN below
        2 runs a side), RelVar, Runs; the index of ``frame``.
    """
    mb, mc = frame[prefix_b + avg].astype(float), frame[prefix_c + avg].astype(float)
    nb, nc = frame[prefix_b + runs].astype(float), frame[prefix_c + runs].astype(float)
    sb, sc = frame[prefix_b + std].astype(float), frame[prefix_c + std].astype(float)
    lower, upper, _g, df = intervals.fieller_ci95(mb, sb, nb, mc, sc, nc)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        diff = 100.0 * (mc - mb) / mb
        low, high = 100.0 * (lower - 1.0), 100.0 * (upper - 1.0)
        rel_var = (sc.fillna(0.0) ** 2 + (mc / mb) ** 2 * sb.fillna(0.0) ** 2) / mb**2
    floor = np.where((mb >= 0) & (mc >= 0), -100.0, -np.inf)
    return pd.DataFrame({"DiffPct": diff, "LowerPct": np.maximum(low, floor), "UpperPct": high,
                         "UncutLowerPct": low, "HalfPct": (high - low) / 2.0, "Df": df,
                         "RelVar": rel_var, C.RUNS: np.maximum(nb, nc)}, index=frame.index)


def decide(interval: Interval, allowed_pct: float) -> Outcome:
    """regressed, improved, same or ambiguous: where the whole interval lies against
    ``+/- allowed_pct`` (module docstring)."""
    if interval.lower_pct > allowed_pct:
        return Outcome.REGRESSED
    if interval.upper_pct < -allowed_pct:
        return Outcome.IMPROVED
    if interval.lower_pct >= -allowed_pct and interval.upper_pct <= allowed_pct:
        return Outcome.SAME
    return Outcome.AMBIGUOUS


def runs_to_decide(interval: Interval, allowed_pct: float) -> float:
    """Runs a side would likely decide an ambiguous row, if its difference and spread hold.

    The normal-approximation sample size of a two-sample test of a mean difference against a
    margin (S.-C. Chow, J. Shao, H. Wang, *Sample Size Calculations in Clinical Research*,
    2nd ed., 2008, section 3.2.1, test for non-inferiority/superiority):
    ``n = (z(1 - alpha/2) + z(power))^2 (s_c^2 + R^2 s_b^2) / (m_b |d| - m_b T)^2`` per side,
    with alpha = 5 % (the 95 % interval's bound) and 80 % power: the runs at which the interval
    of a true difference ``d`` clears the threshold ``T`` four times in five. The variance is
    that of ``m_c - R m_b`` (the ratio's, by the delta method: the baseline's scaled by
    ``R^2 = (1 + d)^2``, as in Fieller's interval); ``m_b`` cancels in the relative form used
    here. No estimate for an unbounded interval (the approximation assumes a baseline mean told
    from 0), nor where it asks no more runs than were taken (:func:`runs_beyond`).

    Returns:
        Runs per side (a whole number), ``inf`` when the difference sits on the threshold,
        NaN when no estimate can be given.
    """
    from scipy.special import ndtri  # the standard normal quantile

    if math.isinf(interval.upper_pct):
        return math.nan
    z = float(ndtri(1 - ALPHA_TWO_SIDED / 2) + ndtri(POWER))
    return runs_beyond(z, interval.rel_var, abs(abs(interval.diff_pct) - allowed_pct),
                       interval.runs)


def runs_beyond(z: float, rel_var: float, margin_pct: float, runs: int) -> float:
    """``ceil(z^2 rel_var / margin^2)`` runs a side (``margin_pct`` in %, ``rel_var`` per run,
    dimensionless), the estimate of :func:`runs_to_decide` and of the replication check:
    ``inf`` for a margin of 0, NaN (no estimate) for a spread that is not finite or an
    estimate no larger than the ``runs`` a side already taken (they did not decide it, so the
    estimate's difference or spread did not hold: "one run more" would be no advice)."""
    if margin_pct == 0:
        return math.inf
    if not math.isfinite(rel_var):
        return math.nan
    need = math.ceil(z**2 * rel_var / (margin_pct / 100.0) ** 2)
    return float(need) if need > runs else math.nan


def runs_text(runs: float, power_note: str) -> str:
    """What :func:`runs_to_decide` (or the replication check's estimate) says, in words;
    ``power_note``: the parenthesis after the runs (``"80 % power"``)."""
    if math.isnan(runs):
        return "no estimate of the runs that would decide it from this interval"
    if math.isinf(runs):
        return "no number of runs decides a difference that sits on the threshold"
    if runs > MAX_RUNS_SAID:
        return f"more than {MAX_RUNS_SAID:,} runs a side would be needed"
    return f"about {int(runs)} runs a side would likely decide it ({power_note})"


def figures(interval: Interval, allowed_pct: float) -> str:
    """``"+3.10 % (95 % CI +2.65 .. +3.56 %)"`` with the decimals that keep the bounds unlike
    the threshold they are judged against; a lower bound raised to -100 %
    (:func:`relative_difference`) says so with its value before the cut; an unbounded
    interval says :data:`~profiling_worker.bundle.schema.intervals.UNBOUNDED_NOTE`."""
    if math.isinf(interval.upper_pct):
        return f"{interval.diff_pct:+.2f} % (95 % CI {intervals.UNBOUNDED_NOTE})"
    d = distinct_decimals(allowed_pct, interval.diff_pct, interval.lower_pct, interval.upper_pct)
    uncut = interval.uncut_lower_pct
    cut = uncut is not None and uncut < interval.lower_pct  # raised to -100 %
    return (f"{interval.diff_pct:+.{d}f} % (95 % CI {interval.lower_pct:+.{d}f} .. "
            f"{interval.upper_pct:+.{d}f} %" + (f"; the lower bound cut from "
            f"{uncut:+.{d}f} %: a non-negative quantity cannot "
            "drop by more than 100 %" if cut else "") + ")")


def explain(outcome: Outcome, interval: Interval, allowed_pct: float) -> str:
    """Why ``interval`` got ``outcome`` (:func:`decide`), with its figures."""
    said = figures(interval, allowed_pct)
    t = f"{allowed_pct:g} %"
    if outcome is Outcome.REGRESSED:
        return f"{said}: the whole interval above +{t}"
    if outcome is Outcome.IMPROVED:
        return f"{said}: the whole interval below -{t}"
    if outcome is Outcome.SAME:
        return f"{said}: the whole interval inside ±{t}"
    how = runs_text(runs_to_decide(interval, allowed_pct),
                    "80 % power at this difference and spread")
    return f"{said}: the interval straddles ±{t}; {how}"


def with_cycles(time: Outcome, cycles: Outcome | None) -> Outcome:
    """The outcome after the cycle check: a regressed/improved time that the cycles do not
    confirm is clock-explained; anything else stays as the time says."""
    if cycles is not None and time in (Outcome.REGRESSED, Outcome.IMPROVED) and cycles != time:
        return Outcome.CLOCK_EXPLAINED
    return time


def distinct_decimals(threshold: float, *values: float) -> int:
    """Decimals (2 to 6) at which each value prints unlike ``+/-threshold``, so that a bound of
    3.0004 % is not written "+3.00 %: above +3 %"."""
    for decimals in range(2, 6):
        if all(f"{abs(v):.{decimals}f}" != f"{threshold:.{decimals}f}" for v in values
               if math.isfinite(v)):
            return decimals
    return 6
