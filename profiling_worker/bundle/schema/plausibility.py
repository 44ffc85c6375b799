"""Plausibility checks of a bundle's tables: every number either passes or gets a note.

One module owns these checks (issue 11, "the whole kind"). The worker and the importer call
:func:`check_bundle` when they finalise a bundle and store the result in ``manifest.json`` under
``"notes"``; the app calls it at load time for bundles recorded before the key existed, and every
page shows the notes about the values it draws.

Checks (each note names its ``check``):

``percent_above_100``   a percentage above 100 (:func:`is_percent`: unit ``%`` where the table
                        gives a unit, else Nsight Compute's naming of percentages).
``clock_above_max``     an SM clock (``gpc__/sm__cycles_elapsed.avg.per_second`` in Hz, the
                        ``sm_clock`` collector or the NVML trace in MHz) above the GPU's maximum
                        (manifest ``environment.gpus[].max_sm_clock_mhz``, NVML), or a memory clock
                        (``dram__cycles_elapsed.avg.per_second``, NVML trace) above
                        ``max_mem_clock_mhz``; a DRAM rate (``dram__*`` in byte/s) above the
                        datasheet DRAM bandwidth.
``negative_value``      a negative time, byte count or other counter (no Nsight Compute metric the
                        dashboard reads can be negative), a duration of 0 (no kernel or region
                        takes no time), in the runs table or, for a row without runs (an
                        imported processed_data file), the aggregated table's AvgValue or
                        MinValue; or negative analytic FLOPs/bytes.
``interval_below_zero`` a CI95 lower bound below zero for a strictly positive quantity.
``runs_missing``        a config of the spec without runs, fewer or more runs than the spec asked,
                        a NumRuns that does not match the per-run rows, or rows of no config.
``kernels_vary``        the kernel launch count differs between runs of one config.
``unattributed``        kernel launches outside every config/run range or annotation (table
                        ``unattributed``): measured, but in no value the pages draw.
``above_roof``          achieved DRAM bandwidth (measured DRAM bytes when collected, else the
                        analytic minimum) or FLOP/s above the datasheet roof
                        (:mod:`profiling_worker.bundle.schema.peaks`); the note states the likely
                        reason (L2-warm data on the CUPTI backend unless its manifest ``backend``
                        says ``l2_flushed``, or with ``cache_control="none"``).
``import``              written by the importer (not a check of the tables): what an import did
                        to values (left out, re-derived, configs recovered) or that the bundle
                        holds only part of a job (``warning``, shown on every page).
``slow_gpu``            written by a sweep's merge (not a check of the tables): a config ran on a
                        GPU whose reference kernel was slower than its peers' (shown on every
                        page).

A note is a plain dict (JSON in the manifest): ``check``, ``severity`` (``warning`` for a value
that cannot be right as drawn, ``info`` for one to keep in mind), ``scope`` (``bundle``,
``annotation``, ``config`` or ``metric``), ``annotation``, ``config`` (index into
``spec.configs``), ``metric`` (Nsight Compute name, or None) and ``message``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Mapping
from typing import Any, Literal, TypedDict, cast

import numpy as np
import numpy.typing as npt
import pandas as pd

from profiling_worker.bundle.schema import backends as B, columns as C, metrics as M, partial, peaks
from profiling_worker.bundle.schema.bundle_spec import RUNS_NOT_ASKED as RUNS_NOT_ASKED
from profiling_worker.bundle.schema.bundle_spec import (PartialSpec, asked_runs, backend_of,
                                                        manifest_spec)
from profiling_worker.bundle.schema.manifest import job_gpu
from profiling_worker.bundle.schema.spec import BACKEND_UNKNOWN, JobSpec
from profiling_worker.bundle.number_text import counted

NOTES_KEY = "notes"  # manifest.json key of the list of notes
WARNING, INFO = "warning", "info"
PERCENT_ABOVE_100, CLOCK_ABOVE_MAX = "percent_above_100", "clock_above_max"
NEGATIVE_VALUE, INTERVAL_BELOW_ZERO = "negative_value", "interval_below_zero"
RUNS_MISSING, KERNELS_VARY = "runs_missing", "kernels_vary"
ABOVE_ROOF, UNATTRIBUTED, IMPORT = "above_roof", "unattributed", "import"
SLOW_GPU = "slow_gpu"  # written by a sweep's merge (profiling_worker/sweep/reference.py)
CHECKS = (PERCENT_ABOVE_100, CLOCK_ABOVE_MAX, NEGATIVE_VALUE, INTERVAL_BELOW_ZERO, RUNS_MISSING,
          KERNELS_VARY, UNATTRIBUTED, ABOVE_ROOF, IMPORT, SLOW_GPU)

#: Percentages are rounded by Nsight Compute; 100.01 % is rounding, 101 % is not.
PERCENT_TOLERANCE = 0.05
#: Clock counters average over the kernel; 1 % above the NVML maximum is sampling granularity.
CLOCK_TOLERANCE = 0.01
SM_CLOCK_HZ_METRICS = (M.GPC_HZ, M.SM_HZ)
DRAM_BYTES = (M.DRAM_READ, M.DRAM_WRITE)
#: manifest ``backend`` key a backend sets true when it flushed the L2 before every run.
L2_FLUSHED_KEY = "l2_flushed"
L2_WARM_REASON = ("likely reason: L2-warm data ({why}): the inputs stay in the L2 cache between "
                  "runs, so bytes come from L2, not DRAM; run it on the ncu backend with "
                  "cache_control \"all\" for DRAM-bound numbers")


class Note(TypedDict):
    """One plausibility note as stored in ``manifest.json`` (a list under :data:`NOTES_KEY`)."""
    check: str  # one of CHECKS
    severity: str  # WARNING or INFO
    scope: Literal["metric", "config", "annotation", "bundle"]
    annotation: str | None
    config: int | None  # config index
    metric: str | None  # Nsight Compute metric name
    message: str


def note(check: str, severity: str, message: str, annotation: str | None = None,
         config: int | None = None, metric: str | None = None) -> Note:
    """One note as stored in ``manifest.json``; the scope follows from the keys given."""
    scope: Literal["metric", "config", "annotation", "bundle"] = (
             "metric" if metric is not None else "config" if config is not None
             else "annotation" if annotation is not None else "bundle")
    return {"check": check, "severity": severity, "scope": scope, "annotation": annotation,
            "config": None if config is None else int(config), "metric": metric,
            "message": message}


def check_bundle(tables: Mapping[str, pd.DataFrame], manifest: Mapping[str, Any]) -> list[Note]:
    """Every plausibility note for one bundle.

    Args:
        tables: table name (``columns.TABLES``) -> frame; missing or empty tables are skipped.
        manifest: the manifest dict (``spec``, ``environment``, ``backend`` are read).

    Returns:
        Notes (see the module docstring), warnings first; [] when everything is plausible.
    """
    def table(name: str) -> pd.DataFrame:
        frame = tables.get(name)
        return frame if frame is not None else pd.DataFrame()

    runs, agg = table(C.TABLE_RUNS), table(C.TABLE_AGGREGATED)
    gpu = job_gpu(manifest)
    spec = manifest_spec(manifest)
    asked = asked_runs(manifest, spec)
    n_configs = len(spec.configs) if spec is not None else 0
    if spec is not None and all(set(c) == {C.CONFIG_INDEX} for c in spec.configs):
        n_configs = 0  # configs numbered per region by the importer: no spec to miss one of
    notes = [*_percent(runs), *_negative(runs, agg, table(C.TABLE_WORK)), *_intervals(agg),
             *_counts(runs, agg, n_configs, asked, partial.not_measured(manifest)),
             *_kernels_vary(agg),
             *_unattributed(table(C.TABLE_UNATTRIBUTED)),
             *_clocks(runs, table(C.TABLE_COLLECTORS), table(C.TABLE_NVML), gpu),
             *_roofs(agg, table(C.TABLE_WORK), manifest, gpu)]
    return sorted(notes, key=lambda n: n["severity"] != WARNING)


def manifest_notes(tables: Mapping[str, pd.DataFrame], manifest: Mapping[str, Any]) -> list[Note]:
    """The manifest's notes, or, for a bundle finalised before they existed (no ``"notes"`` key),
    the notes :func:`check_bundle` gives now."""
    stored = manifest.get(NOTES_KEY)
    if isinstance(stored, list):
        # written by note() (bundle/writer.finish_bundle); JSON keeps the shape, not the type
        return [cast(Note, n) for n in stored if isinstance(n, dict)]
    return check_bundle(tables, manifest)


def _has(frame: pd.DataFrame, *cols: str) -> bool:
    return not frame.empty and all(c in frame for c in cols)


def _where(row: pd.Series) -> str:
    return f"{row[C.ANNOTATION]}, config {int(row[C.CONFIG])}"


def _per_key(frame: pd.DataFrame, mask: pd.Series[bool] | npt.NDArray[np.bool_], check: str,
             text: str, value: str = C.VALUE) -> list[Note]:
    """One note per annotation x config x metric of the rows ``mask`` selects; ``text`` is
    formatted with ``where``, ``metric``, ``worst`` (the extreme of the ``value`` column),
    ``lowest`` (its smallest), ``unit`` (" ns", "" where the frame has none) and ``count``."""
    if not mask.any():  # the usual case: no frame selected, no groupby
        return []
    bad = frame[mask]
    out = []
    for key, rows in bad.groupby([C.ANNOTATION, C.CONFIG, C.METRIC], sort=True):
        ann, cfg, metric = cast("tuple[str, int, str]", key)  # grouped by a list: tuple keys
        out.append(note(check, WARNING, text.format(
            where=f"{ann}, config {int(cfg)}", metric=metric, worst=rows[value].abs().max(),
            lowest=rows[value].min(), unit=_unit(rows), count=len(rows)), ann, int(cfg),
            str(metric)))
    return out


def _unit(rows: pd.DataFrame) -> str:
    """`` <unit>`` of the rows' first unit, "" where they have none."""
    units = rows[C.UNIT].dropna().astype(str) if C.UNIT in rows else pd.Series(dtype=str)
    return f" {units.iloc[0]}" if len(units) and units.iloc[0] else ""


