"""CUPTI vs Nsight Compute: the same job measured by both backends, per config both durations,
their ratio (ncu / cupti) with CI, their spread, and each job's wall time (pure pandas); a
CUDA-events job of the same configs beside them (:func:`events_frame`).

The Verdict is the regression gate's (:mod:`profiling_worker.bundle.gate.verdict`, CUPTI the
baseline, ncu the candidate, the allowed change 3 %), with the differences that are the point of
this page not held against the pair (:data:`BY_DESIGN`): ``ncu slower`` / ``ncu faster`` when the
whole 95 % interval of the difference is beyond +/-3 %, ``same`` inside it, ``ambiguous``
across it, ``clock-explained``, or ``not comparable`` (other measurement differences, too few
runs)."""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from profiling_worker.bundle.gate.context import FIELDS, METRIC_SET, context_differences
from profiling_worker.bundle.gate import judge as gate
from profiling_worker.bundle.gate.verdict import Outcome
from profiling_worker.bundle.number_text import recorded_time
from profiling_worker.bundle.schema import backends as B, columns as C, tools as T
from profiling_worker.bundle.schema.spec import JobSpec

from profiling_worker.bundle.loader import Bundle
from app.core.metrics import MissingData
from app.core.views.compare import (GATE_COLUMNS, CompareOptions, JobSummary, candidates,
                                    compare_frame)
from app.core.views.kernels import kernel_counts_frame
from app.core import frame_columns as F
from app.core.table_text import header

#: The gate's directed outcomes in this page's words (CUPTI is the baseline).
WORDS = {Outcome.REGRESSED.value: f"{B.NCU} slower", Outcome.IMPROVED.value: f"{B.NCU} faster"}
#: Measurement-context fields (profiling_worker/bundle/gate/context.py) that differ between an ncu
#: and a CUPTI job by design: the backend, and the tools only one of the two uses.
BY_DESIGN = frozenset({"backend", *(t.key for t in set(B.tools(B.NCU)) ^ set(B.tools(B.CUPTI)))})
#: The nsight-python versions of the two differ by design on a machine whose Nsight Compute is
#: older than 2026.2.1: the ncu backend then needs nsight-python 0.9.6 (launch mode), CUPTI 1.1.
#: Said in a caption, not warned about on every pair.
TOOL_VERSION = T.NSIGHT_PYTHON.key
#: Why the two differ, for the page (each cause seen or documented for these backends).
WHY = (
    "**Nsight Compute** flushes the caches before every kernel (cache_control all), replays each "
    "kernel once per counter pass and serialises launches; `gpu__time_duration` is measured on "
    "the replay and can include a small profiler overhead. With clock_control base it also locks "
    "the clocks at base (this project measures with none).",
    "**CUPTI** timestamps kernels in the normal run (activity records, start/end on the GPU) "
    "and replays nothing, so the job is much shorter in wall time. With cache_control all the "
    "worker writes a buffer larger than the L2 before each annotated region (outside it; the "
    "job's manifest says how big), so on both backends a region starts from a cold L2; jobs "
    "recorded before that, or with cache_control none, keep the L2 warm between runs and short "
    "kernels come out faster (x*2 on 4 Mi fp32: 5.55 µs, 6.0 TB/s, above the 4.8 TB/s HBM peak).",
    "For long kernels (ms) the two agree within a few %; for kernels of a few µs the cold cache "
    "and launch serialisation under ncu dominate the difference.",
)


#: What the CUDA-events backend adds to CUPTI's kernel durations, for the page.
EVENTS_WHY = (f"**CUDA events** ({B.EVENTS_BACKEND.measures}): the stream is synchronised "
              "before each region's start event, so each region starts on an idle GPU and its "
              "time holds the launch of its first kernel and every gap between its kernels, on "
              "top of the kernel durations CUPTI adds up. The L2 is flushed before each region as "
              "on CUPTI. Benchmark scripts that time with events (triton's do_bench) include "
              "launch latency in the same way; the gap to CUPTI matters most for short kernels.")


