"""The replication verdict (issue 36): a bundle's spec run again (another day, GPU or machine)
judged against the original with an equivalence test, after the gate's own checks.

Each region x config of the two bundles is lined up and screened by the regression gate
(:func:`profiling_worker.bundle.gate.judge.judge`: the measurement context of
:mod:`profiling_worker.bundle.gate.context`, the runs a side has, a side missing); a row the gate
finds **not comparable** is not comparable here either, with its reason. The others get the **two
one-sided tests** (TOST, D. J. Schuirmann, J. Pharmacokinet. Biopharm. 15 (1987) 657-680)
of the ratio ``R = mu_c / mu_b`` against the tolerance ``T`` (default +-3 %): ``1 - T < R <
1 + T``, each one-sided test on Fieller's pivot ``(m_c - R0 m_b) / sqrt(v_c + R0^2 v_b)`` with
its Welch-Satterthwaite df (:func:`profiling_worker.bundle.schema.intervals.ratio_pivot`; Hauschke,
Kieser & Hothorn, Biometrical J. 41 (1999) 909-920), so the baseline's spread counts as the
gate's Fieller interval counts it:

- ``p_TOST`` is the larger p of H0 ``R <= 1 - T`` and H0 ``R >= 1 + T``; **reproduced** when
  ``p_TOST < alpha`` (5 %); the 90 % Fieller interval of ``R - 1`` is shown beside it, with
  its method and measured coverage (:data:`~profiling_worker.bundle.schema.interval_words.RATIO90`,
  ``docs/statistics.md``);
- **not reproduced** when ``R > 1 + T`` or ``R < 1 - T`` is shown by a one-sided test at the
  same 5 % level;
- **not decided** otherwise, with the runs a side that would likely decide it: for ``|d| < T``
  the TOST sample size ``n = (z(1-alpha) + z(1-beta/2))^2 (s_c^2 + R^2 s_b^2) / (m_b (T - |d|))^2``,
  for ``|d| > T`` the one-sided ``n = (z(1-alpha) + z(1-beta))^2 (...) / (m_b (|d| - T))^2``
  (S.-C. Chow, J. Shao, H. Wang, *Sample Size Calculations in Clinical Research*, 2nd ed.,
  2008, sections 3.2.1 and 3.2.4), 80 % power; none where it asks no more than the runs taken
  or the interval is unbounded (:func:`profiling_worker.bundle.gate.verdict.runs_beyond`).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from profiling_worker.bundle.gate import judge as J, verdict as V
from profiling_worker.bundle.gate.sides import GateSide
from profiling_worker.bundle.schema import columns as C, interval_words as W, intervals

#: The default tolerance (%), as the issue asks.
DEFAULT_TOLERANCE_PCT = 3.0
#: Each one-sided test's level; the interval that decides is the (1 - 2 alpha) = 90 % one.
ALPHA = 0.05
POWER = 0.80

# Columns added to the gate's rows.
CI90_LOWER_PCT = "DiffCI90LowerPct"
CI90_UPPER_PCT = "DiffCI90UpperPct"
P_TOST = "PTost"
TOLERANCE_PCT = "TolerancePct"
VERDICT = "Replication"
WHY = "ReplicationReason"
RUNS_TO_DECIDE = J.RUNS_TO_DECIDE
#: The test, as the verdict's JSON states it (module docstring).
METHOD = ("two one-sided tests (TOST) at 5 % each of the ratio of means against 1 ± the "
          "tolerance, on Fieller's pivot with Welch-Satterthwaite df, after the regression "
          "gate's comparability checks")


class Replication(str, enum.Enum):
    """A region x config's replication verdict."""

    REPRODUCED = "reproduced"
    NOT_REPRODUCED = "not reproduced"
    NOT_DECIDED = "not decided"
    NOT_COMPARABLE = "not comparable"

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True)
class ReplicationResult:
    """Attributes:
        reference, replica: job ids (the original bundle, the re-run).
        tolerance_pct: ``T`` (%).
        context: the gate's measurement-context differences (each row not comparable when any).
        host_timer: the durations judged are host wall-clock times (the cpu backend): the
            interval's coverage, measured on GPU timings, is not known for them.
        rows: the gate's rows (:class:`~profiling_worker.bundle.gate.judge.GateResult`) with
            DiffCI90LowerPct, DiffCI90UpperPct, PTost, TolerancePct, Replication,
            ReplicationReason, and RunsToDecide recomputed for the equivalence question.
    """

    reference: str
    replica: str
    tolerance_pct: float
    context: list[str] = field(default_factory=list)
    rows: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    host_timer: bool = False

    @property
    def verdict(self) -> Replication:
        """The job's verdict: not comparable if any row is; reproduced when every row is;
        not reproduced when any row is not (and none is not comparable); else not decided."""
        seen = set(self.rows[VERDICT]) if len(self.rows) else {Replication.NOT_COMPARABLE.value}
        for outcome in (Replication.NOT_COMPARABLE, Replication.NOT_REPRODUCED,
                        Replication.NOT_DECIDED):
            if outcome.value in seen:
                return outcome
        return Replication.REPRODUCED

    @property
    def interval(self) -> str:
        """The method and coverage of the 90 % interval said beside each row's verdict
        (:func:`~profiling_worker.bundle.schema.interval_words.line`)."""
        return W.line(W.RATIO90, self.host_timer)

    def to_json(self) -> dict[str, object]:
        """The verdict, its method, its interval's method and coverage (``interval``) and one
        record per row (figures rounded for reading)."""
        keep = [c for c in (C.ANNOTATION, J.CONFIG_LABEL, C.METRIC, C.UNIT,
                            J.BASELINE + J.AVG, J.BASELINE + C.RUNS, J.CANDIDATE + J.AVG,
                            J.CANDIDATE + C.RUNS, J.DIFF_PCT, CI90_LOWER_PCT, CI90_UPPER_PCT,
                            P_TOST, RUNS_TO_DECIDE, VERDICT, WHY) if c in self.rows]
        rows = self.rows[keep].astype(object).where(self.rows[keep].notna(), None)
        return {"reference": self.reference, "replica": self.replica,
                "tolerance_pct": self.tolerance_pct, "verdict": self.verdict.value,
                "method": METHOD, "interval": self.interval, "context": self.context,
                "rows": rows.to_dict("records")}