#: ``derived__pct_occupancy_per_block_size`` and its kin (per register count, shared memory
#: size, barrier count): the occupancy curve over that launch parameter (the Occupancy section's
#: graphs), whose one exported value is no percentage of the launch (3276 with unit ``%``,
#: 8524 ``%/register`` in import_cases/14's raw page).
_PER_PARAMETER = re.compile(r"pct_[a-z0-9_]*_per_")


def is_percent(metric: str, unit: Any) -> bool:
    """True for a percentage of the launch, which cannot exceed 100.

    By the unit where one is given (``%``; not ``%/register``, ``ratio`` or a count), else by
    Nsight Compute's metric naming (Profiling Guide, "Metrics Structure"): a ``.pct`` or
    ``.pct_of_peak_sustained_*`` submetric, or a name ending in ``_pct``
    (``launch__occupancy_cluster_pct``). Never an occupancy curve (:data:`_PER_PARAMETER`)."""
    name = str(metric)
    if _PER_PARAMETER.search(name):
        return False
    given = "" if unit is None or unit != unit else str(unit).strip()  # NaN != NaN
    if given:
        return given == "%"
    submetric = name.rsplit(".", 1)[1] if "." in name else ""
    return submetric == "pct" or submetric.startswith("pct_of_peak") or name.endswith("_pct")