#: How the events table attributes EventsMinusCuptiUs (:func:`events_frame`), for the page.
EVENTS_ATTRIBUTION = (
    "The last five columns are medians over the runs (a region's first runs can take several "
    "times the later ones, which the means carry). "
    f"{header(F.HOST_LAUNCH_US)}: the host's time from each region's start event to its end "
    "event, measured in the events job (launching the region's work: with the GPU idle at the "
    "start event, its kernels cannot start before they are launched). "
    f"{header(F.END_EVENT_US)}: the end event's own record call; where the kernels end before "
    "the host reaches the end event, the GPU stamps it only once that call has submitted it. "
    f"{header(F.RESIDUAL_US)}: the median over runs of each run's events time less its own "
    f"host time, less the larger of {header(F.CUPTI_MEDIAN_US)} and {header(F.END_EVENT_US)}: "
    "what launch, kernels and the end event leave unexplained "
    f"({header(F.RESIDUAL_PCT)}: % of {header(F.EVENTS_MEDIAN_US)}). The L2 flush is the same "
    "on both (before each region, outside it) and neither "
    "replays; the two jobs' clocks are not corrected (see Clocks for each job's SM clock). A "
    "region of several kernels overlaps launches with kernels: its residual can be negative. "
    "Missing for events jobs recorded before the host time was kept.")


def backends_frame(ncu: Bundle, cupti: Bundle) -> pd.DataFrame:
    """Durations of both backends per annotation x config, matched by config values.

    Returns:
        Annotation, <params>, ConfigLabel, NcuUs, NcuRSD, CuptiUs, CuptiRSD, RatioNcuOverCupti,
        RatioCI95Lower, RatioCI95Upper, DiffUs (ncu - cupti), CIsOverlap, CyclesDiffPct,
        Reason, Verdict (module docstring).

    Raises:
        MissingData: a job is not of the expected backend, or the two share no configs.
    """
    for bundle, name in ((ncu, B.NCU), (cupti, B.CUPTI)):
        if bundle.backend != name:
            raise MissingData(f"Job {bundle.job_id} was measured with {bundle.backend or 'no'} "
                              f"backend, not {name}.", f"Pick a job run on the {name} backend.")
    both = compare_frame(cupti, ncu, CompareOptions(metric=C.GPU_TIME),
                         ignore=BY_DESIGN | {TOOL_VERSION, METRIC_SET})
    out = both[[c for c in both if c not in both.filter(like=F.BASELINE).columns
                and c not in both.filter(like=F.CANDIDATE).columns]].copy()
    out[F.NCU_US] = both[F.CANDIDATE_AVG] / 1e3
    out[F.NCU_RSD] = both[F.CANDIDATE_RSD]
    out[F.CUPTI_US] = both[F.BASELINE_AVG] / 1e3
    out[F.CUPTI_RSD] = both[F.BASELINE_RSD]
    out[F.DIFF_US] = out[F.NCU_US] - out[F.CUPTI_US]
    out[F.VERDICT] = out[F.VERDICT].replace(WORDS)
    out = out.rename(columns={F.RATIO: F.RATIO_NCU_OVER_CUPTI})
    shown = (gate.CYCLES_DIFF_PCT, gate.REASON)  # the verdict's figures in cycles, and why
    order = [c for c in out if c not in (C.METRIC, C.UNIT, F.RATIO_EXCLUDES_ONE, *GATE_COLUMNS)
             or c in shown]
    return out[order]


