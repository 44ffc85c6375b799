"""Compare two jobs: per annotation x config the ratio candidate / baseline of a metric's mean,
with an approximate 95 % confidence interval, and the regression gate's outcome.

Ratio CI (:func:`profiling_worker.bundle.schema.intervals.ratio_ci95_bounds`, RATIO_METHOD there):
Fieller's 95 % interval of ``m_c / m_b`` (the baseline's variance scaled by the ratio squared;
t at the Welch-Satterthwaite degrees of freedom), unbounded (RatioCI95Upper ``inf``) where the
baseline mean cannot be told from 0. RatioCI95Lower/Upper - 1 are the gate's
DiffCI95LowerPct/UpperPct / 100: one interval, not two methods.

The **Verdict** is the regression gate's outcome (:mod:`profiling_worker.bundle.gate.verdict`, the
judgement ``python -m profiling_worker compare`` makes in CI): regressed / improved (the whole 95 %
interval of the difference beyond the allowed change), same (inside it), ambiguous (straddling it;
RunsToDecide), clock-explained (the time differs but the SM cycles do not; CyclesDiffPct) or not
comparable (measurement context differs, a truncated bundle, fewer than 2 runs a side, zero
baseline). For a metric that is not a duration "regressed"/"improved" read "candidate
higher"/"candidate lower". ``CIsOverlap`` (the two CI95 intervals overlap) and ``RatioExcludesOne``
are kept for the backends view.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from profiling_worker.bundle.gate import judge as gate, report as gate_report
from profiling_worker.bundle.gate.context import INCOMPLETE, differences
from profiling_worker.bundle.gate.exit_codes import EXIT_BAD_INPUT, EXIT_NOT_JUDGED
from profiling_worker.bundle.gate.sides import GateSide, refusal
from profiling_worker.bundle.schema import backends as B, columns as C, intervals, partial
from profiling_worker.bundle.schema.manifest import JobStatus
from profiling_worker.bundle.number_text import counted, recorded_time
from profiling_worker.bundle.schema.spec import JobSpec

from profiling_worker.bundle.loader import Bundle
from app.core.views.run_audit import audit_frame
from profiling_worker.bundle.schema.bundle_spec import PartialSpec
from app.core import derived, metric_roles, numbers
from app.core.derived import DEFAULT_TIME_UNIT
from app.core.metrics import MissingData, with_labels
from app.core import frame_columns as F

SIDES = (F.BASELINE, F.CANDIDATE)
#: The gate's columns the compare frame carries (figures in %, see
#: profiling_worker.bundle.gate.judge).
GATE_COLUMNS = (gate.DIFF_PCT, gate.DIFF_CI95_LOWER_PCT, gate.DIFF_CI95_UPPER_PCT,
                gate.DETECTABLE_PCT, gate.THRESHOLD_PCT, gate.CYCLES_DIFF_PCT,
                gate.TIME_OUTCOME, gate.CYCLES_OUTCOME, gate.RUNS_TO_DECIDE, gate.REASON,
                gate.CAVEATS)


@dataclass(frozen=True)
class CompareOptions:
    """Attributes:
        metric: metric to compare (None = the baseline's duration metric).
        max_slowdown_pct: the gate's allowed slowdown (%), as ``compare --max-slowdown``.
    """

    metric: str | None = None
    max_slowdown_pct: float = 3.0


def gate_side(bundle: Bundle) -> GateSide:
    """The gate's view of a loaded bundle (:meth:`~profiling_worker.bundle.gate.sides.GateSide.
    from_bundle`, as ``compare`` builds it), with its run audit derived once per bundle
    (:func:`~app.core.views.run_audit.audit_frame`), not per judgement."""
    return GateSide.from_bundle(bundle, audit_frame(bundle))


def gate_refusals(baseline: Bundle, candidate: Bundle) -> dict[str, str]:
    """``"baseline"``/``"candidate"`` -> why CI's gate refuses to judge that side
    (:func:`~profiling_worker.bundle.gate.sides.refusal`, the rule ``python -m profiling_worker
    compare`` applies before any verdict: it exits 2); empty when it judges the pair. The
    Compare page shows no verdict where this is not empty, so it never judges a pair CI
    refuses."""
    return {side: why for side, bundle in (("baseline", baseline), ("candidate", candidate))
            if (why := refusal(bundle)) is not None}


def refusal_text(refused: Mapping[str, str], ids: Mapping[str, str], where: str,
                 mark: Callable[[str], str] = str, escape: Callable[[str], str] = str) -> str:
    """What the Compare page, the comparison report and the agent door say when CI's gate
    refuses a pair (``refused``: :func:`gate_refusals`; ``ids``: side -> job id), one sentence
    for the three (issue 37: the report and the door gave a verdict on a pair the page
    refused): ``CI's gate refuses this comparison (python -m profiling_worker compare exits 2
    and judges nothing), so <where> gives no verdict: the baseline, <id>: <why>``. ``mark``
    formats a command or job id (Markdown code on the page), ``escape`` the reasons."""
    return (f"CI's gate refuses this comparison ({mark('python -m profiling_worker compare')} "
            f"exits {EXIT_BAD_INPUT} and judges nothing), so {where} gives no verdict: "
            + "; ".join(f"the {side}, {mark(ids[side])}: {escape(why)}"
                        for side, why in refused.items()))


def named_job(job_id: str, label: str | None, mark: Callable[[str], str] = str,
              escape: Callable[[str], str] = str) -> str:
    """A job as the pair line names it: its spec's label (as the History page's Label column
    gives it) with the id after it, ``gate candidate (`candidate`)``; the id alone where the
    label is empty or the id itself (a bundled example's). A fresh user read "Candidate
    candidate against baseline base": folder names, the labels never said. ``mark`` formats
    the id (Markdown code on the page), ``escape`` the label (the user's own text)."""
    label = (label or "").strip()
    return f"{escape(label)} ({mark(job_id)})" if label and label != job_id else mark(job_id)


def pair_line(candidate: str, baseline: str) -> str:
    """The Compare page's line above its chart: ``candidate`` and ``baseline`` as
    :func:`named_job` gives them."""
    return f"Candidate {candidate} against baseline {baseline}"


def gate_result(baseline: Bundle, candidate: Bundle, options: CompareOptions,
                ignore: Collection[str] = ()) -> gate.GateResult:
    """The regression gate's judgement of every region x config (rows on one side only too),
    as ``python -m profiling_worker compare`` makes it: without a metric, each side's duration
    metric; ``ignore``: context fields not held against the pair (the backends page's
    by-design ones)."""
    return gate.judge(gate_side(baseline), gate_side(candidate),
                      gate.GateOptions(max_slowdown_pct=options.max_slowdown_pct,
                                       metric=options.metric), ignore)


def join_keys(baseline: Bundle, candidate: Bundle) -> list[str]:
    """Annotation plus the config parameters both jobs have (Config index only without any):
    configs are matched by their values, so jobs with different size lists still line up."""
    params = [p for p in baseline.parameters if p in candidate.parameters]
    return [C.ANNOTATION, *(params or [C.CONFIG])]


def compare_frame(baseline: Bundle, candidate: Bundle, options: CompareOptions,
                  ignore: Collection[str] = (), judged: gate.GateResult | None = None
                  ) -> pd.DataFrame:
    """Candidate vs baseline per annotation x config for one metric (``ignore``: as
    :func:`gate_result`; ``judged``: :func:`gate_result` of the same jobs, options with the
    metric set and ``ignore``, when the caller has it: the judgement was half of the Compare
    page's 42 s CPU at 10,000 configs, made twice).

    Returns:
        Annotation, <params>, Verdict, DiffPct, DiffCI95LowerPct, DiffCI95UpperPct,
        TimeOutcome, CyclesDiffPct, CyclesOutcome, RunsToDecide, Reason (the gate's judgement
        first), Metric, Unit, then for each side (Baseline,
        Candidate) Avg, StdDev, CI95Lower, CI95Upper, RSD, Runs; Ratio (candidate / baseline),
        RatioCI95Lower, RatioCI95Upper (NaN below 2 runs a side), EnoughRuns, CIsOverlap,
        RatioExcludesOne (both False without enough runs); the gate's :data:`GATE_COLUMNS` and
        its outcome as Verdict (:func:`gate_result`). Only rows present in both jobs.

    Raises:
        MissingData: a job has no rows for the metric, or the two share no annotation x config.
    """
    metric = options.metric or baseline.duration_metric
    keys = join_keys(baseline, candidate)
    sides = [_side(b, metric, keys, name) for b, name in zip((baseline, candidate), SIDES)]
    both = sides[0].merge(sides[1], on=keys, how="inner")
    if both.empty:
        raise MissingData("The two jobs share no annotation × config with "
                          f"{metric} values.", "Compare jobs of the same kernels and sizes.")
    mb, mc = both[F.BASELINE_AVG], both[F.CANDIDATE_AVG]
    both[F.RATIO] = mc / mb
    both[F.RATIO_CI95_LOWER], both[F.RATIO_CI95_UPPER] = intervals.ratio_ci95_bounds(
        mb, both[F.BASELINE_STD_DEV], both[F.BASELINE_RUNS],
        mc, both[F.CANDIDATE_STD_DEV], both[F.CANDIDATE_RUNS])
    enough = ((both[F.BASELINE_RUNS] >= intervals.MIN_RUNS)
              & (both[F.CANDIDATE_RUNS] >= intervals.MIN_RUNS))
    both[F.ENOUGH_RUNS] = enough
    both[F.CIS_OVERLAP] = enough & ((both[F.BASELINE_CI95_LOWER] <= both[F.CANDIDATE_CI95_UPPER])
                                   & (both[F.CANDIDATE_CI95_LOWER] <= both[F.BASELINE_CI95_UPPER]))
    both[F.RATIO_EXCLUDES_ONE] = (both[F.RATIO_CI95_LOWER] > 1) | (both[F.RATIO_CI95_UPPER] < 1)
    both = _with_gate(both, keys, judged or gate_result(
        baseline, candidate, CompareOptions(metric, options.max_slowdown_pct), ignore))
    both.insert(len(keys), C.METRIC, metric)
    both.insert(len(keys) + 1, C.UNIT, both.pop(F.BASELINE_UNIT))
    both = both.drop(columns=[F.CANDIDATE_UNIT])
    first = [*keys, F.VERDICT, gate.CAVEATS, gate.DIFF_PCT, gate.DIFF_CI95_LOWER_PCT,
             gate.DIFF_CI95_UPPER_PCT,
             gate.TIME_OUTCOME, gate.CYCLES_DIFF_PCT, gate.CYCLES_OUTCOME, gate.RUNS_TO_DECIDE,
             gate.REASON]  # the judgement: time, cycles, the final verdict and why
    both = both[first + [c for c in both if c not in first]]
    params = tuple(k for k in keys if k != C.ANNOTATION)
    return with_labels(both, params)


_STATS = (C.AVG, C.STD, C.CI95_LOWER, C.CI95_UPPER, C.RSD, C.NUM_RUNS, C.UNIT)
#: Aggregated column -> the compare frame's column, per side.
_SIDE_COLUMNS = {
    F.BASELINE: dict(zip(_STATS, (F.BASELINE_AVG, F.BASELINE_STD_DEV, F.BASELINE_CI95_LOWER,
                                  F.BASELINE_CI95_UPPER, F.BASELINE_RSD, F.BASELINE_RUNS,
                                  F.BASELINE_UNIT))),
    F.CANDIDATE: dict(zip(_STATS, (F.CANDIDATE_AVG, F.CANDIDATE_STD_DEV, F.CANDIDATE_CI95_LOWER,
                                   F.CANDIDATE_CI95_UPPER, F.CANDIDATE_RSD, F.CANDIDATE_RUNS,
                                   F.CANDIDATE_UNIT))),
}


#: The compare frame's columns in the metric's unit: each side's mean, spread and CI95.
VALUE_COLUMNS = tuple(cols[s] for cols in _SIDE_COLUMNS.values()
                      for s in (C.AVG, C.STD, C.CI95_LOWER, C.CI95_UPPER))


def compare_table(frame: pd.DataFrame, time_unit: str = DEFAULT_TIME_UNIT) -> pd.DataFrame:
    """The Compare page's table and CSV of :func:`compare_frame` (a copy): a duration metric's
    :data:`VALUE_COLUMNS` in ``time_unit`` (µs by default, as Size sweep and Stability show
    them; a fresh user of session 23 read ``17,242`` ns there beside ``17.2 µs``); any other
    metric's in the unit a person reads (:func:`app.core.derived.shown_scale`: Hz -> MHz); the
    Reason's values in that unit too (:func:`app.core.numbers.values_in`). The Unit column
    names the unit; the values are divided, never rounded, so the CSV keeps full precision.
    :func:`compare_frame` itself keeps ns (the share report, the agent door).

    Raises:
        KeyError: ``time_unit`` is none of ns, µs, ms.
    """
    if frame.empty or C.UNIT not in frame:
        return frame
    out = frame.copy()
    if set(out[C.METRIC]) <= set(C.DURATION_METRICS):
        stored, divisor, unit = "ns", numbers.TIME_UNITS[time_unit], time_unit
    else:
        divisor, shown = derived.shown_scale(out[C.UNIT].unique())
        if shown is None:  # as the file gives it (or rows in several units)
            return out
        stored, unit = metric_roles.unit_text(out[C.UNIT].iloc[0]), shown
    if gate.REASON in out:  # the sentence's values in the unit of the columns beside it
        out[gate.REASON] = numbers.values_in_column(out[gate.REASON], stored, unit, divisor)
    for name in VALUE_COLUMNS:
        if name in out:
            out[name] = out[name].astype(float) / divisor
    out[C.UNIT] = unit
    return out


def caveated_pairs(frame: pd.DataFrame) -> list[str]:
    """The pairs of :func:`compare_frame` whose verdict carries caveats, each named by its
    region and config (a config alone repeats when two regions share it), then its verdict
    and caveats: ``["fp16 n=4096: not comparable (clock-dropped runs)", ...]``. Plain text."""
    if gate.CAVEATS not in frame:
        return []
    caveated = frame[frame[gate.CAVEATS].fillna("") != ""]
    return [f"{a} {c}: {v} ({why})" for a, c, v, why in
            zip(caveated[C.ANNOTATION], caveated[F.CONFIG_LABEL], caveated[F.VERDICT],
                caveated[gate.CAVEATS])]


def blocked_pairs(frame: pd.DataFrame, judged: gate.GateResult,
                  time_unit: str = DEFAULT_TIME_UNIT) -> list[str]:
    """The pairs of :func:`compare_frame` that ``judged`` (its judgement) calls not comparable
    for a cause of their own (:func:`~profiling_worker.bundle.gate.report.blocked_by_row`:
    a side's runs not one population, too few runs...; not the pair's context, which the page's
    Not comparable box says), each named by region and config with the gate's why as
    ``compare``'s Markdown report writes it (:func:`~profiling_worker.bundle.gate.report.
    row_why`), its values in the table's unit (:func:`compare_table`): ``["fp32 n=128: the
    baseline's runs are not one population: two modes ...", ...]``. Plain text. A fresh user
    read "not comparable" with an empty Caveats cell and no word why (issue 37)."""
    if frame.empty or gate.REASON not in frame:
        return []
    reasons = frame[gate.REASON].fillna("").astype(str)
    own = [gate_report.blocked_by_row(judged, r) for r in reasons]
    blocked = frame[(frame[F.VERDICT] == gate.Outcome.NOT_COMPARABLE.value)
                    & np.array(own, dtype=bool)].copy()
    blocked[gate.REASON] = [gate_report.row_why(judged, r) for r in reasons[blocked.index]]
    shown = compare_table(blocked, time_unit)
    return [f"{a} {c}: {why}" for a, c, why in
            zip(shown[C.ANNOTATION], shown[F.CONFIG_LABEL], shown[gate.REASON])]


#: The most pairs :func:`blocked_text` names (the table's Reason column gives every one).
BLOCKED_SHOWN = 10


def blocked_text(blocked: list[str], pairs: int, mark: Callable[[str], str] = str,
                 escape: Callable[[str], str] = str) -> str:
    """What Compare says of the pairs of :func:`blocked_pairs` (``pairs``: the pairs shown):
    how many, then each with its reason, at most :data:`BLOCKED_SHOWN`. ``mark`` formats a
    column name and command (Markdown code on the page), ``escape`` the reasons."""
    more = len(blocked) - BLOCKED_SHOWN
    return (f"**{len(blocked):,} of {counted(pairs, 'pair')} not comparable**, each for a "
            f"reason of its own (column {mark(gate.REASON)}, as "
            f"{mark('python -m profiling_worker compare')} reports it):\n\n"
            + "\n".join(f"- {escape(pair)}" for pair in blocked[:BLOCKED_SHOWN])
            + (f"\n\n{more:,} more in the table's {mark(gate.REASON)} column." if more > 0
               else ""))


def _side(bundle: Bundle, metric: str, keys: list[str], name: str) -> pd.DataFrame:
    agg = bundle.table(C.TABLE_AGGREGATED)
    if agg.empty or C.METRIC not in agg or not (agg[C.METRIC] == metric).any():
        raise MissingData(f"Job {bundle.job_id} has no {metric} values.",
                          "Pick a metric both jobs collected.")
    rows = agg[agg[C.METRIC] == metric]
    cols = _SIDE_COLUMNS[name]
    out = rows[keys + list(cols)].rename(columns=cols)
    return out.reset_index(drop=True)


def _with_gate(both: pd.DataFrame, keys: list[str], result: gate.GateResult) -> pd.DataFrame:
    """``both`` plus the gate's columns and its outcome as Verdict, matched on ``keys`` (jobs
    whose config parameters differ are matched by the gate on nothing: all not comparable)."""
    rows = result.rows
    if all(k in rows for k in keys):
        out = both.merge(rows[[*keys, *GATE_COLUMNS, gate.OUTCOME]], on=keys, how="left")
    else:
        out = both.assign(**{c: np.nan for c in GATE_COLUMNS
                             if c not in (gate.REASON, gate.CAVEATS)}, **{gate.CAVEATS: ""},
                          **{gate.REASON: "; ".join(result.context),
                             gate.OUTCOME: gate.Outcome.NOT_COMPARABLE.value})
    verdict = out.pop(gate.OUTCOME)
    if result.metric not in C.DURATION_METRICS:
        verdict = verdict.replace(gate.NOT_DURATION_WORDS)
        out[gate.TIME_OUTCOME] = out[gate.TIME_OUTCOME].replace(gate.NOT_DURATION_WORDS)
    out[F.VERDICT] = verdict
    return out


@dataclass(frozen=True)
class JobSummary:
    """What :func:`default_candidate` needs to know of a job (from its manifest, no tables).

    Attributes:
        job_id: the job.
        created_at: ISO timestamp (newer sorts later).
        kernels: kernel ids of the spec.
        duration_metric: ``gpu__time_duration.sum``, ``host__time_duration.sum`` (cpu) or
            ``events__time_duration.sum`` (events).
        configs: the spec's config dicts (e.g. ``{"n": 4096}``).
        annotations: the spec's annotations, or None for all of the kernels'.
        backend: ``ncu``, ``cupti`` or ``cpu``.
        imported: an import: its kernel id is its file's name, which says nothing of the code.
        manifest: the job's manifest, for the gate's measurement context
            (:func:`~profiling_worker.bundle.gate.context.context_differences`); empty: not known.
        complete: False for a job that kept part of its configs (:func:`is_partial`): offered,
            but a complete job is preferred as the default.
    """

    job_id: str
    created_at: str = ""
    kernels: tuple[str, ...] = ()
    duration_metric: str = C.GPU_TIME
    configs: tuple[tuple[tuple[str, object], ...], ...] = ()
    annotations: tuple[str, ...] | None = None
    backend: str = ""
    imported: bool = False
    manifest: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    complete: bool = True

    @classmethod
    def of(cls, job_id: str, created_at: str, spec: JobSpec | PartialSpec | None,
           imported: bool = False, manifest: dict[str, Any] | None = None) -> JobSummary:
        """From a listed bundle's typed spec (None: nothing known besides the id); ``imported``:
        written by the importer (:func:`app.core.provenance.is_imported` of its manifest);
        ``manifest``: its manifest, so that a candidate measured alike is preferred."""
        complete = not is_partial(manifest or {})
        if spec is None:
            return cls(job_id=job_id, created_at=created_at or "", imported=imported,
                       manifest=dict(manifest or {}), complete=complete)
        return cls(job_id=job_id, created_at=created_at or "", kernels=spec.kernels,
                   duration_metric=B.duration_metric(spec.backend),
                   configs=tuple(tuple(sorted(c.items())) for c in spec.configs),
                   annotations=spec.annotations or None, backend=spec.backend,
                   imported=imported or isinstance(spec, PartialSpec),
                   manifest=dict(manifest or {}), complete=complete)


def measured_unlike(base: JobSummary, job: JobSummary) -> list[str]:
    """The gate's measurement-context differences of the pair
    (:func:`~profiling_worker.bundle.gate.context.differences`: backend, run options, GPU,
    tool versions, ncu metric set, host contention), each making every row not comparable;
    empty when they are measured alike or a manifest is not known. A side's incomplete
    results (a partial job: :func:`partial_text` says it) are not a way of measuring: left
    out, so a partial job is still matched with the jobs measured like it."""
    if not base.manifest or not job.manifest:
        return []
    return [d.text for d in differences(base.manifest, job.manifest) if d.kind != INCOMPLETE]


def _measures(job: JobSummary) -> str:
    if job.duration_metric == C.HOST_TIME:
        return f"host wall-clock time ({C.HOST_TIME}, cpu backend)"
    if job.duration_metric == C.EVENTS_TIME:
        return f"CUDA-event region time ({C.EVENTS_TIME}, events backend)"
    return f"GPU kernel time ({job.duration_metric})"


def _same_code(a: JobSummary, b: JobSummary) -> bool:
    """Whether the two jobs may have run the same code: a kernel in common, or either side an
    import (its kernel id is the uploaded file's name: two uploads of one program get two names;
    their regions and configs decide)."""
    return a.imported or b.imported or bool(set(a.kernels) & set(b.kernels))


def why_not_comparable(base: JobSummary, job: JobSummary) -> str | None:
    """Why ``job`` cannot be compared with ``base`` (None when it can): it measures another
    duration metric (cpu host timer vs GPU time: no values in common), or shares no kernel, no
    named annotation or no config with it, so :func:`compare_frame` would find no common row.
    A side whose spec does not say (e.g. an import without configs) is not held against it."""
    if job.duration_metric != base.duration_metric:
        return f"it measures {_measures(job)}, the baseline {_measures(base)}"
    if not _same_code(base, job) and base.kernels and job.kernels:
        return f"no kernel in common ({', '.join(job.kernels)})"
    if base.annotations and job.annotations and not set(base.annotations) & set(job.annotations):
        return f"no annotation in common ({', '.join(job.annotations)})"
    if base.configs and job.configs and not set(base.configs) & set(job.configs):
        return "no config (size) in common"
    return None


def candidates(baseline_id: str, jobs: list[JobSummary]) -> tuple[list[str], dict[str, str]]:
    """The jobs that can be compared with ``baseline_id``, the default first
    (:func:`default_candidate`), and job id -> reason for each job that cannot."""
    base = next((j for j in jobs if j.job_id == baseline_id), None)
    if base is None:
        return [j.job_id for j in jobs if j.job_id != baseline_id], {}
    refused = {j.job_id: why for j in jobs if j.job_id != baseline_id
               and (why := why_not_comparable(base, j))}
    offered = [j for j in jobs if j.job_id != baseline_id and j.job_id not in refused]
    if not offered:
        return [], refused
    first = default_candidate(baseline_id, offered + [base])
    return [first] + [j.job_id for j in offered if j.job_id != first], refused


#: What "most alike" means, in words (the order of :func:`default_candidate`): a user read
#: "this is the most alike" and could not tell alike in what.
ALIKE_MEANS = ("the same kernels, timing the same thing (GPU or host time), measured the same "
               "way or with the fewest differences (backend, run options, GPU, tool versions, "
               "ncu metric set), then the most sizes in common")
#: The job :func:`default_candidate` picks, named with what makes it the most alike.
MOST_ALIKE = f"the most alike job ({ALIKE_MEANS})"


#: The groups the jobs not offered as candidate are listed in, in order, with each group's name
#: (one job, several) and what it is: a count over every job of every source read as "27 of
#: your jobs are refused" to a user with 2 (issue 37).
REFUSED_GROUPS = {
    "own": ("job of yours", "jobs of yours", "submitted from this browser session"),
    "results": ("other result", "other results", "in this dashboard's result store: other "
                "sessions', kernel-sweep's and imported jobs"),
    "bundled": ("bundled example", "bundled examples", "recorded on an H200 and shipped with "
                "the app, of other kernels and sizes"),
}


def refused_groups(refused: Mapping[str, str], bundled: Iterable[str], own: Iterable[str]
                   ) -> dict[str, dict[str, str]]:
    """``refused`` (job id -> why, :func:`candidates`) split into the :data:`REFUSED_GROUPS`
    (this session's ``own`` jobs, the ``bundled`` ones, the others), in that order; empty
    groups left out."""
    own_set, bundled_set = set(own), set(bundled)
    groups: dict[str, dict[str, str]] = {name: {} for name in REFUSED_GROUPS}
    for job, why in refused.items():
        name = "own" if job in own_set else "bundled" if job in bundled_set else "results"
        groups[name][job] = why
    return {name: jobs for name, jobs in groups.items() if jobs}


def refused_title(groups: Mapping[str, Mapping[str, str]]) -> str:
    """The heading over :func:`refused_groups`: what is not offered, by group, and the rule,
    e.g. ``Not offered as candidate, nothing in common to compare with this baseline: 2 jobs
    of yours, 25 bundled examples``."""
    counts = [f"{len(jobs)} {REFUSED_GROUPS[name][0 if len(jobs) == 1 else 1]}"
              for name, jobs in groups.items()]
    return ("Not offered as candidate, nothing in common to compare with this baseline: "
            + ", ".join(counts))


def judged_baseline(preferred: str, jobs: list[JobSummary]) -> str:
    """The baseline Compare opens on when the user named none: ``preferred`` (the app's
    default job) when another job was measured like it (the gate can judge the pair), else
    the first of ``jobs`` that has such a job, those sharing a kernel with ``preferred`` first
    (the bundled ``h200-ncu-matmul-sweep`` has none: the page opened on a "Not comparable"
    warning), else ``preferred``."""
    by_id = {j.job_id: j for j in jobs}
    base = by_id.get(preferred)
    kernels = set(base.kernels) if base else set()
    order = sorted(jobs, key=lambda j: (j.job_id != preferred, not kernels & set(j.kernels)))
    for job in order:
        offered, _ = candidates(job.job_id, jobs)
        if job.complete and any(not measured_unlike(job, by_id[o]) and by_id[o].complete
                                for o in offered):
            return job.job_id
    return preferred


def default_baseline(candidate_id: str, jobs: list[JobSummary]) -> str:
    """The baseline Compare opens on for the job the user selected, ``candidate_id`` (the one
    they just ran): the job most like it (:func:`default_candidate`'s order: measured alike,
    most configs in common, ...) among those it can be compared with; ``candidate_id`` itself
    when there is none (the page then says so)."""
    offered, _ = candidates(candidate_id, jobs)
    return offered[0] if offered else candidate_id


def default_pair(selected: str | None, jobs: list[JobSummary], example: bool = False
                 ) -> tuple[str, str]:
    """The pair Compare opens on when the user named none (no ``?baseline=``, no pick on the
    page): ``selected`` (the sidebar's job) and the job most like it (:func:`default_baseline`),
    or, where ``example`` (the app opened on a bundled example, no job of the user's), the pair
    of :func:`judged_baseline` (one the gate can judge); where ``selected`` is not among
    ``jobs`` (running, queued, a Pre-flight pass), the newest job and the job most like it.

    Returns:
        (baseline, candidate) in time order (:func:`in_time_order`): the earlier job the
        baseline, so "a ratio below 1 means the candidate is faster" reads forward in time (a
        fresh user of session 22, a running job selected, read an older candidate against a
        newer baseline); ``(job, job)`` when no other job can be compared with it.

    Raises:
        ValueError: ``jobs`` is empty.
    """
    if not jobs:
        raise ValueError("no jobs to pair")
    by_id = {j.job_id: j for j in jobs}
    job = selected if selected in by_id else max(jobs, key=lambda j: _when(j.created_at)).job_id
    first = judged_baseline(job, jobs) if example else job
    return in_time_order(first, default_baseline(first, jobs), by_id)


def _when(stamp: str) -> datetime.datetime:
    """A manifest's ISO 8601 time (UTC where it names no zone); the earliest time when it is
    empty or not a time, so a job of unknown time counts as the earlier."""
    when = recorded_time(stamp)
    return when or datetime.datetime.min.replace(tzinfo=datetime.timezone.utc)


def in_time_order(job: str, other: str, by_id: Mapping[str, JobSummary]) -> tuple[str, str]:
    """(baseline, candidate) of the two jobs: the one created earlier (the manifest's
    ``created_at``, the submission; else ``started_at``: :attr:`JobSummary.created_at`) the
    baseline; on equal times ``job`` is the candidate (the job the user selected)."""
    return ((other, job) if _when(by_id[job].created_at) >= _when(by_id[other].created_at)
            else (job, other))


def is_partial(manifest: Mapping[str, Any]) -> bool:
    """Whether the job ended before measuring every config and kept those it measured (a
    cancel, a kernel that raised at some configs: the manifest's
    :data:`~profiling_worker.bundle.schema.partial.CONFIGS_KEY` record)."""
    return isinstance(manifest.get(partial.CONFIGS_KEY), Mapping)


#: Why Compare does not show the sidebar's job (queued, running, interrupted, or failed or
#: cancelled before it kept a config: :func:`comparable_job`).
NOT_SHOWN_WHY = "only finished jobs, or those that kept part of their configs, are compared"


def comparable_job(status: JobStatus, manifest: Mapping[str, Any]) -> bool:
    """Whether Compare offers the job: done, or finished and partial (:func:`is_partial`: its
    tables hold the configs measured). Queued, running, interrupted and failed jobs without
    configs kept have no values to compare."""
    return status == JobStatus.DONE or status.finished and is_partial(manifest)


def lacking_configs(manifest: Mapping[str, Any]) -> list[str]:
    """The labels of the configs a partial job did not measure (``n=4``), in spec order."""
    record = manifest.get(partial.CONFIGS_KEY)
    missing = record.get("not_measured") if isinstance(record, Mapping) else None
    return [str(m.get("label")) for m in missing or () if isinstance(m, Mapping)]


#: Why the gate gives no verdict with a partial side, said on the page beside it.
PARTIAL_NO_VERDICT = (
    "the gate gives no verdict with a partial side, whatever its configs measured say: a pass "
    "on those would say nothing of the configs it lacks, where a regression may be. Its rows "
    "read not comparable")


def partial_text(side: str, job_id: str, status: str, manifest: Mapping[str, Any],
                 mark: Callable[[str], str] = str, escape: Callable[[str], str] = str) -> str:
    """What Compare says of a partial side (:func:`is_partial`): which side and job, its status,
    the configs it lacks and how many it measured, that the ratios are those of the configs both
    jobs measured, and that the gate judges none (:data:`PARTIAL_NO_VERDICT`; ``python -m
    profiling_worker compare`` exits :data:`EXIT_NOT_JUDGED`). ``mark`` formats the job id and
    command (Markdown code on the page), ``escape`` the config labels."""
    record = manifest.get(partial.CONFIGS_KEY)
    record = record if isinstance(record, Mapping) else {}
    lacking = lacking_configs(manifest)
    total = int(record.get("total") or 0)
    listed = ", ".join(escape(c) for c in lacking[:8]) + (
        f" and {len(lacking) - 8} more" if len(lacking) > 8 else "")
    return (f"The {side}, {mark(job_id)}, is partial ({escape(status)}): it lacks {listed} "
            f"({total - len(lacking):,} of {counted(total, 'config')} measured). The ratios "
            "below are "
            f"those of the configs both jobs measured; {PARTIAL_NO_VERDICT} "
            f"({mark('python -m profiling_worker compare')} exits {EXIT_NOT_JUDGED}).")


def evidence_unsaid(judged: gate.GateResult, partial_sides: Collection[str]) -> list[str]:
    """The evidence of ``judged`` (its ``context``) that the Not comparable box gives: where a
    side is partial (``partial_sides``: "baseline", "candidate"), :func:`partial_text` says it
    in a box of its own above, so its status and partial record (``judged.incomplete``) are
    named as said there, not repeated: the box read "Partial: 3 of 5 configs measured; ..."
    word for word again (session 23's fresh user). Compare offers no side unfinished but a
    partial one (:func:`comparable_job`), so every incomplete side is in ``partial_sides``."""
    if not partial_sides:
        return list(judged.context)
    kept = [c for c in judged.context if c not in set(judged.incomplete)]
    return kept + [f"the {side} is partial, as said above" for side in partial_sides]


def alike_jobs(job_id: str, jobs: list[JobSummary]) -> list[str]:
    """The jobs the gate can judge against ``job_id``: comparable with it
    (:func:`candidates`) and measured like it (:func:`measured_unlike` empty)."""
    by_id = {j.job_id: j for j in jobs}
    offered, _ = candidates(job_id, jobs)
    return [o for o in offered
            if job_id in by_id and not measured_unlike(by_id[job_id], by_id[o])]


def none_alike_text(job_id: str, shown_with: str, mark: Callable[[str], str] = str) -> str:
    """What Compare says when no job is comparable with the selected ``job_id`` (measured
    differently, or timed on a contended host: :func:`measured_unlike`): the gate can judge none
    against it, so it is shown with ``shown_with``, the most alike, without a
    verdict. A fresh user opened ``?job=h200-ncu-matmul-sweep`` on a baseline it then called
    not comparable, with no word that none would be. How they differ (the evidence) is the
    page's Not comparable warning: a fresh user of session 22 read a fixed list of reasons and
    "Run its spec again" where the only difference was the host's contention, and a fresh user
    of session 23 read "measured differently" of two runs of one spec whose only difference was
    that both were timed on a busy CPU: the sentence names no kind of difference."""
    return (f"The gate judges no job here against {mark(job_id)}: every pair with it is not "
            f"comparable (why is said below). Shown with the most alike, {mark(shown_with)}, as "
            "ratios without a verdict.")


def default_candidate(baseline_id: str, jobs: list[JobSummary]) -> str:
    """The job to compare ``baseline_id`` against when the user has not picked one.

    Among the other jobs with the same kernels and duration metric, first those the gate can
    judge (measured alike: :func:`measured_unlike` empty; issue 37: the page opened on a pair
    it then refused), then the fewest measurement differences; among those the one sharing the
    most configs with the baseline (and, when annotations are named, at least one annotation),
    then the fewest configs only one of the two has (the same sizes before a superset: session
    26's fresh user got a newer 64-512 job for a 64-256 one beside its identical twin); on a tie
    the one with the same annotations, then on the same backend (one thing changed,
    e.g. cache control), then the most recent: for ``h200-ncu-j1-fp16`` that is
    ``h200-ncu-gate-base`` (measured alike), for ``h200-ncu-elementwise`` (no job measured
    alike) ``h200-ncu-elementwise-cache-none`` (one difference, the cache control).
    Falls back to the most recent other job that shares a config, then any other job; the
    baseline itself only when it is the only job.
    """
    base = next((j for j in jobs if j.job_id == baseline_id), None)
    others = [j for j in jobs if j.job_id != baseline_id]
    if not others:
        return baseline_id
    if base is None:
        return max(others, key=lambda j: j.created_at).job_id

    def shared(job: JobSummary) -> int:
        if (base.annotations and job.annotations
                and not set(base.annotations) & set(job.annotations)):
            return 0
        return len(set(base.configs) & set(job.configs))

    alike = [j for j in others if (set(j.kernels) == set(base.kernels) or j.imported
                                   or base.imported)
             and j.duration_metric == base.duration_metric and shared(j)]
    unlike = {j.job_id: len(measured_unlike(base, j)) for j in others}
    if alike:
        return max(alike, key=lambda j: (not unlike[j.job_id], -unlike[j.job_id], j.complete,
                                         shared(j), -len(set(j.configs) ^ set(base.configs)),
                                         j.annotations == base.annotations,
                                         j.backend == base.backend, j.created_at)).job_id
    overlapping = [j for j in others if shared(j) and _same_code(j, base)]
    return max(overlapping or others,
               key=lambda j: (not unlike[j.job_id], -unlike[j.job_id], j.created_at)).job_id