def _percent(runs: pd.DataFrame) -> list[Note]:
    if not _has(runs, C.METRIC, C.VALUE):
        return []
    units = runs[C.UNIT].tolist() if C.UNIT in runs else [""] * len(runs)
    pct = [is_percent(str(m), u) for m, u in zip(runs[C.METRIC].tolist(), units)]
    if not any(pct):  # the usual runs table (durations): no mask of frames to build
        return []
    mask = pd.Series(pct, index=runs.index) & (runs[C.VALUE] > 100.0 + PERCENT_TOLERANCE)
    # a run of one launch holds the profiler's own value: no sum over kernels to suspect
    single = (runs[C.KERNELS] == 1) if C.KERNELS in runs else pd.Series(False, index=runs.index)
    return [*_per_key(runs, mask & ~single, PERCENT_ABOVE_100,
                      "{where}: {metric} reads {worst:.1f} % in {count} run(s), above 100 % of "
                      "peak: this value cannot be right (a percentage summed over kernels?)"),
            *_per_key(runs, mask & single, PERCENT_ABOVE_100,
                      "{where}: {metric} reads {worst:.1f} % in {count} run(s) of one launch, "
                      "above 100 % of peak: the profiler itself wrote this value (no sum over "
                      "kernels); read it as its counters' ratio, not as a share of a peak")]


def _impossible(frame: pd.DataFrame, values: pd.Series[Any]
                ) -> pd.Series[bool] | npt.NDArray[np.bool_]:
    """Rows of ``frame`` whose ``values`` (one of its columns, or a Series on its index) are
    negative, or 0 for a duration (``M.DURATION_METRICS``)."""
    numbers = values.to_numpy()
    if numbers.dtype.kind in "fiu" and not (numbers <= 0).any():
        # the usual table (issue 40): no value at or below 0, no metric names to match
        return np.zeros(len(numbers), dtype=bool)
    duration = frame[C.METRIC].isin(M.DURATION_METRICS)
    return (values < 0) | (duration & (values == 0))