def events_frame(frame: pd.DataFrame, cupti: Bundle, events: Bundle) -> pd.DataFrame:
    """The three backends on the same configs: the rows of a :func:`backends_frame` that the
    events job also measured, with its mean region time, what it adds to CUPTI's kernels, and
    that difference attributed (:data:`EVENTS_ATTRIBUTION`).

    The attribution, on medians over the runs (a region's first runs can take several times its
    later ones on the host, which the means carry): a region timed with events on an idle GPU
    lasts the host's launch time of its work (from its start event to its end event, measured in
    the events job: ``backend.host_launch`` of its manifest) plus its kernels (CUPTI's
    durations), or, where the kernels end before the host reaches the end event (host-bound),
    plus the end event's record call, which must submit the event before the GPU can stamp it;
    what these leave is the residual, taken run by run (each run's events time less the same
    run's host time, whose jitter both carry), then less the larger of CUPTI's median and the
    end event's call. Both backends flush the L2 the same way before each
    region and neither replays, so those terms are zero here.

    Args:
        frame: :func:`backends_frame` of the ncu and CUPTI jobs.
        cupti: the CUPTI job of ``frame`` (its medians).
        events: the events job.

    Returns:
        Annotation, <params>, ConfigLabel, NcuUs, CuptiUs, EventsUs, EventsRSD,
        EventsMinusCuptiUs, RatioEventsOverCupti (means), then EventsMedianUs, CuptiMedianUs,
        HostLaunchUs, EndEventUs (medians), ResidualUs = median over runs of (events - host) -
        max(CuptiMedianUs, EndEventUs) and ResidualPct (% of EventsMedianUs); µs. The host time and
        the residual are missing for an
        events job recorded before the host time was kept.

    Raises:
        MissingData: the job is not of the events backend, has no region time, or shares no
            annotation x config with the other two.
    """
    if events.backend != B.EVENTS:
        raise MissingData(f"Job {events.job_id} was measured with {events.backend or 'no'} "
                          f"backend, not {B.EVENTS}.", f"Pick a job run on the {B.EVENTS} backend.")
    timed = _timed(events, C.EVENTS_TIME)
    if timed.empty:
        raise MissingData(f"Job {events.job_id} has no {C.EVENTS_TIME} values.",
                          "Run the events job again; its manifest says why it has none.")
    keys = [C.ANNOTATION, *[p for p in events.parameters if p in frame]]
    mine = pd.DataFrame({**{k: timed[k] for k in keys}, F.EVENTS_US: timed[C.AVG] / 1e3,
                         F.EVENTS_RSD: timed[C.RSD], F.EVENTS_MEDIAN_US: timed[C.MEDIAN] / 1e3,
                         **_host_launch_us(events, timed)})
    kernels = _timed(cupti, C.GPU_TIME)
    medians = pd.DataFrame({**{k: kernels[k] for k in keys if k in kernels},
                            F.CUPTI_MEDIAN_US: kernels[C.MEDIAN] / 1e3})
    shown = [*keys, F.CONFIG_LABEL, F.NCU_US, F.CUPTI_US]
    out = (frame[[c for c in shown if c in frame]].merge(mine, on=keys, how="inner")
           .merge(medians, on=keys, how="left"))
    if out.empty:
        raise MissingData(f"Job {events.job_id} shares no annotation × config with the other two.",
                          "Run the events backend on the same kernels and sizes.")
    out[F.EVENTS_MINUS_CUPTI_US] = out[F.EVENTS_US] - out[F.CUPTI_US]
    out[F.RATIO_EVENTS_OVER_CUPTI] = out[F.EVENTS_US] / out[F.CUPTI_US]
    # after its launch the region lasts its kernels, or, when they end first, until the end
    # event's record call has submitted it (host-bound)
    after_launch = np.fmax(out[F.CUPTI_MEDIAN_US], out[F.END_EVENT_US])
    out[F.RESIDUAL_US] = out.pop(_LESS_HOST) - after_launch
    out[F.RESIDUAL_PCT] = out[F.RESIDUAL_US] / out[F.EVENTS_MEDIAN_US] * 100
    out = out[[c for c in out if c not in _ATTRIBUTION] + _ATTRIBUTION]
    return out


#: Per annotation x config, the median over runs of events less host time (µs), on its way to
#: ResidualUs.
_LESS_HOST = "EventsLessHostUs"
#: The attribution's columns of :func:`events_frame`, in order.
_ATTRIBUTION = [F.EVENTS_MEDIAN_US, F.CUPTI_MEDIAN_US, F.HOST_LAUNCH_US, F.END_EVENT_US,
                F.RESIDUAL_US, F.RESIDUAL_PCT]