def judge_replication(reference: GateSide, replica: GateSide,
                      tolerance_pct: float = DEFAULT_TOLERANCE_PCT,
                      min_runs: int = 2) -> ReplicationResult:
    """Judge ``replica`` (the spec run again) against ``reference`` (module docstring).

    Args:
        reference, replica: the two bundles (:meth:`GateSide.load`).
        tolerance_pct: ``T``, the equivalence margin (%), > 0.
        min_runs: fewer runs on a side: not comparable (the gate's rule).

    Raises:
        ValueError: ``tolerance_pct`` is not a finite number > 0.
    """
    if not 0 < tolerance_pct < math.inf:
        raise ValueError(f"tolerance {tolerance_pct!r} %: give a finite percentage > 0, e.g. 3")
    gate = J.judge(reference, replica, J.GateOptions(max_slowdown_pct=tolerance_pct,
                                                     min_runs=min_runs))
    rows = gate.rows.copy()
    out = [_row(r, tolerance_pct) for r in rows.to_dict("records")]
    for i, column in enumerate((CI90_LOWER_PCT, CI90_UPPER_PCT, P_TOST, RUNS_TO_DECIDE, VERDICT,
                                WHY)):
        rows[column] = [o[i] for o in out]
    rows[TOLERANCE_PCT] = tolerance_pct
    return ReplicationResult(reference.job_id, replica.job_id, tolerance_pct, gate.context, rows,
                             host_timer=gate.metric == C.HOST_TIME)


def _side(row: Mapping[Hashable, Any], side: str) -> tuple[float, float, float]:
    """(mean, sample std dev, runs) of one side of a gate row."""
    return (float(row[side + J.AVG]), float(row[side + C.STD]), float(row[side + C.RUNS]))