def _negative(runs: pd.DataFrame, agg: pd.DataFrame, work: pd.DataFrame) -> list[Note]:
    """Negative values, and durations of 0, in the runs table; in the aggregated table those of
    the rows no run gives (an imported processed_data file's AvgValue or MinValue, the only
    values of such a row); negative analytic FLOPs or bytes."""
    out = []
    if _has(runs, C.METRIC, C.VALUE):
        out += _per_key(runs, _impossible(runs, runs[C.VALUE]), NEGATIVE_VALUE,
                        "{where}: {metric} is at or below 0 ({count} run(s), down to "
                        "{lowest:g}{unit}); times, byte counts and counters cannot be negative, "
                        "nor a duration 0")
    if _has(agg, C.ANNOTATION, C.CONFIG, C.METRIC, C.AVG) and not _all_positive(agg):
        avg = agg[C.AVG]
        smallest = (cast("pd.Series[Any]", np.fmin(agg[C.MIN].fillna(avg), avg))
                    if C.MIN in agg else avg)  # a ufunc of Series gives a Series
        impossible = _impossible(agg, smallest)
        # only impossible rows are looked up among the runs (issue 40: merging every row was
        # most of a warm job's checks, for a note that only such a row makes)
        if impossible.any():
            alone = agg.assign(_smallest=smallest)[impossible]
            keys = [C.ANNOTATION, C.CONFIG, C.METRIC]
            if _has(runs, *keys):
                alone = alone.merge(runs[keys].drop_duplicates(), on=keys, how="left",
                                    indicator=True)
                alone = alone[alone["_merge"] == "left_only"]
            out += _per_key(alone, _impossible(alone, alone["_smallest"]), NEGATIVE_VALUE,
                            "{where}: {metric} reads {lowest:g}{unit} in the aggregated table "
                            "(AvgValue or MinValue, no per-run values); times, byte counts and "
                            "counters cannot be negative, nor a duration 0", "_smallest")
    for column in (C.FLOPS, C.BYTES):
        if _has(work, column, C.ANNOTATION, C.CONFIG):
            if _none_in(work[column].to_numpy(), lambda v: v < 0):
                continue  # the usual table: numpy's look, no Series compared (issue 40)
            below = work[column] < 0
            if not below.any():  # the usual case: no frame selected to look at nothing
                continue
            for _, row in work[below].iterrows():
                out.append(note(NEGATIVE_VALUE, WARNING,
                                f"{_where(row)}: the kernel's analytic {column} is negative "
                                f"({row[column]:g}); fix its formula", row[C.ANNOTATION],
                                int(row[C.CONFIG])))
    return out


def _none_in(values: np.ndarray, test: Any) -> bool:
    """True when ``values`` (a column's numpy values) are numbers (int, uint or float) and
    ``test`` (a comparison, elementwise) holds for none of them; False where it may hold or
    the column is of another kind (pandas then compares as before)."""
    return values.dtype.kind in "iuf" and not bool(test(values).any())


def _all_positive(agg: pd.DataFrame) -> bool:
    """True when every row of ``agg`` has an AvgValue above 0 and a MinValue above 0 or
    missing, both float columns: no row is :func:`_impossible` (the usual table; issue 40: the
    Series that find the smallest value cost more than this look at the numbers)."""
    avg = agg[C.AVG].to_numpy()
    low = agg[C.MIN].to_numpy() if C.MIN in agg else avg
    if avg.dtype != np.float64 or low.dtype != np.float64:
        return False
    return bool((avg > 0).all() and not (low <= 0).any())


def _intervals(agg: pd.DataFrame) -> list[Note]:
    if not _has(agg, C.CI95_LOWER, C.AVG, C.METRIC):
        return []
    low, avg = agg[C.CI95_LOWER].to_numpy(), agg[C.AVG].to_numpy()
    if low.dtype == avg.dtype == np.float64 and not ((low < 0) & (avg > 0)).any():
        return []  # the usual table: numpy's look, without a Series per comparison (issue 40)
    below = (agg[C.CI95_LOWER] < 0) & (agg[C.AVG] > 0)
    if not below.any():
        return []
    bad = agg[below]
    return [note(INTERVAL_BELOW_ZERO, WARNING,
                 f"{_where(r)}: {r[C.METRIC]} CI95 starts at {r[C.CI95_LOWER]:g}, below zero "
                 "for a quantity that is always positive (the spread is too large for a "
                 "symmetric interval; more runs narrow it)", r[C.ANNOTATION], int(r[C.CONFIG]),
                 str(r[C.METRIC])) for _, r in bad.iterrows()]


