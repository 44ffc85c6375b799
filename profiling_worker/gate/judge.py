"""The regression gate's judgement: every region (annotation) x config of two bundles gets one of
four :class:`Outcome` values, with the figures that decided it.

Per row, with baseline and candidate means ``m_b, m_c``, sample std devs ``s_b, s_c`` and run
counts ``n_b, n_c`` (the bundles' aggregated table: AvgValue, StdDev, NumRuns):

- relative difference ``d = (m_c - m_b) / m_b`` (durations: > 0 is slower);
- Welch's standard error ``SE = sqrt(s_b^2/n_b + s_c^2/n_c)`` with the Welch-Satterthwaite
  degrees of freedom ``v = SE^4 / ((s_b^2/n_b)^2/(n_b-1) + (s_c^2/n_c)^2/(n_c-1))``
  (B. L. Welch, Biometrika 34 (1947) 28-35; NIST/SEMATECH e-Handbook of Statistical Methods,
  section 1.3.5.3 "Two-Sample t-Test for Equal Means");
- its 95 % CI ``d -/+ D`` (below), the lower bound cut at -100 % when both means are
  non-negative (a duration cannot fall below 0; as the CI95 lower bounds of
  :mod:`profiling_worker.schema.intervals`);
- the **smallest detectable difference** ``D = t(0.975, v) SE / m_b``: the half-width of the
  95 % confidence interval of ``m_c - m_b``, relative to the baseline. A difference smaller than
  ``D`` is not significant at the 5 % level (two-sided Welch t-test), so these runs cannot tell
  it from noise. (It is the significance threshold, not a power-based minimum detectable
  effect: a true difference of exactly ``D`` is detected about half the time.)
- the gate's threshold ``max(D, max_slowdown)``: **regressed** when ``d`` is above it,
  **improved** when ``d`` is below minus it, otherwise **indistinguishable** (the reason says
  whether ``D`` or the allowed slowdown decided). **not comparable** when the bundles' measurement
  context differs (:mod:`profiling_worker.gate.context`), a side has fewer than ``min_runs`` runs,
  the baseline mean is not positive, or the row exists on one side only.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from profiling_worker.gate.context import context_differences
from profiling_worker.gate.sides import GateSide
from profiling_worker.schema import columns as C, intervals


class Outcome(str, enum.Enum):
    """The four outcomes of one region x config."""

    REGRESSED = "regressed"
    IMPROVED = "improved"
    INDISTINGUISHABLE = "indistinguishable"
    NOT_COMPARABLE = "not comparable"

    def __str__(self) -> str:
        return str(self.value)


#: How a page names the two directed outcomes for a metric that is not a duration (higher SM %
#: or bytes is not necessarily worse).
NOT_DURATION_WORDS = {Outcome.REGRESSED.value: "candidate higher",
                      Outcome.IMPROVED.value: "candidate lower"}

# Columns of the judgement frame (the sides' figures use the compare page's names).
CONFIG_LABEL = C.CONFIG_LABEL
DIFF_PCT = "DiffPct"  # 100 (m_c - m_b) / m_b
DIFF_CI95_LOWER_PCT = "DiffCI95LowerPct"
DIFF_CI95_UPPER_PCT = "DiffCI95UpperPct"
DETECTABLE_PCT = "DetectablePct"  # 100 D
THRESHOLD_PCT = "ThresholdPct"  # max(D, max_slowdown), %
WELCH_DF = "WelchDf"
OUTCOME = "Outcome"
REASON = C.REASON
AVG = "Avg"  # a side's mean is <side>Avg; its spread and count <side>StdDev, <side>Runs
SIDE_COLUMNS = {C.AVG: AVG, C.STD: C.STD, C.NUM_RUNS: C.RUNS}
BASELINE, CANDIDATE = C.BASELINE, C.CANDIDATE


@dataclass(frozen=True)
class GateOptions:
    """Attributes:
        max_slowdown_pct: slowdown (%) the candidate may have before it counts as regressed
            (and the speed-up it needs to count as improved).
        min_runs: fewer runs than this on a side: not comparable (at least 2: one run has no
            spread).
        metric: metric to judge (None: each bundle's duration metric, lower is better).
    """

    max_slowdown_pct: float = 3.0
    min_runs: int = intervals.MIN_RUNS
    metric: str | None = None


@dataclass(frozen=True)
class GateResult:
    """Attributes:
        baseline, candidate: job ids.
        metric: the metric judged.
        options: what the judgement used.
        context: the measurement-context differences (each row not comparable when any).
        rows: one row per region x config, columns Annotation, <params>, ConfigLabel, Metric,
            Unit, BaselineAvg, BaselineStdDev, BaselineRuns, Candidate..., DiffPct,
            DiffCI95LowerPct, DiffCI95UpperPct, DetectablePct, ThresholdPct, WelchDf, Outcome,
            Reason (NaN figures where a side is missing or has under 2 runs).
    """

    baseline: str
    candidate: str
    metric: str
    options: GateOptions
    context: list[str] = field(default_factory=list)
    rows: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)

    def count(self, outcome: Outcome) -> int:
        """Rows with ``outcome``."""
        return int((self.rows[OUTCOME] == outcome.value).sum()) if len(self.rows) else 0


def judge(baseline: GateSide, candidate: GateSide, options: GateOptions) -> GateResult:
    """Judge ``candidate`` against ``baseline``, every region x config of either side (a row
    on one side only is not comparable); see the module docstring for the formulas."""
    metric = options.metric or baseline.duration_metric
    context = context_differences(baseline.manifest, candidate.manifest)
    params_b, params_c = baseline.parameters, candidate.parameters
    if set(params_b) != set(params_c):
        context = context + [f"config parameters: {', '.join(params_b) or 'none'} vs "
                             f"{', '.join(params_c) or 'none'}"]
    same = set(params_b) == set(params_c) and params_b
    keys = [C.ANNOTATION, *(params_b if same else (C.CONFIG,))]  # else configs by index
    both = _side_frame(baseline, metric, keys, BASELINE).merge(
        _side_frame(candidate, metric, keys, CANDIDATE), on=keys, how="outer", indicator=True)
    unit = both.pop(BASELINE + C.UNIT).fillna(both.pop(CANDIDATE + C.UNIT))
    both.insert(len(keys), C.METRIC, metric)
    both.insert(len(keys) + 1, C.UNIT, unit)
    both.insert(len(keys), CONFIG_LABEL, [", ".join(f"{k}={r[k]}" for k in keys[1:])
                                          for _, r in both.iterrows()])
    _add_statistics(both)
    judged = [_outcome(r, context, options) for _, r in both.iterrows()]
    both[OUTCOME] = [o.value for o, _ in judged]
    both[REASON] = [why for _, why in judged]
    both[THRESHOLD_PCT] = np.maximum(both[DETECTABLE_PCT], options.max_slowdown_pct)
    rows = both.drop(columns="_merge").sort_values(keys, kind="stable").reset_index(drop=True)
    return GateResult(baseline.job_id, candidate.job_id, metric, options, context, rows)


def _side_frame(side: GateSide, metric: str, keys: list[str], name: str) -> pd.DataFrame:
    agg = side.aggregated
    if agg.empty or C.METRIC not in agg:
        return pd.DataFrame(columns=[*keys, *(name + v for v in SIDE_COLUMNS.values()),
                                     name + C.UNIT])
    rows = agg[agg[C.METRIC] == metric]
    cols = {**SIDE_COLUMNS, C.UNIT: C.UNIT}
    return rows[keys + list(cols)].rename(columns={k: name + v for k, v in cols.items()})


def _add_statistics(frame: pd.DataFrame) -> None:
    """DiffPct, its CI95, DetectablePct and WelchDf, in place (formulas: module docstring)."""
    mb, mc = frame[BASELINE + AVG].astype(float), frame[CANDIDATE + AVG].astype(float)
    half, df = intervals.welch_ci95_half_width(
        frame[BASELINE + C.STD].astype(float), frame[BASELINE + C.RUNS].astype(float),
        frame[CANDIDATE + C.STD].astype(float), frame[CANDIDATE + C.RUNS].astype(float))
    with np.errstate(divide="ignore", invalid="ignore"):
        frame[DIFF_PCT] = 100.0 * (mc - mb) / mb
        frame[DETECTABLE_PCT] = 100.0 * half / mb
    # A non-negative quantity (a duration, bytes) cannot fall by more than 100 %: the lower
    # bound is cut there, as the CI95 lower bounds of such quantities are cut at 0.
    floor = np.where((mb >= 0) & (mc >= 0), -100.0, -np.inf)
    frame[DIFF_CI95_LOWER_PCT] = np.maximum(frame[DIFF_PCT] - frame[DETECTABLE_PCT], floor)
    frame[DIFF_CI95_UPPER_PCT] = frame[DIFF_PCT] + frame[DETECTABLE_PCT]
    frame[WELCH_DF] = df


def _outcome(row: pd.Series, context: list[str], options: GateOptions) -> tuple[Outcome, str]:
    """One row's outcome and the sentence that says why, with its figures."""
    missing = [] if row["_merge"] == "both" else [
        f"only in the {'baseline' if row['_merge'] == 'left_only' else 'candidate'}"]
    if context or missing:
        return Outcome.NOT_COMPARABLE, "; ".join(context + missing)
    few = [f"{name.lower()} has {int(row[name + C.RUNS])} run(s)"
           for name in (BASELINE, CANDIDATE) if row[name + C.RUNS] < max(options.min_runs, 2)]
    if few:
        return Outcome.NOT_COMPARABLE, (f"{' and '.join(few)}; at least "
                                        f"{max(options.min_runs, 2)} needed for a spread")
    if not row[BASELINE + AVG] > 0:
        return Outcome.NOT_COMPARABLE, f"baseline mean is {row[BASELINE + AVG]:g} {row[C.UNIT]}"
    diff, detect, allowed = row[DIFF_PCT], row[DETECTABLE_PCT], options.max_slowdown_pct
    d = _distinct_decimals(diff, detect, allowed)
    figures = (f"{diff:+.{d}f} % (95 % CI {row[DIFF_CI95_LOWER_PCT]:+.{d}f} .. "
               f"{row[DIFF_CI95_UPPER_PCT]:+.{d}f} %)")
    if abs(diff) <= detect:
        return Outcome.INDISTINGUISHABLE, (f"{figures}: below the {detect:.{d}f} % these runs "
                                           "can detect")
    if abs(diff) <= allowed:
        return Outcome.INDISTINGUISHABLE, (f"{figures}: detectable ({detect:.{d}f} %) but "
                                           f"within the {allowed:g} % allowed")
    outcome = Outcome.REGRESSED if diff > 0 else Outcome.IMPROVED
    return outcome, (f"{figures}: beyond the {allowed:g} % allowed and the {detect:.{d}f} % "
                     "these runs can detect")


def _distinct_decimals(diff: float, *thresholds: float) -> int:
    """Decimals (2 to 6) at which ``|diff|`` prints unlike each threshold, so that a difference
    of 0.4714 % is not written "+0.47 %: beyond the 0.47 % allowed"."""
    for decimals in range(2, 6):
        if all(f"{abs(diff):.{decimals}f}" != f"{t:.{decimals}f}" for t in thresholds):
            return decimals
    return 6