def _timed(bundle: Bundle, metric: str) -> pd.DataFrame:
    """``bundle``'s aggregated rows of ``metric`` (empty when it has none)."""
    agg = bundle.table(C.TABLE_AGGREGATED)
    if agg.empty or C.METRIC not in agg:
        return agg.iloc[:0]
    return agg[agg[C.METRIC] == metric]


#: The columns :func:`_host_launch_us` fills, from the manifest's ``backend.host_launch`` fields.
_FROM_HOST_LAUNCH = {F.HOST_LAUNCH_US: B.HOST_MEDIAN_NS, F.END_EVENT_US: B.END_MARK_MEDIAN_NS,
                     _LESS_HOST: B.EVENTS_LESS_HOST_MEDIAN_NS}


def _host_launch_us(events: Bundle, timed: pd.DataFrame) -> dict[str, pd.Series]:
    """Per row of ``timed`` (the events job's aggregated region times), the medians of its
    annotation x config in the manifest's ``backend.host_launch`` (ns, returned in µs), one
    column each of :data:`_FROM_HOST_LAUNCH`; NaN where the job did not record them."""
    records = {(r["annotation"], int(r["config"])): r
               for r in (events.manifest.get("backend") or {}).get(B.HOST_LAUNCH) or []}
    rows = [records.get((a, int(c)), {}) for a, c in zip(timed[C.ANNOTATION], timed[C.CONFIG])]
    return {column: pd.Series([float(r.get(field, "nan")) / 1e3 for r in rows], index=timed.index)
            for column, field in _FROM_HOST_LAUNCH.items()}


def context_mismatch(ncu: Mapping[str, Any], cupti: Mapping[str, Any]) -> list[str]:
    """How the two jobs' measurement context differs besides the backend (the regression gate's
    :func:`~profiling_worker.bundle.gate.context.context_differences`, less :data:`BY_DESIGN`): each
    difference changes durations on its own, so the ratio would not be the backend's alone.

    Args:
        ncu, cupti: the two jobs' manifests.

    Returns:
        One sentence per differing field, ncu's value first, e.g.
        ``"cache control: all vs none"``; empty when only the backend differs.
    """
    return context_differences(dict(ncu), dict(cupti), ignore=BY_DESIGN | {TOOL_VERSION})


#: Jobs started further apart than this (s) were not recorded in one sitting.
APART_S = 3600.0


def recorded_apart(first: Mapping[str, Any], second: Mapping[str, Any]) -> str | None:
    """Why two jobs were not recorded together, or None when they were or the manifests do not
    tell: different device runs (manifest ``provenance.device_run``, set for the bundled H200
    jobs), else starts (``started_at``, ISO 8601) more than :data:`APART_S` apart. The GPU's
    clocks and temperature and the host's load change between sittings (the bundled CUPTI J1
    of 2026-11-30 read n = 8192 at 1441.6 µs, the one recorded with the events job on
    2026-12-02 1414.1 µs), so a difference between the two jobs holds that change too.

    Returns:
        E.g. ``"device runs 'h200 1202-run7' and 'h200 device run 1', started 2.7 days
        apart"``.
    """
    runs = [(m.get("provenance") or {}).get("device_run") for m in (first, second)]
    starts = [_started(m) for m in (first, second)]
    gap = abs((starts[1] - starts[0]).total_seconds()) if starts[0] and starts[1] else None
    other_run = all(runs) and runs[0] != runs[1]
    if not other_run and (gap is None or gap <= APART_S):
        return None
    when = ("" if gap is None else f"started {gap / 86400:.1f} days apart" if gap >= 86400
            else f"started {gap / 3600:.1f} h apart")
    return ", ".join(x for x in (f"device runs {runs[0]!r} and {runs[1]!r}" if other_run
                                 else "", when) if x)


def _started(manifest: Mapping[str, Any]) -> datetime.datetime | None:
    """The manifest's ``started_at`` (ISO 8601; UTC when it names no zone), None if unsaid."""
    return recorded_time(manifest.get("started_at"))


