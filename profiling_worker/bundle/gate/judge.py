"""The regression gate's judgement: every region (annotation) x config of two bundles gets one
:class:`~profiling_worker.bundle.gate.verdict.Outcome` with the figures and the sentence that
decided it.

The rule (intervals, thresholds, the cycle check, the runs an ambiguous row needs) is
:mod:`profiling_worker.bundle.gate.verdict`; this module lines the two bundles up and says what
stops a row from being judged. **not comparable** when the bundles' measurement context differs
(:mod:`profiling_worker.bundle.gate.context`: backend, run options, GPU, tool versions, ncu metric
set, a partial bundle), the row exists on one side only, a side has fewer than ``min_runs`` runs or
fewer runs than its spec asks (a truncated bundle), the baseline mean is not positive, or a
side's runs fail the validity audit so that their mean is no single figure (two modes or a step,
a time below the physical minimum: :mod:`profiling_worker.bundle.gate.runs_context`, which also
gives the caveats said beside an outcome, e.g. "clock not checked", "power-capped runs"). A
not-comparable row still carries the statistics where they can be formed, and its reason gives
the runs' figures, so nothing measured is hidden; but no outcome of them (TimeOutcome and
CyclesOutcome say "not comparable" too), no caveat of a direction and no runs to decide it
(NaN): a banner of "not comparable" and a row reading "regressed" would contradict each other.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

import pandas as pd

from profiling_worker.bundle.gate import cycles as K, verdict as V
from profiling_worker.bundle.gate.context import (INCOMPLETE, MEASURED, Difference, differences,
                                                  headline)
from profiling_worker.bundle.gate.runs_context import RunsContext, job_caveats, runs_context
from profiling_worker.bundle.gate.sides import GateSide
from profiling_worker.bundle.gate.verdict import Outcome as Outcome  # re-exported: callers' import
from profiling_worker.bundle.schema import columns as C, intervals
from profiling_worker.bundle.schema.run_audit import ConfigAudit
from profiling_worker.bundle.number_text import counted, fmt

#: Where a not comparable row's reason turns from why (its blockers) to the runs' figures.
RUNS_ALONE = "the runs alone: "

#: How a page names the two directed outcomes for a metric that is not a duration (higher SM %
#: or bytes is not necessarily worse).
NOT_DURATION_WORDS = {Outcome.REGRESSED.value: "candidate higher",
                      Outcome.IMPROVED.value: "candidate lower"}

# Columns of the judgement frame (the sides' figures use the compare page's names).
CONFIG_LABEL = C.CONFIG_LABEL
DIFF_PCT = "DiffPct"  # 100 (m_c - m_b) / m_b
DIFF_CI95_LOWER_PCT = "DiffCI95LowerPct"
DIFF_CI95_UPPER_PCT = "DiffCI95UpperPct"
DETECTABLE_PCT = "DetectablePct"  # the interval's half-width (%): smaller differences are noise
THRESHOLD_PCT = "ThresholdPct"  # the allowed change, +/- (%)
WELCH_DF = "WelchDf"
#: The rule on the metric alone, before the cycle check ("not comparable" where the row is).
TIME_OUTCOME = "TimeOutcome"
CYCLES_DIFF_PCT = "CyclesDiffPct"
CYCLES_CI95_LOWER_PCT = "CyclesCI95LowerPct"
CYCLES_CI95_UPPER_PCT = "CyclesCI95UpperPct"
CYCLES_OUTCOME = "CyclesOutcome"  # the rule on time x SM clock (None: no clock on a side)
RUNS_TO_DECIDE = "RunsToDecide"  # runs a side an ambiguous row would likely need (NaN: none)
CAVEATS = "Caveats"  # said beside the outcome: "clock not checked", "power-capped runs"...
OUTCOME = "Outcome"
REASON = C.REASON
AVG = "Avg"  # a side's mean is <side>Avg; its spread and count <side>StdDev, <side>Runs
SIDE_COLUMNS = {C.AVG: AVG, C.STD: C.STD, C.NUM_RUNS: C.RUNS}
BASELINE, CANDIDATE = C.BASELINE, C.CANDIDATE
#: How the context names two sides' different duration metrics (no metric asked: each side is
#: judged on its own backend's, e.g. CUPTI's kernel time against the events backend's region
#: time, which holds launch overhead: a measurement difference, not a missing row).
DURATION_METRIC_FIELD = "duration metric"


@dataclass(frozen=True)
class GateOptions:
    """Attributes:
        max_slowdown_pct: the allowed change (%): a slowdown the whole interval must exceed to
            count as regressed, a speed-up to count as improved; same inside it.
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
        baseline, candidate: job ids (the bundle folders' names).
        baseline_label, candidate_label: the jobs' labels from their spec or manifest
            (:attr:`~profiling_worker.bundle.gate.sides.GateSide.label`; "" without one).
        metric: the metric judged (the baseline's, where the sides' duration metrics differ).
        candidate_metric: the candidate's duration metric where it is not ``metric`` (an
            events job against a CUPTI one: each side's own durations are lined up, and the
            pair is not comparable, :data:`DURATION_METRIC_FIELD`), else None.
        options: what the judgement used.
        context: the measurement-context differences, each naming the recorded field and both
            sides' values (each row not comparable when any).
        context_headline: what they amount to, in words
            (:func:`~profiling_worker.bundle.gate.context.headline`; "" when none): measured
            differently, timed on a contended CPU, incomplete.
        cycles_source: where the cycle check's SM cycles came from
            (:func:`profiling_worker.bundle.gate.cycles.sources`), None when it could not run.
        rows: one row per region x config, columns Annotation, <params>, ConfigLabel, Metric,
            Unit, BaselineAvg, BaselineStdDev, BaselineRuns, Candidate..., DiffPct,
            DiffCI95LowerPct, DiffCI95UpperPct, DetectablePct, WelchDf, Cycles... (NaN without
            the cycle check), ThresholdPct, TimeOutcome, CyclesOutcome, RunsToDecide, Outcome,
            Reason (NaN figures where a side is missing or has under 2 runs), Caveats (what
            the runs say beside the outcome, :mod:`profiling_worker.bundle.gate.runs_context`; ""
            for none).
        job_caveats: each side's job-wide caveat with its evidence, said once for the pair
            (:func:`~profiling_worker.bundle.gate.runs_context.job_caveats`; a row's reason
            names its runs only).
        incomplete: those of ``context`` that say a side is unfinished or partial (its status,
            its partial record): Compare says a partial side in a box of its own, so its Not
            comparable box leaves them out (session 23's fresh user read them twice).
    """

    baseline: str
    candidate: str
    metric: str
    options: GateOptions
    context: list[str] = field(default_factory=list)
    cycles_source: str | None = None
    rows: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    context_headline: str = ""
    baseline_label: str = ""
    candidate_label: str = ""
    candidate_metric: str | None = None
    job_caveats: list[str] = field(default_factory=list)
    incomplete: list[str] = field(default_factory=list)

    @property
    def metrics_text(self) -> str:
        """The metric judged, or both sides' where they differ (``"gpu__time_duration.sum vs
        events__time_duration.sum"``)."""
        return f"{self.metric} vs {self.candidate_metric}" if self.candidate_metric \
            else self.metric

    def count(self, outcome: Outcome) -> int:
        """Rows with ``outcome``."""
        return int((self.rows[OUTCOME] == outcome.value).sum()) if len(self.rows) else 0


def judge(baseline: GateSide, candidate: GateSide, options: GateOptions,
          ignore: Collection[str] = ()) -> GateResult:
    """Judge ``candidate`` against ``baseline``, every region x config of either side (a row
    on one side only is not comparable).

    Args:
        ignore: context fields not held against the pair
            (:func:`~profiling_worker.bundle.gate.context.context_differences`; the backends page
            compares two backends on purpose).
    """
    metric = options.metric or baseline.duration_metric
    metric_c = options.metric or candidate.duration_metric  # durations: each side's own
    found = differences(baseline.manifest, candidate.manifest, ignore)
    params_b, params_c = baseline.parameters, candidate.parameters
    if set(params_b) != set(params_c):
        found.append(Difference(MEASURED, f"config parameters: {', '.join(params_b) or 'none'} "
                                          f"vs {', '.join(params_c) or 'none'}"))
    if metric_c != metric:
        found.append(Difference(MEASURED, f"{DURATION_METRIC_FIELD}: {metric} vs {metric_c}"))
    context = [d.text for d in found]
    same = set(params_b) == set(params_c) and params_b
    keys = [C.ANNOTATION, *(params_b if same else (C.CONFIG,))]  # else configs by index
    both = _side_frame(baseline, metric, keys, BASELINE).merge(
        _side_frame(candidate, metric_c, keys, CANDIDATE), on=keys, how="outer", indicator=True)
    unit = both.pop(BASELINE + C.UNIT).fillna(both.pop(CANDIDATE + C.UNIT))
    both.insert(len(keys), C.METRIC, metric)
    both.insert(len(keys) + 1, C.UNIT, unit)
    both.insert(len(keys), CONFIG_LABEL, [", ".join(f"{k}={r[k]}" for k in keys[1:])
                                          for _, r in both.iterrows()])
    gpu_time = metric == metric_c == C.GPU_TIME
    source = _cycles(both, baseline, candidate, keys) if metric == baseline.duration_metric \
        and gpu_time else None
    _add_statistics(both, source is not None)
    both[THRESHOLD_PCT] = options.max_slowdown_pct
    spec_runs = [baseline.asked_runs, candidate.asked_runs]
    # the audit checks the durations' runs
    audited = metric == baseline.duration_metric and metric_c == candidate.duration_metric
    judged = [_row_verdict(r, context, options, spec_runs, source,
                           _audits(r, baseline, candidate) if audited else {},
                           gpu_time) for _, r in both.iterrows()]
    for column, values in zip((TIME_OUTCOME, CYCLES_OUTCOME, RUNS_TO_DECIDE, OUTCOME, REASON,
                               CAVEATS), zip(*judged) if judged else [[]] * 6):
        both[column] = list(values)
    rows = both.drop(columns=["_merge", "_time", "_cycles", *_CONFIG_OF.values()])
    rows = rows.sort_values(keys, kind="stable")
    rows = rows.reset_index(drop=True)
    caveats = job_caveats({"baseline": baseline.job_evidence,
                           "candidate": candidate.job_evidence}) if audited else []
    return GateResult(baseline.job_id, candidate.job_id, metric, options, context, source, rows,
                      headline(found), baseline.label, candidate.label,
                      metric_c if metric_c != metric else None, caveats,
                      [d.text for d in found if d.kind == INCOMPLETE])


#: Side -> the column holding its config index while judging (configs may be numbered apart).
_CONFIG_OF = {BASELINE: "_config_b", CANDIDATE: "_config_c"}


def _side_frame(side: GateSide, metric: str, keys: list[str], name: str) -> pd.DataFrame:
    agg = side.aggregated
    if agg.empty or C.METRIC not in agg:
        return pd.DataFrame(columns=[*keys, *(name + v for v in SIDE_COLUMNS.values()),
                                     name + C.UNIT, _CONFIG_OF[name]])
    rows = agg[agg[C.METRIC] == metric]
    cols = {**SIDE_COLUMNS, C.UNIT: C.UNIT}
    out = rows[keys + list(cols)].rename(columns={k: name + v for k, v in cols.items()})
    return out.assign(**{_CONFIG_OF[name]: rows[C.CONFIG].to_numpy()})


def _audits(row: pd.Series, baseline: GateSide, candidate: GateSide
            ) -> dict[str, ConfigAudit | None]:
    """Each side's run audit of the row's region x config (None where it has none)."""
    out: dict[str, ConfigAudit | None] = {}
    for name, side in ((BASELINE, baseline), (CANDIDATE, candidate)):
        config = row[_CONFIG_OF[name]]
        out[name.lower()] = None if pd.isna(config) else side.audit.get(
            (str(row[C.ANNOTATION]), int(config)))
    return out


def _cycles(both: pd.DataFrame, baseline: GateSide, candidate: GateSide,
            keys: list[str]) -> str | None:
    """Add each side's Cycles{Avg,StdDev,Runs} to ``both`` (in place) from the first cycle
    source both bundles hold; that source, or None when there is none."""
    tables = [(s.runs, s.collectors) for s in (baseline, candidate)]
    source = K.common_source(*tables)
    if source is None or any(C.METRIC not in runs or not set(keys) <= set(runs)
                             for runs, _ in tables):
        return None
    for name, (runs, collectors) in zip((BASELINE, CANDIDATE), tables):
        per = K.cycles_per_run(runs, collectors, source, keys)
        per = per.rename(columns={c: name + c for c in (K.CYCLES_AVG, K.CYCLES_STD,
                                                        K.CYCLES_RUNS)})
        merged = both[keys].merge(per, on=keys, how="left")
        for column in per.columns.difference(keys):
            both[column] = merged[column].to_numpy()
    return source


def _add_statistics(frame: pd.DataFrame, with_cycles: bool) -> None:
    """The metric's interval (and the cycles', when there), in place
    (:func:`profiling_worker.bundle.gate.verdict.relative_difference`)."""
    time = V.relative_difference(frame, BASELINE, CANDIDATE, AVG, C.STD, C.RUNS)
    frame[DIFF_PCT], frame[DETECTABLE_PCT] = time["DiffPct"], time["HalfPct"]
    frame[DIFF_CI95_LOWER_PCT], frame[DIFF_CI95_UPPER_PCT] = time["LowerPct"], time["UpperPct"]
    frame[WELCH_DF] = time["Df"]
    frame["_time"] = pd.Series(_intervals(time), index=frame.index, dtype=object)
    names = (CYCLES_DIFF_PCT, CYCLES_CI95_LOWER_PCT, CYCLES_CI95_UPPER_PCT)
    if not with_cycles:
        frame[list(names)] = float("nan")
        frame["_cycles"] = None
        return
    cyc = V.relative_difference(frame, BASELINE + K.CYCLES, CANDIDATE + K.CYCLES, AVG, C.STD,
                                C.RUNS)
    for name, column in zip(names, ("DiffPct", "LowerPct", "UpperPct")):
        frame[name] = cyc[column]
    frame["_cycles"] = pd.Series(_intervals(cyc), index=frame.index, dtype=object)


def _intervals(stats: pd.DataFrame) -> list[V.Interval | None]:
    """One :class:`~profiling_worker.bundle.gate.verdict.Interval` per row (None: not formed)."""
    out: list[V.Interval | None] = []
    for r in stats.to_dict("records"):
        figures = [float(r[k]) for k in ("DiffPct", "LowerPct", "UpperPct", "HalfPct", "RelVar")]
        ok = all(pd.notna(x) for x in (r["Df"], *figures[:4]))
        diff, lower, upper, half, rel_var = figures
        out.append(V.Interval(diff, lower, upper, half, rel_var, int(r[C.RUNS]),
                              float(r["UncutLowerPct"])) if ok else None)
    return out


def _blockers(row: pd.Series, context: list[str], options: GateOptions,
              spec_runs: list[int | None]) -> list[str]:
    """Why this row cannot be judged (empty: it can); ``spec_runs``: each side's
    :attr:`~profiling_worker.bundle.gate.sides.GateSide.asked_runs`."""
    if row["_merge"] != "both":
        return context + [f"only in the "
                          f"{'baseline' if row['_merge'] == 'left_only' else 'candidate'}"]
    out = list(context)
    need = max(options.min_runs, 2)
    few = [f"{name.lower()} has {counted(int(row[name + C.RUNS]), 'run')}"
           for name in (BASELINE, CANDIDATE) if row[name + C.RUNS] < need]
    if few:
        out.append(f"{' and '.join(few)}; at least {need} needed for a spread")
    out += [f"{name.lower()} has {int(row[name + C.RUNS])} of the {counted(asked, 'run')} "
            "its spec asks "
            "(a truncated bundle)" for name, asked in zip((BASELINE, CANDIDATE), spec_runs)
            if asked is not None and need <= row[name + C.RUNS] < asked]
    if not row[BASELINE + AVG] > 0:
        # fmt: "-3,982,000 byte", never "-3.9819e+06 byte" (issue 37's one number format)
        out.append(f"baseline mean is {fmt(row[BASELINE + AVG])} {row[C.UNIT]}")
    return out


def _row_verdict(row: pd.Series, context: list[str], options: GateOptions,
                 spec_runs: list[int | None], source: str | None,
                 audits: dict[str, ConfigAudit | None], on_gpu: bool
                 ) -> tuple[str | None, str | None, float, str, str, str]:
    """(TimeOutcome, CyclesOutcome, RunsToDecide, Outcome, Reason, Caveats) of one row;
    ``audits``: each side's run audit (:func:`_audits`; empty when the metric is not the
    duration the audit checks)."""
    allowed = options.max_slowdown_pct
    blockers = _blockers(row, context, options, spec_runs)
    time: V.Interval | None = row["_time"] if row[BASELINE + AVG] > 0 else None
    unjudged = Outcome.NOT_COMPARABLE.value
    if time is None:
        return (unjudged, None, float("nan"), unjudged,
                "; ".join(blockers or ["no 95 % interval can be formed from these figures"]), "")
    told = V.decide(time, allowed)
    cyc: V.Interval | None = row["_cycles"]
    cycles = V.decide(cyc, allowed) if cyc is not None else None
    final = V.with_cycles(told, cycles)
    said = runs_context(audits, final, cyc is not None, on_gpu)
    blockers += list(said.blockers)
    clocks = _clocks_text(row, source, cyc, allowed)
    if blockers:  # no outcome, caveat of a direction or runs to suggest: only the figures
        said = runs_context(audits, Outcome.NOT_COMPARABLE, cyc is not None, on_gpu)
        reason = f"{'; '.join(blockers)}; {RUNS_ALONE}{V.figures(time, allowed)}{clocks}"
        return (unjudged, unjudged if cyc is not None else None, float("nan"), unjudged,
                _with_details(reason, said), ", ".join(said.caveats))
    runs = V.runs_to_decide(time, allowed) if told is Outcome.AMBIGUOUS else float("nan")
    why = V.explain(told, time, allowed)
    if cycles is not None:
        why += f"{clocks}: {cycles}"
        if final is Outcome.CLOCK_EXPLAINED:
            why += f", so the clock explains the {told} time"
    return (told.value, cycles.value if cycles else None, runs, final.value,
            _with_details(why, said), ", ".join(said.caveats))


def _clocks_text(row: pd.Series, source: str | None, cyc: V.Interval | None,
                 allowed: float) -> str:
    """``"; in cycles (<source>; SM clock 1755 vs 1980 MHz) <figures>"``, "" without the cycle
    check."""
    if cyc is None:
        return ""
    # cycles/ns = GHz -> MHz; none for a mean duration of 0 (the timer check names it)
    clocks = [row[side + K.CYCLES_AVG] / row[side + AVG] * 1e3 if row[side + AVG] > 0
              else float("nan") for side in (BASELINE, CANDIDATE)]
    return (f"; in cycles ({source}; SM clock {clocks[0]:.0f} vs {clocks[1]:.0f} MHz) "
            f"{V.figures(cyc, allowed)}")


def _with_details(reason: str, said: RunsContext) -> str:
    """``reason`` and the caveats' evidence."""
    return reason + ("; caveats: " + "; ".join(said.details) if said.details else "")