def _row(row: Mapping[Hashable, Any], tol: float
         ) -> tuple[float, float, float, float, str, str]:
    """(CI90 lower, CI90 upper, p_TOST, runs to decide, verdict, reason) of one row."""
    nan = float("nan")
    if row[J.OUTCOME] == V.Outcome.NOT_COMPARABLE.value:
        return nan, nan, nan, nan, Replication.NOT_COMPARABLE.value, str(row[J.REASON])
    from scipy.stats import t as student_t

    sides = (*_side(row, J.BASELINE), *_side(row, J.CANDIDATE))
    mb, mc = sides[0], sides[3]
    diff = 100.0 * (mc - mb) / mb
    low_stat, low_df = (float(x) for x in intervals.ratio_pivot(*sides, 1 - tol / 100.0))
    high_stat, high_df = (float(x) for x in intervals.ratio_pivot(*sides, 1 + tol / 100.0))
    if not (math.isfinite(low_stat) and math.isfinite(high_stat)):  # no spread: no test
        return nan, nan, nan, nan, Replication.NOT_DECIDED.value, (
            f"{diff:+.2f} %: no spread to test against ±{tol:g} % (a run more a side would give "
            f"one)")
    p_below_low = float(student_t.cdf(low_stat, low_df))    # H0 R >= 1 - T vs R < 1 - T
    p_above_high = float(student_t.sf(high_stat, high_df))  # H0 R <= 1 + T vs R > 1 + T
    p_tost = max(float(student_t.sf(low_stat, low_df)), float(student_t.cdf(high_stat, high_df)))
    ci = intervals.fieller_ci95(*sides[:3], *sides[3:], level=1 - 2 * ALPHA)
    lower, upper = 100.0 * (float(ci.lower[()]) - 1.0), 100.0 * (float(ci.upper[()]) - 1.0)
    said = (f"{diff:+.2f} % (90 % CI {lower:+.2f} .. {upper:+.2f} %, p_TOST {p_tost:.3g}) "
            f"against ±{tol:g} %")
    if p_tost < ALPHA:
        return lower, upper, p_tost, nan, Replication.REPRODUCED.value, (
            f"{said}: the whole 90 % interval inside the tolerance")
    if min(p_below_low, p_above_high) < ALPHA:
        return lower, upper, p_tost, nan, Replication.NOT_REPRODUCED.value, (
            f"{said}: the whole 90 % interval outside the tolerance")
    runs = runs_to_decide(diff, _rel_var(*sides), tol, int(max(sides[2], sides[5]))) \
        if math.isfinite(upper) else math.nan  # unbounded: the estimate's normal model fails
    how = V.runs_text(runs, "80 % power")
    return lower, upper, p_tost, runs, Replication.NOT_DECIDED.value, (
        f"{said}: the 90 % interval straddles the tolerance; {how}")


def _rel_var(mb: float, sb: float, nb: float, mc: float, sc: float, nc: float) -> float:
    """``(s_c^2 + R^2 s_b^2) / m_b^2``: the ratio's spread per run (delta method), as the gate's
    :func:`profiling_worker.bundle.gate.verdict.runs_to_decide` uses it."""
    return (sc**2 + (mc / mb) ** 2 * sb**2) / mb**2


def runs_to_decide(diff_pct: float, rel_var: float, tol_pct: float, runs: int) -> float:
    """Runs a side that would likely decide a not-decided row, if its difference and spread
    hold (module docstring; ``rel_var = (s_c^2 + R^2 s_b^2) / m_b^2``); ``inf`` on the
    tolerance, NaN where it asks no more than the ``runs`` taken
    (:func:`profiling_worker.bundle.gate.verdict.runs_beyond`)."""
    from scipy.special import ndtri

    beta = 1 - POWER
    z = float(ndtri(1 - ALPHA) + ndtri(1 - (beta / 2 if abs(diff_pct) < tol_pct else beta)))
    return V.runs_beyond(z, rel_var, abs(tol_pct - abs(diff_pct)), runs)


def markdown(result: ReplicationResult) -> str:
    """A short Markdown summary: the verdict, the context, one line per row, and the 90 %
    interval's method and coverage (:attr:`ReplicationResult.interval`)."""
    lines = [f"## Replication of `{result.reference}` by `{result.replica}`: "
             f"**{result.verdict}** (tolerance ±{result.tolerance_pct:g} %, TOST)", ""]
    lines += [f"- not comparable: {c}" for c in result.context]
    for r in result.rows.to_dict("records"):
        lines.append(f"- {r[C.ANNOTATION]} {r[J.CONFIG_LABEL]}: **{r[VERDICT]}**: {r[WHY]}")
    return "\n".join([*lines, "", result.interval]) + "\n"
