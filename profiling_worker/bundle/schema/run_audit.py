"""The validity audit of every run (issue 36): named checks with the evidence for each, one row
per run x check, computed by the worker into ``tables/run_audit`` and, for bundles without it
(recorded before it, imports), derived on load from the files they have (:func:`run_audit`);
a check the files cannot support says ``not checked`` and why.

Checks (``Check``; ``Result`` is ``pass``, ``flag``, ``not checked`` or ``n/a``):

``l2_state``        the L2 state the run had as recorded (:func:`~profiling_worker.bundle.schema.
                    plausibility.l2_state`): flagged when warm although the spec asked
                    ``cache_control="all"`` (``h200-cupti-stability``: recorded before the CUPTI
                    backend flushed).
``clock``           the SM clock the run ran at (Nsight Compute's own clock metric; else the
                    ``sm_clock`` info collector, NVML just before the run; else the NVML sample
                    during the run, placed by CUPTI's launch times) against the median of its
                    own annotation x config's runs (a config that runs at a steady lower clock,
                    as tensor-core GEMMs under power management do, passes; :func:`config_clocks`
                    names such configs, not as a failure) and the GPU's maximum, with the NVML
                    throttle reasons and power at the run
                    (:data:`~profiling_worker.bundle.schema.throttle_reasons.CAPPING_BITS`): flagged
                    more than :data:`CLOCK_DROP_PCT` % below that median or power/thermal capped.
``idle_gap``        the time the GPU had nothing of the job before the run (CUPTI launch times):
                    flagged when an NVML sample inside the gap reads the GPU idle or a clock more
                    than :data:`CLOCK_DROP_PCT` % below the run's config's median (the gap was
                    long enough to drop clocks).
``host_contention`` cpu backend: its threads waited for a CPU (manifest
                    ``backend.host_contention``); ``n/a`` on a GPU backend.
``launch_bound``    events backend: the host time between the region's marks is at least
                    :data:`LAUNCH_BOUND_SHARE` of its events time (the GPU waited for the host;
                    manifest ``backend.host_launch``, per config); ``n/a`` elsewhere.
``timer_sanity``    a duration at or below 0, below the events timer's resolution, or below the
                    physical minimum for the kernel's analytic FLOPs (the fastest datasheet dense
                    peak its dtype may run under, fp32 as TF32 included,
                    :mod:`~profiling_worker.bundle.schema.peaks`) and, with a flushed L2, its bytes
                    (datasheet DRAM bandwidth).
``population``      two modes or a step in the config's runs
                    (:mod:`~profiling_worker.bundle.schema.populations`): the runs of the slower
                    group are flagged.

A flag of :data:`INVALIDATING` makes the config's mean no valid figure to judge: the gate reads
such a side as not comparable (:func:`config_audits`); the other flags are said beside a verdict.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pandas as pd

from profiling_worker.bundle.number_text import (HZ_PER_MHZ, counted, literal, ns_text,
                                                 with_durations)
from profiling_worker.bundle.schema import (backends as B, columns as C, metrics as M, peaks,
                                            populations)
from profiling_worker.bundle.schema.bundle_spec import PartialSpec, backend_of, manifest_spec
from profiling_worker.bundle.schema.manifest import job_gpu
from profiling_worker.bundle.schema.plausibility import (L2_FLUSHED, L2_UNKNOWN, L2_WARM,
                                                         l2_state_of)
from profiling_worker.bundle.schema.spec import JobSpec
from profiling_worker.bundle.schema.throttle_reasons import CAPPING_BITS, THROTTLE_BITS, capping



class Check(enum.StrEnum):
    """The checks of the module docstring, valued as the ``Check`` column of
    ``tables/run_audit`` names them (the file's text is unchanged: a member is its value, in
    a frame, a join or an f-string). Typed, a misspelt check is an error (``Check("clokc")``:
    ValueError; ``A.CLOKC``: AttributeError, and mypy says so) rather than a new check that no
    caveat, blocker or badge knows."""

    L2 = "l2_state"
    CLOCK = "clock"
    IDLE_GAP = "idle_gap"
    HOST_CONTENTION = "host_contention"
    LAUNCH_BOUND = "launch_bound"
    TIMER = "timer_sanity"
    POPULATION = "population"


L2, CLOCK, IDLE_GAP = Check.L2, Check.CLOCK, Check.IDLE_GAP
HOST_CONTENTION, LAUNCH_BOUND = Check.HOST_CONTENTION, Check.LAUNCH_BOUND
TIMER, POPULATION = Check.TIMER, Check.POPULATION
CHECKS = tuple(Check)
#: Checks whose flag leaves the config's mean no single valid figure (the gate: not comparable).
INVALIDATING = (TIMER, POPULATION)
#: Checks that judge the whole job from its manifest (the L2 state it asked for and had, the
#: cpu backend's host contention): one evidence for every run, said once for the job
#: (:func:`job_evidence`), not once per config (a contended 9-config job's note repeated it
#: nine times).
JOB_WIDE = (L2, HOST_CONTENTION)
PASS, FLAG, NOT_CHECKED, NOT_APPLICABLE = "pass", "flag", "not checked", "n/a"
CHECK, RESULT, EVIDENCE = C.CHECK, C.RESULT, C.EVIDENCE
COLUMNS = [C.ANNOTATION, C.CONFIG, C.RUN, CHECK, RESULT, EVIDENCE]
#: The durations an evidence states, as data (tables/run_audit layout 2, columns.py): the
#: evidence with them as placeholders and their values in ns; None and NaN where it states
#: none. A stored table without them (layout 1, written before) is read with COLUMNS alone,
#: and the pages write its Evidence text's ns in their unit as before (app.core.numbers).
TEMPLATE, VALUE_NS = C.EVIDENCE_TEMPLATE, C.EVIDENCE_VALUE_NS
REFERENCE_NS = C.EVIDENCE_REFERENCE_NS
DURATION_COLUMNS = [TEMPLATE, VALUE_NS, REFERENCE_NS]
#: What :func:`audit_runs` makes and the worker writes (tables/run_audit, layout 2).
TABLE_COLUMNS = [*COLUMNS, *DURATION_COLUMNS]
#: A run's clock this far (%) below its (annotation, config)'s median clock is flagged.
CLOCK_DROP_PCT = 5.0
#: The version of the checks a worker-written ``tables/run_audit`` was made by, in the
#: manifest under :data:`RULES_KEY`: 2 since the clock and idle-gap checks compare a run with
#: its own config's median clock (before: the whole job's, so every run of a config that ran
#: at a steady lower clock failed). A stored table of older checks is derived again on load.
RULES, RULES_KEY = 2, "run_audit_rules"
#: Host time / events time at or above which an events region is launch-bound.
LAUNCH_BOUND_SHARE = 0.5
#: cudaEventElapsedTime's resolution, about 0.5 µs (CUDA Runtime API reference).
EVENTS_RESOLUTION_NS = 500.0
_IDLE = 0x1  # NVML "GPU idle"
_PER_RUN_CLOCKS = (M.GPC_HZ, M.SM_HZ)  # Hz, the kernel's own clock (Nsight Compute)


def audit_runs(tables: Mapping[str, pd.DataFrame], manifest: Mapping[str, Any]) -> pd.DataFrame:
    """Every check of the module docstring on every run of one bundle.

    Args:
        tables: table name -> frame (missing tables: the checks that need them say so).
        manifest: the bundle's manifest (spec, backend, environment).

    Returns:
        :data:`TABLE_COLUMNS`, one row per annotation x config x run x check (empty without
        runs).
    """
    spec = manifest_spec(manifest)
    backend = backend_of(manifest, spec)
    runs = _table(tables, C.TABLE_RUNS)
    metric = B.duration_metric(backend or None)
    if runs.empty or C.METRIC not in runs:
        return pd.DataFrame(columns=TABLE_COLUMNS)
    time = _durations(runs, metric)
    if time is None:
        return pd.DataFrame(columns=TABLE_COLUMNS)
    windows = _windows(tables, manifest)
    # the spec and backend read once, for every check (each read validates the spec anew)
    samples = _samples(time, tables, windows) if B.on_gpu(backend) else None
    medians = (_config_medians(time, np.array([s.mhz for s in samples]))
               if samples is not None else {})
    parts = [_l2(time, manifest, spec), _clock(time, tables, manifest, backend, samples, medians),
             _idle(time, tables, windows, medians), _host(time, manifest, backend),
             _launch(time, manifest, backend), _timer(time, tables, manifest, spec, backend),
             _population(time)]
    return _frame({c: [v for part in parts for v in part[c]] for c in TABLE_COLUMNS})


def _frame(columns: dict[str, list[Any]]) -> pd.DataFrame:
    """``pd.DataFrame(columns)`` (name -> one Python value per row), each column of only
    strings or only ints made as the array pandas would infer for it (pandas' inference from
    lists of a warm job's 280 audit rows cost 0.45 ms, typed arrays half of that, issue 40);
    a column of other values is left to pandas' inference."""
    return pd.DataFrame({name: _typed(values) for name, values in columns.items()})


def _typed(values: list[Any]) -> Any:
    """``values`` as the array pandas infers for a column of them where it is sure of it
    (only ``str``: its default string dtype; only ``int``: int64), else the list itself."""
    if values and all(type(v) is str for v in values):
        return pd.array(values, dtype=_inferred_str())
    if values and all(type(v) is int for v in values):
        try:
            return np.array(values, dtype="int64")
        except OverflowError:  # pandas infers another dtype for such ints
            return values
    return values


@functools.lru_cache(maxsize=1)
def _inferred_str() -> Any:
    """The dtype pandas infers for a column of strings (pandas 3: ``str``, arrow-backed)."""
    return pd.Series(["a"]).dtype


@dataclass(frozen=True)
class _Runs:
    """The runs audited, as columns of Python values (one per run, in the order of the audit's
    rows): every check reads them (issue 40: a frame of 40 rows cost more to make and to read
    a column of, once per check, than the checks on it)."""

    annotation: list[Any]
    config: list[int]
    run: list[int]
    value: np.ndarray  # float64, the run's duration

    def __len__(self) -> int:
        return len(self.run)

    def take(self, rows: list[int]) -> _Runs:
        """The runs at positions ``rows``, in that order."""
        return _Runs([self.annotation[i] for i in rows], [self.config[i] for i in rows],
                     [self.run[i] for i in rows], self.value[np.asarray(rows, dtype="int64")])


def _durations(runs: pd.DataFrame, metric: str) -> _Runs | None:
    """Annotation, Config, Run (ints) and Value of ``runs``' rows of ``metric`` that have a
    config and a run (an import's rows of no config are no run), sorted by annotation, config
    and run; None when it has no row of ``metric``. Where every annotation is a string the
    sort is Python's (stable, by code point, as pandas sorts strings) on the columns' values
    (a filter, a dropna and a sort of frames cost about 2 ms of a warm job's run audit); else
    pandas sorts."""
    # the columns as Python values, each read once (issue 40: a comparison and a mask of
    # Series cost more than these few dozen rows' loop)
    chosen = [i for i, name in enumerate(runs[C.METRIC].tolist())
              if isinstance(name, str) and name == metric]  # a missing name (NA) is no match
    if not chosen:
        return None
    keys = [C.ANNOTATION, C.CONFIG, C.RUN]
    picked: dict[str, list[Any]] = {}
    for c in (*keys, C.VALUE):
        column = runs[c].tolist()
        picked[c] = [column[i] for i in chosen]
    ann, cfg, run = (picked[c] for c in keys)
    if all(isinstance(a, str) for a in ann):
        rows = [i for i in range(len(ann)) if not (pd.isna(cfg[i]) or pd.isna(run[i]))]
        rows.sort(key=lambda i: (ann[i], cfg[i], run[i]))
        return _Runs([ann[i] for i in rows], [int(cfg[i]) for i in rows],
                     [int(run[i]) for i in rows],
                     np.array([picked[C.VALUE][i] for i in rows], dtype=float))
    time = (runs.iloc[chosen][[*keys, C.VALUE]].dropna(subset=[C.CONFIG, C.RUN])
            .sort_values(keys).reset_index(drop=True))
    return _Runs(time[C.ANNOTATION].tolist(), time[C.CONFIG].astype(int).tolist(),
                 time[C.RUN].astype(int).tolist(), time[C.VALUE].to_numpy(dtype=float))


def stored_audit(tables: Mapping[str, pd.DataFrame], manifest: Mapping[str, Any]
                 ) -> pd.DataFrame | None:
    """The bundle's ``run_audit`` table as the worker wrote it, when it has one made by the
    checks of today (the manifest's :data:`RULES_KEY` is :data:`RULES`); else None (an older
    table's verdicts are not read: its clock check compared each run with the whole job's
    median clock). :data:`TABLE_COLUMNS`, or :data:`COLUMNS` alone for a table written before
    the evidence's durations were data (layout 1: the same checks, its text the same)."""
    stored = tables.get(C.TABLE_RUN_AUDIT)
    if (stored is None or stored.empty or not set(COLUMNS) <= set(stored)
            or manifest.get(RULES_KEY) != RULES):
        return None
    return stored[TABLE_COLUMNS if set(DURATION_COLUMNS) <= set(stored) else COLUMNS]


def run_audit(tables: Mapping[str, pd.DataFrame], manifest: Mapping[str, Any]) -> pd.DataFrame:
    """:func:`stored_audit`, else :func:`audit_runs` now."""
    stored = stored_audit(tables, manifest)
    return stored if stored is not None else audit_runs(tables, manifest)


_UNPLACED = (float("nan"), float("nan"))


def _keys(time: _Runs) -> list[tuple[Any, int, int]]:
    """Each run's (annotation, config, run) of ``time``, as :func:`_windows` keys them."""
    return list(zip(time.annotation, time.config, time.run))


def _table(tables: Mapping[str, pd.DataFrame], name: str) -> pd.DataFrame:
    frame = tables.get(name)
    return frame if frame is not None else pd.DataFrame()


#: One check's rows as columns of lists (:data:`TABLE_COLUMNS`): audit_runs makes one frame of
#: all checks (a frame per check and a concat cost more than the checks on a warm job's 40 runs).
_Rows = dict[str, list[Any]]
#: An evidence's durations as data: (its template, value ns, reference ns), or None: none.
_Said = tuple[str, float, float] | None


def _rows(time: _Runs, check: Check, results: Any, evidence: Any,
          durations: list[_Said] | None = None) -> _Rows:
    """One row per run of ``time`` for ``check`` (``results``/``evidence``: one or per run;
    ``durations``: per run, the durations its evidence states, :data:`DURATION_COLUMNS`; None:
    no evidence states any); the check as its value, the text the table is written and read
    with."""
    n = len(time)
    said = durations if durations is not None else [None] * n
    return {C.ANNOTATION: time.annotation, C.CONFIG: time.config, C.RUN: time.run,
            CHECK: [check.value] * n,
            RESULT: [results] * n if isinstance(results, str) else list(results),
            EVIDENCE: [evidence] * n if isinstance(evidence, str) else list(evidence),
            TEMPLATE: [s[0] if s else None for s in said],
            VALUE_NS: [s[1] if s else np.nan for s in said],
            REFERENCE_NS: [s[2] if s else np.nan for s in said]}


def _stated(template: str, value_ns: float, reference_ns: float) -> tuple[str, _Said]:
    """An evidence stating two durations (ns): its text, as the table's Evidence has always
    written it (whole ns), and the durations as data (:data:`DURATION_COLUMNS`)."""
    text = with_durations(template, ns_text(value_ns), ns_text(reference_ns), "ns")
    return text, (template, float(value_ns), float(reference_ns))


def _l2(time: _Runs, manifest: Mapping[str, Any], spec: JobSpec | PartialSpec | None) -> _Rows:
    state, why = l2_state_of(manifest, spec)
    if not B.on_gpu(backend_of(manifest, spec)):
        return _rows(time, L2, NOT_APPLICABLE, f"host timer: {why}")
    asked = spec.cache_control if spec is not None else None
    if state == L2_UNKNOWN:
        return _rows(time, L2, NOT_CHECKED, f"unknown: {why}")
    bad = state == L2_WARM and asked == "all"
    said = f"{state}: {why}" + (' although the spec asks cache_control "all"' if bad else "")
    return _rows(time, L2, FLAG if bad else PASS, said)


#: Each run's (annotation, config, run) -> its first start and last end (T0, T1), s.
_Windows = dict[tuple[Any, int, int], tuple[float, float]]


def _windows(tables: Mapping[str, pd.DataFrame], manifest: Mapping[str, Any]
             ) -> _Windows | None:
    """Each run's first start and last end (T0, T1) in seconds on the NVML trace's axis (CUPTI
    launch times and the manifest's ``backend.nvml_trace_start_ns``), runs in first-seen order;
    None when not placed. A dict built in one pass over the columns: a groupby and a merge per
    use cost most of a warm job's run audit on its 40 runs (issue 40); the same figures
    (``(min start - trace start) / 1e9``, launches without a start or end, or without a key,
    left out)."""
    times = _table(tables, C.TABLE_LAUNCH_TIMES)
    entry = manifest.get("backend")
    start = entry.get("nvml_trace_start_ns") if isinstance(entry, Mapping) else None
    if times.empty or not isinstance(start, (int, float)) or C.START_NS not in times:
        return None
    ends: dict[tuple[Any, Any, Any], list[Any]] = {}
    for key, t0, t1 in zip(zip(*(times[k].tolist() for k in (C.ANNOTATION, C.CONFIG, C.RUN))),
                           times[C.START_NS].tolist(), times[C.END_NS].tolist()):
        if pd.isna(t0) or pd.isna(t1) or any(pd.isna(k) for k in key):
            continue
        seen = ends.get(key)
        if seen is None:
            ends[key] = [t0, t1]
        else:
            seen[0], seen[1] = min(seen[0], t0), max(seen[1], t1)
    return {(ann, int(cfg), int(run)): ((t0 - start) / 1e9, (t1 - start) / 1e9)
            for (ann, cfg, run), (t0, t1) in ends.items()}


@dataclass(frozen=True)
class _Sample:
    """What is known of one run's clock: MHz, W, throttle mask (NaN / None unknown), source."""

    mhz: float = float("nan")
    watts: float = float("nan")
    mask: int | None = None
    source: str = ""


def _samples(time: _Runs, tables: Mapping[str, pd.DataFrame],
             windows: _Windows | None) -> list[_Sample] | None:
    """Per run of ``time``, its clock sample from the first source that has it (module
    docstring, ``clock``); None when no source covers the job."""
    runs, coll = _table(tables, C.TABLE_RUNS), _table(tables, C.TABLE_COLLECTORS)
    keys = [C.ANNOTATION, C.CONFIG, C.RUN]
    # the names as Python values, read once: a comparison of Series per clock metric cost more
    names = set(runs[C.METRIC].tolist()) if not runs.empty else set()
    for metric in _PER_RUN_CLOCKS:
        if metric in names:
            # a dict: a MultiIndex lookup per run took seconds at 30,000 runs
            hz = runs[runs[C.METRIC] == metric].groupby(keys)[C.VALUE].mean().to_dict()
            return [_Sample(mhz=float(hz.get(tuple(k), np.nan)) / HZ_PER_MHZ,
                            source=f"{metric} (the kernel's own clock)")
                    for k in _keys(time)]
    if not coll.empty and C.COLLECTOR in coll and (coll[C.COLLECTOR] == "sm_clock").any():
        wide = coll.pivot_table(index=[C.CONFIG, C.RUN], columns=C.COLLECTOR, values=C.VALUE)
        out = []
        for cfg, run in zip(time.config, time.run):
            row = (cast("pd.Series[Any]", wide.loc[(cfg, run)]) if (cfg, run) in wide.index
                   else pd.Series(dtype=float))  # a row of the (Config, Run) index
            mask = row.get("throttle_reasons", np.nan)
            out.append(_Sample(float(row.get("sm_clock", np.nan)), float(row.get("power", np.nan)),
                               None if pd.isna(mask) else int(mask),
                               "NVML just before the run (sm_clock collector)"))
        return out
    nvml = _table(tables, C.TABLE_NVML)
    if windows is None or nvml.empty or C.SM_CLOCK_MHZ not in nvml:
        return None
    t = nvml[C.TIME_S].to_numpy(float)
    if not (np.diff(t) > 0).all():  # a trace in time order (the sampler's) is left as it is:
        nvml = nvml.sort_values(C.TIME_S).reset_index(drop=True)  # any sort keeps its order
        t = nvml[C.TIME_S].to_numpy(float)
    period = float(np.median(np.diff(t))) if len(t) > 1 else 0.0
    # columns as float arrays, as a row of this all-number table reads (iloc per run cost more)
    mhz, watts, masks = (nvml[c].to_numpy(float, na_value=np.nan) if c in nvml
                         else np.full(len(t), np.nan)
                         for c in (C.SM_CLOCK_MHZ, C.POWER_W, C.THROTTLE_REASONS))
    placed = np.array([windows.get(key, _UNPLACED) for key in _keys(time)],
                      dtype=float).reshape(-1, 2)
    # each run's first sample at or after its start, if within its end and one period (the
    # first sample it covers), else the sample before its start: t is sorted (NaN last, as
    # searchsorted places it), so one search for all runs, not a scan of t per run
    first = np.searchsorted(t, placed[:, 0])
    covered = (first < len(t)) & (t[np.minimum(first, len(t) - 1)] <= placed[:, 1] + period)
    sample = np.where(covered, first, first - 1)
    out = []
    for (t0, _), i in zip(placed.tolist(), sample.tolist()):
        if pd.isna(t0):
            out.append(_Sample(source="no CUPTI start for this run"))
            continue
        if i < 0:
            out.append(_Sample(source="before the NVML trace began"))
            continue
        out.append(_Sample(float(mhz[i]), float(watts[i]),
                           None if pd.isna(masks[i]) else int(masks[i]),
                           f"NVML sample at {t[i]:.3f} s (during the run or within one "
                           f"{1e3 * period:.0f} ms sampling period after it)"))
    return out


#: (annotation, config) -> its runs' median MHz and how many runs have a clock.
_Medians = dict[tuple[Any, int], tuple[float, int]]


def _config_medians(time: _Runs, clocks: np.ndarray) -> _Medians:
    """(annotation, config) -> (the median MHz of its runs with a clock, how many have one);
    NaN and 0 for a config none of whose runs has a clock."""
    rows: dict[tuple[Any, int], list[float]] = {}
    for key, mhz in zip(zip(time.annotation, time.config), clocks.tolist()):
        rows.setdefault(key, []).append(mhz)
    out = {}
    for key, values in rows.items():
        known = [v for v in values if np.isfinite(v)]
        out[key] = (float(np.median(known)) if known else float("nan"), len(known))
    return out


def _clock_said(mhz: float, reference: float, clocked: int) -> tuple[bool, str]:
    """Whether a run's ``mhz`` is more than :data:`CLOCK_DROP_PCT` % below its config's median
    ``reference`` (of ``clocked`` runs with a clock), and the evidence: ``"1,515 MHz vs its
    config's median 1,560 MHz (-2.9 %; limit 5 %)"``. A config of one clocked run has nothing
    to drop against: not low; nor has a median of 0 MHz or less (a clock read as 0)."""
    if clocked < 2:
        return False, f"{mhz:,.0f} MHz, its config's only run with a clock (no drop to judge)"
    if not reference > 0:
        return False, (f"{mhz:,.0f} MHz; its config's median clock reads {reference:,.0f} MHz "
                       "(no drop to judge)")
    pct = 100 * (mhz / reference - 1)
    return (pct < -CLOCK_DROP_PCT,
            f"{mhz:,.0f} MHz vs its config's median {reference:,.0f} MHz ({pct:+.1f} %; "
            f"limit {CLOCK_DROP_PCT:g} %)")


def _clock(time: _Runs, tables: Mapping[str, pd.DataFrame], manifest: Mapping[str, Any],
           backend: str, samples: list[_Sample] | None, medians: _Medians) -> _Rows:
    """Each run's clock (``samples``, :func:`_samples`) against its own (annotation, config)'s
    median (``medians``: a config that runs at a steady lower clock, as tensor-core GEMMs under
    power management do, passes; :func:`config_clocks` says it), and its throttle reasons."""
    if not B.on_gpu(backend):
        return _rows(time, CLOCK, NOT_APPLICABLE, "host timer: no GPU clock")
    if samples is None:
        return _rows(time, CLOCK, NOT_CHECKED, "no per-run SM clock (no Nsight Compute clock "
                     "metric, no sm_clock collector, no CUPTI launch times to place the NVML "
                     "samples on)" + _job_throttle(_table(tables, C.TABLE_NVML)))
    top = job_gpu(manifest).get("max_sm_clock_mhz")
    limit = job_gpu(manifest).get("power_limit_w")
    results, evidence = [], []
    for s, key in zip(samples, zip(time.annotation, time.config)):
        if not np.isfinite(s.mhz):
            results.append(NOT_CHECKED)
            evidence.append(f"no clock for this run ({s.source or 'not sampled'})")
            continue
        capped = _capping(s.mask) if s.mask is not None else ()
        low, said = _clock_said(s.mhz, *medians[key])
        if isinstance(top, (int, float)):
            said += f"; GPU max {top:,.0f} MHz"
        if s.mask is not None:
            said += f"; throttle: {', '.join(_names(s.mask)) or 'none'}"
        if np.isfinite(s.watts):
            said += (f"; {s.watts:.0f} W" + (f" of the {limit:g} W limit"
                                             if isinstance(limit, (int, float))
                                             else " (power limit not recorded)"))
        results.append(FLAG if low or capped else PASS)
        evidence.append(f"{said}; {s.source}" + (
            f"; more than {CLOCK_DROP_PCT:g} % below its config's median" if low else "")
            + ("; power/thermal capped" if capped else ""))
    return _rows(time, CLOCK, results, evidence)


#: :func:`config_clocks`' columns: the config's median clock, the job's fastest config's,
#: how far below it (%), and what the files say of the cause.
CONFIG_CLOCK_COLUMNS = [C.ANNOTATION, C.CONFIG, "ClockMHz", "FastestAnnotation", "FastestConfig",
                        "FastestMHz", "BelowPct", "Cause"]
#: A run drawing this share of the power limit or more ran at it (power management).
NEAR_POWER_LIMIT = 0.9


def config_clocks(tables: Mapping[str, pd.DataFrame], manifest: Mapping[str, Any]
                  ) -> pd.DataFrame:
    """The (annotation, config)s whose runs' median SM clock is more than
    :data:`CLOCK_DROP_PCT` % below the job's fastest config's: not a failed audit (each run is
    checked against its own config's median, :func:`audit_runs`), a note that the whole config
    ran slower, with the cause where the files show it (a power/thermal throttle reason at its
    runs, or power at or above :data:`NEAR_POWER_LIMIT` of the recorded limit), else that they
    do not. :data:`CONFIG_CLOCK_COLUMNS`, MHz and %; empty without per-run clocks."""
    spec = manifest_spec(manifest)
    backend = backend_of(manifest, spec)
    runs = _table(tables, C.TABLE_RUNS)
    empty = pd.DataFrame(columns=CONFIG_CLOCK_COLUMNS)
    if not B.on_gpu(backend) or runs.empty or C.METRIC not in runs:
        return empty
    time = _durations(runs, B.duration_metric(backend or None))
    samples = None if time is None else _samples(time, tables, _windows(tables, manifest))
    if time is None or samples is None:
        return empty
    medians = _config_medians(time, np.array([s.mhz for s in samples]))
    known = {k: m for k, (m, n) in medians.items() if n and not pd.isna(k[0])}
    if not known:
        return empty
    fastest = max(known, key=lambda k: known[k])
    by_config: dict[tuple[Any, int], list[_Sample]] = {}
    for s, key in zip(samples, zip(time.annotation, time.config)):
        by_config.setdefault(key, []).append(s)
    nvml = _table(tables, C.TABLE_NVML)
    traced = C.POWER_W in nvml and bool(nvml[C.POWER_W].notna().any())
    rows = [[ann, cfg, mhz, fastest[0], fastest[1], known[fastest],
             100 * (1 - mhz / known[fastest]),
             _slow_cause(by_config[(ann, cfg)], job_gpu(manifest).get("power_limit_w"),
                         traced)]
            for (ann, cfg), mhz in known.items()
            if mhz < (1 - CLOCK_DROP_PCT / 100) * known[fastest]]
    return pd.DataFrame(rows, columns=CONFIG_CLOCK_COLUMNS)


def _slow_cause(samples: list[_Sample], limit: Any, traced: bool) -> str:
    """What the files say of why a config's runs (``samples``) ran at a lower clock, its kind
    first, the detail in parentheses (a caption lists the configs after it, behind a colon):
    ``"power management (NVML reported SW power cap at the runs)"``. ``limit``: the power
    limit in W, if recorded; ``traced``: the job's NVML trace has power readings (which the
    runs' clocks may not be matched to)."""
    capped = sorted({n for s in samples if s.mask is not None for n in _capping(s.mask)})
    watts = [s.watts for s in samples if np.isfinite(s.watts)]
    has_limit = isinstance(limit, (int, float)) and limit > 0
    if any("power" in n.lower() for n in capped):
        return f"power management (NVML reported {', '.join(capped)} at the runs)"
    if capped:
        return f"thermal (NVML reported {', '.join(capped)} at the runs)"
    if watts and has_limit and max(watts) >= NEAR_POWER_LIMIT * limit:
        return (f"power management (the runs drew up to {max(watts):.0f} W of the {limit:g} W "
                "limit)")
    drew = (f"the runs drew up to {max(watts):.0f} W" + (f" of the {limit:g} W limit"
                                                            if has_limit else
                                                            ", the power limit not recorded")
            if watts else "the job's NVML trace read power, but no reading is matched to "
            "these runs" if traced else "no power reading was recorded for these runs")
    return f"cause not shown (no power or thermal throttle reason at the runs; {drew})"


@functools.lru_cache(maxsize=256)
def _names(mask: int) -> tuple[str, ...]:
    """The names of the bits set in an NVML throttle mask (a run's mask repeats across a job's
    runs: each is named once)."""
    return tuple(name for bit, name in THROTTLE_BITS.items() if int(mask) & bit)


@functools.lru_cache(maxsize=256)
def _capping(mask: int) -> tuple[str, ...]:
    """:func:`capping` of ``mask``, each mask named once per process."""
    return tuple(capping(mask))


def _job_throttle(nvml: pd.DataFrame) -> str:
    """``"; the job's NVML trace (not placed on runs): SW power cap in 4 of 241 samples, up to
    207 W"`` when any sample was capped, else ""."""
    if nvml.empty or C.THROTTLE_REASONS not in nvml:
        return ""
    masks = nvml[C.THROTTLE_REASONS].fillna(0).astype(int)
    hit = masks[(masks.to_numpy() & CAPPING_BITS) != 0]  # capping(m) names a bit: one array op
    if hit.empty:
        return ""
    names = sorted({n for m in hit for n in capping(m)})
    watts = nvml[C.POWER_W].max() if C.POWER_W in nvml else float("nan")
    return (f"; the job's NVML trace (not placed on runs): {', '.join(names)} in {len(hit)} of "
            + counted(len(nvml), "sample") + (f", up to {watts:.0f} W" if pd.notna(watts) else ""))


def _idle(time: _Runs, tables: Mapping[str, pd.DataFrame], windows: _Windows | None,
          medians: _Medians) -> _Rows:
    """The gap before each run: flagged when an NVML sample inside it reads "GPU idle" or a
    clock more than :data:`CLOCK_DROP_PCT` % below the median of the run's own config
    (``medians``; the whole trace's median made every gap before a config that runs at a
    steady lower clock a dropped one)."""
    nvml = _table(tables, C.TABLE_NVML)
    if windows is None or nvml.empty:
        return _rows(time, IDLE_GAP, NOT_CHECKED, "the runs are not placed in time (no CUPTI "
                     "launch times with the NVML trace's start)")
    # each run's gap: its T0 less the T1 of the run before it in time (pandas' sort_values
    # order: numpy's quicksort of T0); the first run has none
    placed = list(windows.items())
    first = np.array([w[0] for _, w in placed], dtype=float)
    order = np.argsort(first, kind="quicksort")
    gaps = {placed[order[0]][0]: float("nan")} if len(order) else {}
    for before, after in zip(order[:-1], order[1:]):
        gaps[placed[after][0]] = placed[after][1][0] - placed[before][1][1]
    t = nvml[C.TIME_S].to_numpy(float)
    clock = nvml[C.SM_CLOCK_MHZ].to_numpy(float) if C.SM_CLOCK_MHZ in nvml else np.full(len(t),
                                                                                        np.nan)
    masks = nvml[C.THROTTLE_REASONS].fillna(0).to_numpy(int) if C.THROTTLE_REASONS in nvml \
        else np.zeros(len(t), int)
    idle_bit = (masks & _IDLE) != 0
    results, evidence = [], []
    for key in _keys(time):
        t0 = windows.get(key, _UNPLACED)[0]
        gap_s = gaps.get(key, float("nan"))
        if pd.isna(gap_s):
            results.append(NOT_CHECKED if pd.isna(t0) else PASS)
            evidence.append("no CUPTI start for this run" if pd.isna(t0)
                            else "the job's first timed run")
            continue
        inside = (t > t0 - gap_s) & (t < t0)
        busy, clocked = medians.get(key[:2], (float("nan"), 0))
        clocked = clocked if busy > 0 else 0  # a median read as 0 MHz: no drop to judge
        low = clock < (1 - CLOCK_DROP_PCT / 100) * busy if clocked else np.zeros(len(t), bool)
        idle = inside & (idle_bit | low)
        gap = f"{1e3 * gap_s:.3g} ms without the job's kernels before the run"
        if idle.any():
            least = float(clock[idle].min())
            results.append(FLAG)
            evidence.append(f"{gap}; NVML read {least:,.0f} MHz"
                            + (" (GPU idle)" if (masks[idle] & _IDLE).any() else "")
                            + " inside it" + (f" vs its config's median {busy:,.0f} MHz "
                                              f"({100 * (least / busy - 1):+.1f} %; limit "
                                              f"{CLOCK_DROP_PCT:g} %)" if clocked else "")
                            + ": long enough to drop the clock")
        else:
            results.append(PASS)
            # "(s)" kept: the recorded bundles' run_audit tables hold this text, and a
            # rebuild of their tables must give the same files (test_post_processing)
            evidence.append(f"{gap}; {int(inside.sum())} NVML sample(s) inside it, none idle")
    return _rows(time, IDLE_GAP, results, evidence)


def _host(time: _Runs, manifest: Mapping[str, Any], backend: str) -> _Rows:
    if B.on_gpu(backend):
        return _rows(time, HOST_CONTENTION, NOT_APPLICABLE, "GPU time: the host's load is "
                     "not in it")
    entry = manifest.get("backend")
    figures = entry.get("host_contention") if isinstance(entry, Mapping) else None
    if not isinstance(figures, Mapping):
        return _rows(time, HOST_CONTENTION, NOT_CHECKED, "the backend recorded no host "
                     "contention figures")
    if figures.get("judged") is False:  # a few ms of work: one scheduling delay decides it
        return _rows(time, HOST_CONTENTION, NOT_CHECKED, B.too_short_to_judge(
            figures["cpu_ns"], figures["min_cpu_ns"], figures["threshold"]))
    fraction = figures.get("waiting_fraction")
    said = (B.waited_for_cpu(fraction) if isinstance(fraction, (int, float))
            else "host load recorded")
    return _rows(time, HOST_CONTENTION, FLAG if figures.get("warning") else PASS,
                 said + (" (the backend warned)" if figures.get("warning") else ""))


def _launch(time: _Runs, manifest: Mapping[str, Any], backend: str) -> _Rows:
    if backend != B.EVENTS:
        return _rows(time, LAUNCH_BOUND, NOT_APPLICABLE, "the kernel's own GPU time" if
                     B.on_gpu(backend) else "host timer")
    entry = manifest.get("backend")
    records = entry.get(B.HOST_LAUNCH) if isinstance(entry, Mapping) else None
    host = {(str(r.get("annotation")), int(r.get("config", -1))): r.get(B.HOST_MEDIAN_NS)
            for r in records or () if isinstance(r, Mapping)}
    median = pd.DataFrame({C.ANNOTATION: time.annotation, C.CONFIG: time.config,
                           C.VALUE: time.value}).groupby([C.ANNOTATION, C.CONFIG])[C.VALUE].median()
    results, evidence = [], []
    for ann, cfg in zip(time.annotation, time.config):
        h, e = host.get((str(ann), int(cfg))), median.get((ann, cfg))
        if not isinstance(h, (int, float)) or not e:
            results.append(NOT_CHECKED)
            evidence.append("no host launch record for this config")
            continue
        bound = h >= LAUNCH_BOUND_SHARE * e
        results.append(FLAG if bound else PASS)
        evidence.append(f"host time between the marks {h / 1e3:,.1f} µs vs events {e / 1e3:,.1f} "
                        f"µs (config medians): {100 * h / e:.0f} %"
                        + ("; the GPU likely waited for the host" if bound else ""))
    return _rows(time, LAUNCH_BOUND, results, evidence)


def _timer(time: _Runs, tables: Mapping[str, pd.DataFrame], manifest: Mapping[str, Any],
           spec: JobSpec | PartialSpec | None, backend: str) -> _Rows:
    floors = _floors(tables, manifest, spec, backend)
    results, evidence = [], []
    durations: list[_Said] = []
    for ann, cfg, value in zip(time.annotation, time.config, time.value.tolist()):
        if not np.isfinite(value):  # a damaged table's empty cell: nothing to check
            results.append(NOT_CHECKED)
            evidence.append(_NO_VALUE)
            durations.append(None)
            continue
        floor, why = floors.get((str(ann), int(cfg)), (0.0, "no physical minimum known"))
        if backend == B.EVENTS and EVENTS_RESOLUTION_NS > floor:
            floor, why = EVENTS_RESOLUTION_NS, "the CUDA events' 0.5 µs resolution"
        bad = not value > floor
        results.append(FLAG if bad else PASS)
        text, said = _stated(f"{{value}} {{unit}} {'at or below' if bad else 'above'} "
                             f"{{reference}} {{unit}} ({literal(why)})", value, floor)
        evidence.append(text)
        durations.append(said)
    return _rows(time, TIMER, results, evidence, durations)


#: dtype -> the roofs its math may legally run under: fp32 matmuls run as TF32 on the tensor
#: cores under torch's allow_tf32 (peaks.above_roof_reason), so the least time is TF32's.
_MAY_RUN_AS = {"fp32": ("fp32", "tf32")}


def _floors(tables: Mapping[str, pd.DataFrame], manifest: Mapping[str, Any],
            spec: JobSpec | PartialSpec | None, backend: str
            ) -> dict[tuple[str, int], tuple[float, str]]:
    """(annotation, config) -> (the least time in ns the kernel's analytic work allows, why)."""
    work = _table(tables, C.TABLE_WORK)
    device = peaks.match_device(str(job_gpu(manifest).get("name") or ""))
    if not B.on_gpu(backend) or device is None or work.empty or C.FLOPS not in work:
        return {}
    flushed = l2_state_of(manifest, spec)[0] == L2_FLUSHED
    out = {}
    # the rows as dicts of Python values, as to_dict("records") gives them, from the columns
    # (to_dict's per-row lookups cost more than the rest of the timer check on a warm job)
    names = work.columns.tolist()  # plain names: an Index of arrow strings iterates slowly
    for r in (dict(zip(names, row)) for row in zip(*(work[c].tolist() for c in names))):
        said, floor = [], 0.0
        roofs = [peaks.datasheet_compute(device, d) for d in
                 _MAY_RUN_AS.get(str(r.get(C.DTYPE) or ""), (str(r.get(C.DTYPE) or ""),))]
        sheet = max((x for x in roofs if x is not None), key=lambda x: x.value, default=None)
        if sheet is not None and pd.notna(r.get(C.FLOPS)) and r[C.FLOPS] > 0:
            floor = r[C.FLOPS] / (sheet.value * 1e3)  # TFLOP/s = 1e3 FLOP/ns
            said.append(f"{r[C.FLOPS]:.3g} FLOPs at the {sheet.value:g} TFLOP/s {sheet.label}")
        if flushed and pd.notna(r.get(C.BYTES)) and r[C.BYTES] > 0:
            dram = r[C.BYTES] / device.dram_gbps  # GB/s = bytes/ns
            said.append(f"{r[C.BYTES]:.3g} bytes at {device.dram_gbps:,.0f} GB/s DRAM")
            floor = max(floor, dram)
        if said:
            out[(str(r[C.ANNOTATION]), int(r[C.CONFIG]))] = (
                floor, f"{device.name} datasheet: " + "; ".join(said))
    return out


_SLOWER_RUN = "; this run in the slower group"
_NO_VALUE = "no duration recorded for this run"


def _population(time: _Runs) -> _Rows:
    """:func:`populations.check` per annotation x config (runs of a missing annotation left
    out, as a groupby leaves them), all configs at once (:func:`populations.check_each`: their
    mixture fits made together); one frame built at the end (a frame per config cost more
    than the checks on a warm job's few configs)."""
    values = time.value
    order: list[int] = []
    results: list[str] = []
    evidence: list[str] = []
    durations: list[_Said] = []
    # time is sorted by annotation, config and run (audit_runs): each config's rows in run order
    configs: dict[tuple[Any, int], list[int]] = {}
    for i, key in enumerate(zip(time.annotation, time.config)):
        if not pd.isna(key[0]):
            configs.setdefault(key, []).append(i)
    groups = [np.asarray(rows, dtype="int64") for rows in configs.values()]
    for positions, found in zip(groups, populations.check_each([values[g] for g in groups])):
        said, template = found.describe(), found.template()
        order += positions.tolist()
        if not found.checked:
            results += [NOT_CHECKED] * len(positions)
            evidence += [said] * len(positions)
            durations += [None] * len(positions)
            continue
        # check() drops runs without a finite duration (a damaged table's empty cell): its
        # flags are those of the others, in order; such a run is not checked, and named
        flags = iter(found.slow)
        slow = [bool(next(flags, False)) if ok else None
                for ok in np.isfinite(values[positions])]
        results += [NOT_CHECKED if s is None else FLAG if s else PASS for s in slow]
        evidence += [_NO_VALUE if s is None else f"{said}{_SLOWER_RUN}" if s else said
                     for s in slow]
        medians = (found.slow_median, found.fast_median)
        durations += [None if s is None or template is None else
                      (f"{template}{_SLOWER_RUN}" if s else template, *medians) for s in slow]
    return _rows(time.take(order), POPULATION, results, evidence, durations)


@dataclass
class ConfigAudit:
    """One annotation x config's audit, summarised.

    Attributes:
        runs: runs audited; passed: runs with no flag.
        flagged: check -> runs flagged; evidence: check -> the evidence of its first flagged
            run (for a population flag: the config's finding).
        not_checked: check -> why it could not run (its first run's evidence).
    """

    runs: int = 0
    passed: int = 0
    flagged: dict[Check, int] = field(default_factory=dict)
    evidence: dict[Check, str] = field(default_factory=dict)
    not_checked: dict[Check, str] = field(default_factory=dict)

    @property
    def invalid(self) -> list[Check]:
        """The :data:`INVALIDATING` checks flagged (their mean is no single valid figure)."""
        return [c for c in INVALIDATING if c in self.flagged]

    def describe(self, check: Check) -> str:
        """``"population: 61 of 100 runs (two modes ...)"``; a :data:`JOB_WIDE` check without
        its evidence, the job's, said once (:func:`job_evidence`)."""
        said = f"{check}: {self.flagged[check]} of {counted(self.runs, 'run')}"
        return said if check in JOB_WIDE else f"{said} ({self.evidence[check]})"

    def evidence_text(self) -> str:
        """Each flagged check with its runs flagged and the evidence of its first flagged run,
        "" when none: ``"clock 3: 1,402 MHz vs its config's median 1,515 MHz (-7.5 %; limit
        5 %) | host_contention 3"``, checks apart by " | " (an evidence has semicolons of its
        own). A :data:`JOB_WIDE` check is named with its runs alone: its evidence is the
        job's, said once (:func:`job_evidence`)."""
        return " | ".join(f"{c} {n}" if c in JOB_WIDE else f"{c} {n}: {self.evidence[c]}"
                          for c, n in self.flagged.items())

    def badge(self) -> str:
        """``"100 of 100 runs passed"`` or ``"39 of 100 runs passed (population 61, clock 1)"``."""
        flags = ", ".join(f"{c} {n}" for c, n in self.flagged.items())
        return (f"{self.passed} of {counted(self.runs, 'run')} passed"
                + (f" ({flags})" if flags else ""))


def config_audits(audit: pd.DataFrame) -> dict[tuple[str, int], ConfigAudit]:
    """(annotation, config) -> its :class:`ConfigAudit`, from an :func:`audit_runs` frame."""
    keys = [C.ANNOTATION, C.CONFIG]
    flagged = audit[audit[RESULT] == FLAG]
    runs = audit.groupby(keys, sort=False)[C.RUN].nunique()
    bad_runs = flagged.groupby(keys)[C.RUN].nunique()
    # as dicts: a lookup in their MultiIndex per pair and check was most of the badges of a
    # 1,000-config sweep
    per_check = flagged.groupby([*keys, CHECK])[C.RUN].nunique().to_dict()
    evidence = flagged.groupby([*keys, CHECK])[EVIDENCE].first().to_dict()
    skipped = audit[audit[RESULT] == NOT_CHECKED].groupby([*keys, CHECK])[EVIDENCE].first(
    ).to_dict()
    out: dict[tuple[str, int], ConfigAudit] = {}
    for key, n in runs.items():
        ann, cfg = cast("tuple[str, int]", key)  # grouped by a list: tuple keys
        summary = ConfigAudit(runs=int(n), passed=int(n - bad_runs.get(key, 0)))
        for check in CHECKS:
            at = (ann, cfg, check.value)  # the table's text
            if at in per_check:
                summary.flagged[check] = int(per_check[at])
                summary.evidence[check] = str(evidence[at]).split(_SLOWER_RUN)[0]
            if at in skipped:
                summary.not_checked[check] = str(skipped[at])
        out[(str(ann), int(cfg))] = summary
    return out


def job_evidence(audit: pd.DataFrame) -> dict[Check, str]:
    """Each :data:`JOB_WIDE` check that flagged a run of ``audit`` (:func:`audit_runs`' frame)
    -> its evidence, once for the job (its first flagged run's: every run's is the same):
    ``{Check.HOST_CONTENTION: "the time its threads waited for a CPU adds up to ..."}``."""
    flagged = audit[(audit[RESULT] == FLAG) & audit[CHECK].isin(JOB_WIDE)]
    first = flagged.groupby(CHECK)[EVIDENCE].first()
    return {c: str(first[c.value]) for c in JOB_WIDE if c.value in first.index}


def summary_frame(audit: pd.DataFrame) -> pd.DataFrame:
    """Per annotation x config: Annotation, Config, Runs, Passed, Flags (``check n, ...``),
    Evidence (:meth:`ConfigAudit.evidence_text`: a :data:`JOB_WIDE` check's evidence is
    :func:`job_evidence`'s), NotChecked (check names), Badge (:meth:`ConfigAudit.badge`)."""
    rows = [{C.ANNOTATION: ann, C.CONFIG: cfg, C.RUNS: a.runs, "Passed": a.passed,
             "Flags": ", ".join(f"{c} {n}" for c, n in a.flagged.items()),
             EVIDENCE: a.evidence_text(),
             "NotChecked": ", ".join(a.not_checked), "Badge": a.badge()}
            for (ann, cfg), a in config_audits(audit).items()]
    return pd.DataFrame(rows, columns=[C.ANNOTATION, C.CONFIG, C.RUNS, "Passed", "Flags",
                                       EVIDENCE, "NotChecked", "Badge"])