def _counts(runs: pd.DataFrame, agg: pd.DataFrame, n_configs: int, asked: int | None,
            said: Collection[int] = ()) -> list[Note]:
    """Configs without runs (but those of ``said``: a partial job's note names them), run
    counts unlike the spec's (``asked``; None: no count to match), NumRuns unlike the per-run
    rows."""
    if not _has(runs, C.ANNOTATION, C.CONFIG, C.RUN, C.METRIC):
        return []
    out = []
    groups = _run_groups(runs)
    seen_of: dict[Any, set[Any]] = {}  # annotation -> configs with runs, sorted by annotation
    for ann, cfg, _metric in groups:
        seen_of.setdefault(ann, set()).add(cfg)
    for level, seen in seen_of.items():
        ann = str(level)
        missing = sorted(set(range(n_configs)) - seen - set(said))
        if missing:
            out.append(note(RUNS_MISSING, WARNING, f"{ann}: config(s) {_few(missing)} "
                            "of the spec have no runs", ann))
        stray = sorted(c for c in seen if not 0 <= c < n_configs)
        if stray and n_configs:
            out.append(note(RUNS_MISSING, WARNING, f"{ann}: rows for config(s) "
                            f"{_few(stray)} that the spec does not have "
                            "(launches outside every config?)", ann))
    if asked is not None and asked > 0:
        for (ann, cfg, metric), (runs_of, _, _) in groups.items():
            n = len(runs_of)
            if n != asked:
                word = "fewer" if n < asked else "more"
                out.append(note(RUNS_MISSING, WARNING, f"{ann}, config {int(cfg)}: {metric} has "
                                f"{counted(n, 'run')}, {word} than the {asked} the spec asked for",
                                ann, int(cfg), str(metric)))
    if _has(agg, C.NUM_RUNS, C.ANNOTATION, C.CONFIG, C.METRIC):
        per_run = set(runs[C.METRIC].tolist())  # Python values, as _run_groups reads them
        for ann, cfg, metric, k in zip(*(agg[c].tolist() for c in (
                C.ANNOTATION, C.CONFIG, C.METRIC, C.NUM_RUNS))):
            if metric not in per_run:  # aggregated only (an import's normalised rows,
                continue  # kept as written): there are no per-run rows to count
            _, n, used = groups.get((ann, cfg, metric), (set(), 0, 0))
            k = int(k)
            if k == n:
                continue
            # NumRuns counts the values used: missing values (a failed run, or left out by an
            # import with its reason) are said as such, not as a contradiction
            text = (f"{n - used} of {counted(n, 'per-run value')} missing (a failed run, or "
                    f"left out by the import); NumRuns counts the {k} used" if k == used
                    else f"NumRuns {k} but {counted(n, 'per-run row')}")
            out.append(note(RUNS_MISSING, WARNING, f"{ann}, config {int(cfg)}: {metric} {text}",
                            ann, int(cfg), str(metric)))
    return out


def _run_groups(runs: pd.DataFrame) -> dict[tuple[Any, Any, Any], tuple[set[Any], int, int]]:
    """Per annotation x config x metric of ``runs``, in sorted key order: (its distinct runs,
    its rows, its values that are not missing); rows with a missing key are left out, missing
    runs are not counted. What ``groupby([...], sort=True)``'s ``nunique``, ``size`` and
    ``count`` gave, in plain Python: on a warm job's few dozen rows pandas' per-operation cost
    was most of these checks' time (issue 40)."""
    # each column read once, as Python values (tolist): iterating a Series of pandas' arrow
    # strings makes a scalar per cell (issue 40)
    keys = [runs[c].tolist() for c in (C.ANNOTATION, C.CONFIG, C.METRIC, C.RUN)]
    kept = ~(pd.isna(keys[0]) | pd.isna(keys[1]) | pd.isna(keys[2]))
    has_run = ~pd.isna(keys[3])
    has_value = (runs[C.VALUE].notna().to_numpy() if C.VALUE in runs
                 else np.ones(len(runs), dtype=bool))  # no values: count the rows
    found: dict[tuple[Any, Any, Any], tuple[set[Any], list[int]]] = {}
    for i, (ann, cfg, metric, run) in enumerate(zip(*keys)):
        if kept[i]:
            runs_of, counted = found.setdefault((ann, cfg, metric), (set(), [0, 0]))
            if has_run[i]:
                runs_of.add(run)
            counted[0] += 1
            counted[1] += bool(has_value[i])
    try:
        order = sorted(found)
    except TypeError:  # keys of mixed types (an import's): first seen, rather than no notes
        order = list(found)
    return {key: (found[key][0], found[key][1][0], found[key][1][1]) for key in order}