def tool_version_difference(ncu: Mapping[str, Any], cupti: Mapping[str, Any]) -> str | None:
    """``"nsight-python version: 0.9.6 vs 1.1.0"`` when the two jobs' nsight-python versions
    differ (ncu's first; see :data:`TOOL_VERSION`), else None."""
    others = set(FIELDS) - {TOOL_VERSION}
    return next(iter(context_differences(dict(ncu), dict(cupti), ignore=others)), None)


def _offer(ncu_id: str, jobs: list[JobSummary], manifests: Mapping[str, Mapping[str, Any]]
           ) -> tuple[list[str], list[str]]:
    """(the CUPTI jobs comparable with ``ncu_id``, best first; the others): the ranking of
    :func:`cupti_choices`."""
    offered, refused = candidates(ncu_id, jobs)
    ncu = manifests[ncu_id]
    ranked = sorted(offered, key=lambda job: len(context_mismatch(ncu, manifests[job])))
    return ranked, list(refused)


def cupti_choices(ncu_id: str, jobs: list[JobSummary],
                  manifests: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The CUPTI jobs to offer against ncu job ``ncu_id``, best first.

    Jobs comparable with it (:func:`~app.core.views.compare.candidates`: the same kernels and
    the most shared configs first), those with the fewest :func:`context_mismatch` differences
    first (e.g. the same cache control before another), then jobs sharing no config with it.

    Args:
        ncu_id: the Nsight Compute job.
        jobs: summaries of the ncu job and of every CUPTI job.
        manifests: job id -> manifest, for every job of ``jobs``.
    """
    offered, refused = _offer(ncu_id, jobs, manifests)
    return offered + refused


#: The pair the page opens on when the selected job is in no comparable pair (bundled J1).
DEFAULT_NCU = "h200-ncu-j1-fp16"

#: Spec fields an ncu and a CUPTI job of one measurement differ in by their backend, or that
#: only name them: left out of :func:`spec_differences`.
BACKEND_SPEC_FIELDS = frozenset({"backend", "metrics", "section_set", "replay_mode", "label"})


def spec_differences(one: Mapping[str, Any], other: Mapping[str, Any]) -> int:
    """How many fields of the two manifests' specs differ (runs, warm-up, configs, cache
    control...), the :data:`BACKEND_SPEC_FIELDS` aside: 0 for the ncu and CUPTI jobs of one
    measurement (``h200-ncu-matmul-sweep`` and ``h200-cupti-matmul-sweep``), 1 for
    ``h200-ncu-matmul-rules`` against the latter (3 runs, not 10)."""
    a, b = one.get("spec") or {}, other.get("spec") or {}
    return sum(_spec_value(a, name) != _spec_value(b, name)
               for name in (set(a) | set(b)) - BACKEND_SPEC_FIELDS)


#: A spec field's value where a manifest's spec leaves it out (written before the field was).
_SPEC_DEFAULTS = {f.name: f.default for f in dataclasses.fields(JobSpec)
                  if f.default is not dataclasses.MISSING}


def _spec_value(spec: Mapping[str, Any], name: str) -> Any:
    """``spec[name]`` (its default where left out), a list as a tuple: ``[]`` is ``()``."""
    value = spec.get(name, _SPEC_DEFAULTS.get(name))
    return tuple(value) if isinstance(value, list) else value


def default_pair(selected: str | None, ncu_ids: list[str], cupti_ids: list[str],
                 jobs: list[JobSummary], manifests: Mapping[str, Mapping[str, Any]]
                 ) -> tuple[str, str | None]:
    """The ncu job and CUPTI job the page opens on: the selected job's pair where it is in a
    comparable one, else :data:`DEFAULT_NCU` (or the first ncu job) and its best CUPTI job
    (None: the first :func:`cupti_choices` gives). With h200-ncu-matmul-sweep selected the
    page opened on the J1 pair, though h200-cupti-matmul-sweep was there.

    The selected ncu job's pair is the CUPTI job :func:`cupti_choices` ranks first among
    those comparable with it. The selected CUPTI job's is the ncu job that ranks it highest,
    on a tie the one whose spec differs least from its own (:func:`spec_differences`:
    ``h200-ncu-matmul-sweep`` for ``h200-cupti-matmul-sweep``, though
    ``h200-ncu-matmul-rules``, 3 runs, ranks it first too), then the first of ``ncu_ids``.

    Args:
        selected: the selected job (sidebar, ``?job=``), None when none.
        ncu_ids, cupti_ids: the finished jobs of each backend.
        jobs: summaries of every job of ``ncu_ids`` and ``cupti_ids``.
        manifests: job id -> manifest, for every job of ``jobs``.
    """
    cupti = [j for j in jobs if j.job_id in cupti_ids]
    by_id = {j.job_id: j for j in jobs}

    def offered(ncu_id: str) -> list[str]:
        return _offer(ncu_id, [by_id[ncu_id], *cupti], manifests)[0] if ncu_id in by_id else []

    if selected in ncu_ids and (mine := offered(selected)):
        return selected, mine[0]
    if selected in cupti_ids:
        ranks = {ncu_id: ranked.index(selected) for ncu_id in ncu_ids
                 if selected in (ranked := offered(ncu_id))}
        if ranks:
            best = min(ranks, key=lambda ncu_id: (
                ranks[ncu_id], spec_differences(manifests[ncu_id], manifests[selected]),
                ncu_ids.index(ncu_id)))
            return best, selected
    return (DEFAULT_NCU if DEFAULT_NCU in ncu_ids else ncu_ids[0]), None


def kernel_counts_differ(ncu: Bundle, cupti: Bundle) -> pd.DataFrame:
    """Regions whose kernel launches per run differ between the two backends: the two did not
    measure the same work (seen: autograd's backward kernels missing from a ``backward`` region
    under Nsight Compute, 1 fill kernel against 4-5 GEMMs on CUPTI).

    Returns:
        Annotation, <params>, ConfigLabel, NcuKernelsPerRun, CuptiKernelsPerRun, NcuKernels,
        CuptiKernels (distinct names); empty when every region matches or a job has no
        per-launch table.
    """
    try:
        both = [kernel_counts_frame(b) for b in (ncu, cupti)]
    except MissingData:
        return pd.DataFrame()
    keys = [C.ANNOTATION, *[p for p in ncu.parameters if p in cupti.parameters]]
    cols = keys + [F.MAX_PER_RUN, F.KERNEL_NAMES]
    merged = both[0][cols + [F.CONFIG_LABEL]].merge(both[1][cols], on=keys,
                                                   suffixes=("Ncu", "Cupti"))
    merged = merged[merged[F.MAX_PER_RUN_NCU] != merged[F.MAX_PER_RUN_CUPTI]]
    return merged.rename(columns={F.MAX_PER_RUN_NCU: F.NCU_KERNELS_PER_RUN,
                                  F.MAX_PER_RUN_CUPTI: F.CUPTI_KERNELS_PER_RUN,
                                  F.KERNELS_NCU: F.NCU_KERNELS, F.KERNELS_CUPTI: F.CUPTI_KERNELS}
                         ).reset_index(drop=True)


def wall_frame(*bundles: Bundle) -> pd.DataFrame:
    """One row per job: Job, Backend, Measures, NsightMode, WallS (manifest wall_s), Runs,
    Configs, Metrics."""
    rows = []
    for b in bundles:
        backend = b.manifest.get("backend") or {}
        rows.append({F.JOB: b.job_id, F.BACKEND: b.backend, F.MEASURES: b.measurement,
                     F.NSIGHT_MODE: backend.get("nsight_mode", ""),
                     F.WALL_S: b.manifest.get("wall_s"), F.RUNS: b.spec.runs if b.spec else None,
                     F.CONFIGS: len(b.spec.configs) if b.spec else 0,
                     F.METRICS: len(b.spec.metrics) if b.spec else 0})
    return pd.DataFrame(rows)