def _few(items: list[int], limit: int = 8) -> str:
    """``1, 2, 3`` or ``1, 2, ... (40 in all)``: a message stays readable for long lists."""
    shown = ", ".join(map(str, items[:limit]))
    return shown if len(items) <= limit else f"{shown}, ... ({len(items)} in all)"


def _unattributed(frame: pd.DataFrame) -> list[Note]:
    """One note per annotation (empty: outside every annotation) with launches in no config.
    Launches of a known config outside every annotation (CUPTI: the kernel's set-up code and
    the L2 flush before each region) are listed on the Kernels page, not noted."""
    if C.CONFIG in frame:
        if _none_in(frame[C.CONFIG].to_numpy(), lambda v: v == C.NO_CONFIG):
            return []  # the usual table: numpy's look, no Series compared (issue 40)
        no_config = frame[C.CONFIG] == C.NO_CONFIG
        if not no_config.any():  # the usual case (CUPTI's launches outside every annotation
            return []            # have a config): no frame selected to look at nothing
        frame = frame[no_config]
    if frame.empty or C.ANNOTATION not in frame:
        return []
    frame = frame.assign(**{C.ANNOTATION: frame[C.ANNOTATION].fillna("").astype(str)})
    if C.METRIC in frame:  # one row per launch x metric: count the launches once
        frame = frame[frame[C.METRIC] == frame[C.METRIC].iloc[0]]
    out = []
    for key, rows in frame.groupby(C.ANNOTATION, sort=True):
        ann = str(key)
        where = f"in annotation {ann}" if ann else "outside every annotation"
        out.append(note(UNATTRIBUTED, WARNING, f"{len(rows)} kernel launch(es) {where} fell in "
                        "no config or run: they are in no value drawn here (listed on the "
                        "Kernels page, never merged into a config)", ann or None))
    return out


def _kernels_vary(agg: pd.DataFrame) -> list[Note]:
    if not _has(agg, C.KERNELS_VARY, C.METRIC):
        return []
    flags = agg[C.KERNELS_VARY].to_numpy()
    if flags.dtype == np.bool_ and not flags.any():
        return []  # the usual table: no Series made to find no flag (issue 40)
    vary = agg[C.KERNELS_VARY].fillna(False).astype(bool)
    if not vary.any():
        return []
    bad = agg[vary]
    return [note(KERNELS_VARY, INFO, f"{ann}, config {int(cfg)}: the number of kernel launches "
                 "differs between runs; each run's value combines the launches it had", ann,
                 int(cfg)) for (ann, cfg) in bad[[C.ANNOTATION, C.CONFIG]].drop_duplicates()
                 .itertuples(index=False)]


def _clocks(runs: pd.DataFrame, collectors: pd.DataFrame, nvml: pd.DataFrame,
            gpu: Mapping[str, Any]) -> list[Note]:
    max_sm, max_mem = gpu.get("max_sm_clock_mhz"), gpu.get("max_mem_clock_mhz")
    out: list[Note] = []
    if not isinstance(max_sm, (int, float)) or max_sm <= 0:
        return out
    limit = max_sm * (1 + CLOCK_TOLERANCE)
    values = runs[C.VALUE] if _has(runs, C.METRIC, C.VALUE) else None
    # in numpy, divided as the Series is: a look at them costs less than Series (issue 40)
    hz = values.to_numpy() if values is not None else None
    for metrics, top, what in ((SM_CLOCK_HZ_METRICS, max_sm, "SM"),
                               ((M.DRAM_HZ,), max_mem, "memory")):
        if values is not None and isinstance(top, (int, float)) and top > 0:
            if (hz is not None and hz.dtype == np.float64
                    and not (hz / 1e6 > top * (1 + CLOCK_TOLERANCE)).any()):
                continue  # the usual case: no value that high
            mhz = values / 1e6
            above = mhz > top * (1 + CLOCK_TOLERANCE)
            if not above.any():  # the usual case: no value that high, no metric names to match
                continue
            mask = runs[C.METRIC].isin(metrics) & above
            if not mask.any():  # no copy of the runs to look at nothing
                continue
            out += _per_key(runs.assign(**{C.VALUE: mhz}), mask, CLOCK_ABOVE_MAX,
                            "{where}: {metric} reads {worst:.0f} MHz, above the GPU's maximum "
                            f"{what} clock {top:g} MHz (NVML): this value cannot be right")
    if _has(collectors, C.COLLECTOR, C.VALUE):
        bad = collectors[collectors[C.COLLECTOR].astype(str).str.contains("sm_clock")
                         & (collectors[C.VALUE] > limit)]
        if not bad.empty:
            out.append(note(CLOCK_ABOVE_MAX, WARNING, f"collector sm_clock reads up to "
                            f"{bad[C.VALUE].max():.0f} MHz, above the maximum {max_sm:g} MHz"))
    for column, top in ((C.SM_CLOCK_MHZ, max_sm), (C.MEM_CLOCK_MHZ, max_mem)):
        if isinstance(top, (int, float)) and top > 0 and _has(nvml, column):
            worst = nvml[column].max()
            if worst > top * (1 + CLOCK_TOLERANCE):
                out.append(note(CLOCK_ABOVE_MAX, WARNING, f"NVML trace {column} reads up to "
                                f"{worst:.0f} MHz, above the GPU's maximum {top:g} MHz"))
    return out


def _wide(agg: pd.DataFrame, work: pd.DataFrame) -> dict[tuple[Any, Any], dict[str, Any]]:
    """Per annotation x config (sorted): each metric's first non-missing AvgValue (metrics by
    name), then the work table's Flops, Bytes and Dtype (NaN where it has no row for the key).
    What ``groupby(...).first().unstack()`` joined with the work table gave, in plain Python:
    on the usual few dozen rows pandas' per-operation cost was most of the checks' time."""
    firsts: dict[tuple[Any, Any], dict[str, Any]] = {}
    for ann, cfg, metric, avg in zip(*(agg[c].tolist() for c in (
            C.ANNOTATION, C.CONFIG, C.METRIC, C.AVG))):  # Python values, not a scalar per cell
        if not (pd.isna(ann) or pd.isna(cfg) or pd.isna(metric) or pd.isna(avg)):
            firsts.setdefault((ann, cfg), {}).setdefault(metric, avg)
    works: dict[tuple[Any, Any], tuple[Any, Any, Any]] | None = None
    if _has(work, C.ANNOTATION, C.CONFIG, C.FLOPS, C.BYTES):
        works = {}
        for ann, cfg, flops, nbytes, dtype in zip(*(work[c].tolist() for c in (
                C.ANNOTATION, C.CONFIG, C.FLOPS, C.BYTES, C.DTYPE))):
            works.setdefault((ann, cfg), (flops, nbytes, dtype))
    nan = float("nan")
    out = {}
    for key in sorted(firsts):
        row = dict(sorted(firsts[key].items()))
        if works is not None:
            row.update(zip((C.FLOPS, C.BYTES, C.DTYPE), works.get(key, (nan, nan, nan))))
        out[key] = row
    return out


def _dram_rates(row: Mapping[str, Any], ann: str, cfg: int,
                device: peaks.DevicePeaks) -> list[Note]:
    """DRAM throughput metrics (``dram__*.per_second``, byte/s) above the datasheet bandwidth:
    a counter cannot exceed the interface it counts."""
    out = []
    for metric, value in row.items():
        if (isinstance(metric, str) and metric.startswith(M.DRAM_BYTES.split(".")[0])
                and metric.endswith("per_second") and value / 1e9 > device.dram_gbps):
            out.append(note(CLOCK_ABOVE_MAX, WARNING, f"{ann}, config {cfg}: {metric} reads "
                            f"{value / 1e9:,.0f} GB/s, above the {device.dram_gbps:,.0f} GB/s "
                            f"DRAM bandwidth ({device.name} datasheet)", ann, cfg, metric))
    return out


#: :func:`l2_state`'s states: the L2 flushed before the timed kernels, left warm, not known.
L2_FLUSHED, L2_WARM, L2_UNKNOWN = "flushed", "warm", "unknown"


def l2_state(manifest: Mapping[str, Any]) -> tuple[str, str]:
    """The L2 state the bundle's runs had, as recorded, not as its spec asked: (state, why).

    ``warm`` for ``cache_control="none"``, for a CUPTI/events bundle recorded without the
    worker's flush (no manifest ``backend.cache_flush`` bytes or ``backend.l2_flushed``: the
    bundled ``h200-cupti-stability`` says ``cache_control: all`` but was recorded before the
    backend flushed) and for the host timer (nothing flushes it); ``flushed`` for Nsight
    Compute with ``cache_control="all"`` (before every kernel) and a recorded region flush;
    ``unknown`` for an import whose backend is not known. One place: the plausibility roof
    note, the gate's context and the run audit read it.
    """
    return l2_state_of(manifest, manifest_spec(manifest))


def l2_state_of(manifest: Mapping[str, Any], spec: JobSpec | PartialSpec | None
                ) -> tuple[str, str]:
    """:func:`l2_state` with the manifest's spec as the caller read it (``manifest_spec``):
    the run audit reads it once for all its checks (issue 40: each read validates the spec
    anew, 0.1 ms)."""
    entry = manifest.get("backend") or {}
    entry = entry if isinstance(entry, dict) else {}
    backend = backend_of(manifest, spec)
    where = getattr(B.find(backend), "l2_flush", None)
    flushed = bool(entry.get(L2_FLUSHED_KEY)) or bool((entry.get("cache_flush") or {}).get("bytes"))
    if spec is not None and spec.cache_control == "none":
        return L2_WARM, 'cache_control "none"'
    if where == B.FLUSH_REGION:
        name = B.described(backend).name.upper()
        return ((L2_FLUSHED, "flushed before each region, outside the timed window") if flushed
                else (L2_WARM, f"{name} backend, recorded without the L2 flush"))
    if where == B.FLUSH_KERNEL:
        return L2_FLUSHED, "Nsight Compute flushes it before every profiled kernel"
    if backend == BACKEND_UNKNOWN:
        return ((L2_FLUSHED, "the import records a flush") if flushed else
                (L2_UNKNOWN, "backend unknown, so possibly CUPTI, which does not flush the L2"))
    return L2_WARM, "nothing flushes the L2 for this backend"


def _roof_reason(manifest: Mapping[str, Any]) -> str:
    state, why = l2_state(manifest)
    spec = manifest_spec(manifest)
    region_flush = getattr(B.find(backend_of(manifest, spec)), "l2_flush", None) == B.FLUSH_REGION
    none = spec is not None and spec.cache_control == "none"
    if state != L2_FLUSHED and (region_flush or state == L2_UNKNOWN or none):
        return L2_WARM_REASON.format(why=why)
    if region_flush:
        return ("likely reason: the kernels of one region share the L2 (the worker flushes it "
                "before each region, not between the region's kernels)")
    return ("no known reason: check the kernel's FLOP and byte formulas (work table) and the "
            "collected DRAM bytes")


def _roofs(agg: pd.DataFrame, work: pd.DataFrame, manifest: Mapping[str, Any],
           gpu: Mapping[str, Any]) -> list[Note]:
    """Points above the datasheet DRAM or compute roof (GPU kernel durations only)."""
    device = peaks.match_device(str(gpu.get("name") or ""))
    if device is None or not _has(agg, C.METRIC, C.AVG):
        return []
    wide = _wide(agg, work)
    if not any(C.GPU_TIME in row for row in wide.values()):
        return []
    reason = functools.cache(lambda: _roof_reason(manifest))  # read where a point is above
    out = []
    for (ann, cfg), row in wide.items():
        time_ns = row.get(C.GPU_TIME, float("nan"))
        if not time_ns > 0:
            continue
        measured = all(m in row and row[m] == row[m] for m in DRAM_BYTES)
        nbytes = sum(row[m] for m in DRAM_BYTES) if measured else row.get(C.BYTES, float("nan"))
        gbps = nbytes / time_ns  # bytes/ns = GB/s
        what = "measured DRAM bytes" if measured else "analytic minimum bytes"
        out += _dram_rates(row, ann, int(cfg), device)
        if gbps > device.dram_gbps:
            out.append(note(ABOVE_ROOF, WARNING, f"{ann}, config {int(cfg)}: {gbps:,.0f} GB/s "
                            f"({what} / time) is {100 * (gbps / device.dram_gbps - 1):.0f} % above "
                            f"the {device.dram_gbps:,.0f} GB/s DRAM roof ({device.name} "
                            f"datasheet); {reason()}", ann, int(cfg)))
        dtype, tflops = str(row.get(C.DTYPE) or ""), row.get(C.FLOPS, float("nan")) / time_ns / 1e3
        sheet = peaks.datasheet_compute(device, dtype)
        if sheet is not None and tflops > sheet.value:
            why = peaks.above_roof_reason(device, dtype, tflops)
            out.append(note(ABOVE_ROOF, WARNING, f"{ann}, config {int(cfg)}: {tflops:,.1f} TFLOP/s "
                            f"(analytic FLOPs / time) is above the {sheet.value:,.1f} TFLOP/s "
                            f"{sheet.label} roof: {why}", ann, int(cfg)))
    return out

