"""Reader of nsight-python's CSVs (0.9.4 to 1.1): per-run ``profiled_data`` and aggregated
``processed_data`` files -> the per-run and aggregated frames of a bundle.

Files are told apart and paired by content, never by name: a processed_data file belongs to the
profiled_data file whose run counts, minima and maxima it repeats (then it is recomputed from
those runs); otherwise its rows are taken as written, with a Student-t CI95 recomputed from
``StdDev`` and ``NumRuns``. Several calls of one function (files with the same annotations and
configs but other values) are kept apart: their annotations get the call's name. Column roles
follow :mod:`~profiling_worker.importing.nsight_columns`; what they mean for values is applied
by :mod:`~profiling_worker.importing.roles`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from profiling_worker.bundle_writer import table_columns
from profiling_worker.errors import ImportFailed
from profiling_worker.extract.combine_rules import RULE_SINGLE
from profiling_worker.extract.units import UNITS, unit_factors
from profiling_worker.importing import nsight_columns as N
from profiling_worker.importing.raw_columns import split_raw_columns
from profiling_worker.importing.sniff import NSIGHT_AGG, NSIGHT_RAW, Sniffed
from profiling_worker.importing.textcsv import (HINT_CSV, METRIC_NAME_RE, NA_STRINGS, floats,
                                                kernels, non_finite_to_missing, parse_csv,
                                                short, text_column, typed_param, units)
from profiling_worker.schema import columns as C, intervals

#: CombineRule of imported runs whose value nsight-python had already combined from several
#: kernels with the user's ``combine_kernel_metrics`` (the function is not recorded).
RULE_NSIGHT_COMBINED = "combined by nsight-python (combine_kernel_metrics)"
CI_METHOD_T = (f"{intervals.CI_METHOD}, from StdDev and NumRuns (nsight-python wrote "
               "mean +- 1.96 sigma/sqrt(n))")
#: nsight-python's names of one call's files (any output_prefix before them, a browser's
#: `` (1)`` after them): profiled_data-, processed_data- (CSV), ncu-output- (report, log).
_CALL_RE = re.compile(r"(?:profiled_data|processed_data|ncu-output)-(?P<call>.+?-\d+)"
                      r"(?:[ _-]*\(?\d+\)?_?)?$")
_CALL_EXTENSIONS = (".csv", ".ncu-rep.gz", ".ncu-rep", ".log")
#: Units of time, size or rate: values the pages draw in ns, bytes or Hz when not converted.
_DIMENSIONED = re.compile(r"second|byte|hz", re.IGNORECASE)


@dataclass
class NsightCsv:
    """One nsight-python CSV: ``kind`` (NSIGHT_RAW/NSIGHT_AGG), ``call`` (``<function>-<id>``
    from the name when it has nsight-python's pattern, else the file stem), the text ``frame``
    and its ``params`` (and ``collectors``, the other columns that are not nsight-python's);
    ``Config`` is added by :func:`assign_configs`."""

    source: Sniffed
    kind: str
    call: str
    header: list[str]
    frame: pd.DataFrame
    params: list[str] = field(default_factory=list)
    #: per-run columns read as 1.1 info-collector values: {column: why}
    collectors: dict[str, str] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return self.source.path


def nsight_call(path: Path) -> str | None:
    """The nsight-python call (``<function>-<id>``) a file's name says it was written for, or
    None for other names: ``bench_profiled_data-smem_ops-0 (1).csv``, ``processed_data-smem_ops-0
    .csv``, ``ncu-output-smem_ops-0.ncu-rep`` and ``ncu-output-smem_ops-0.log`` -> ``smem_ops-0``."""
    name = path.name
    ext = next((e for e in _CALL_EXTENSIONS if name.lower().endswith(e)), "")
    m = _CALL_RE.search(name[:len(name) - len(ext)])
    return m.group("call") if m else None


def call_of(path: Path) -> str:
    """``bench_profiled_data-smem_ops-0 (1).csv`` -> ``smem_ops-0``; other names: the stem."""
    return nsight_call(path) or (path.name[:-4] if path.name.lower().endswith(".csv")
                                 else path.stem)


def load(sources: Sequence[Sniffed], param_names: Sequence[str] | None) -> list[NsightCsv]:
    """Parse nsight-python CSVs and name their config parameters.

    Raises:
        ImportFailed: a missing column, parameters that differ between files or clash with
            the bundle's columns, or ``param_names`` not in a file.
    """
    items = []
    for s in sources:
        header, frame = parse_csv(s)
        required = (C.ANNOTATION, C.VALUE, C.METRIC) if s.kind == NSIGHT_RAW else \
            (C.ANNOTATION, C.METRIC, C.AVG)
        missing = [c for c in required if c not in header]
        if missing:
            raise ImportFailed(f"{s.path.name}: lacks column(s) {', '.join(missing)}", HINT_CSV)
        items.append(NsightCsv(s, s.kind, call_of(s.path), header, frame))
    for it in sorted(items, key=lambda i: i.kind != NSIGHT_AGG):
        it.params = _param_columns(it, items, param_names)
        clash = [p for p in it.params if p in C.RESERVED]
        if clash:
            raise ImportFailed(f"{it.path.name}: config parameter column(s) {', '.join(clash)} "
                               "clash with the dashboard's own column names",
                               "rename the parameter of the profiled function and profile again")
    if len({tuple(it.params) for it in items}) > 1:
        raise ImportFailed("the files name different config parameters: " +
                           "; ".join(f"{it.path.name}: {it.params}" for it in items),
                           "import the output of one profiled function at a time")
    return items


def _param_columns(item: NsightCsv, items: list[NsightCsv],
                   param_names: Sequence[str] | None) -> list[str]:
    header = item.header
    if param_names is not None:
        missing = [p for p in param_names if p not in header]
        if missing:
            raise ImportFailed(f"{item.path.name}: no column for parameter(s) {', '.join(missing)}",
                               f"the file has columns {short(header)}")
        return list(param_names)
    if item.kind == NSIGHT_AGG:
        return N.agg_params(header)
    # Per-run table: an aggregated table with the same columns names the parameters exactly.
    for other in items:
        if other.kind == NSIGHT_AGG and other.params and all(p in header for p in other.params):
            item.collectors = {h: f"not a parameter of {other.path.name}"
                               for h in N.raw_extra_columns(header, other.params)}
            return list(other.params)
    split = split_raw_columns(header, item.frame)
    item.collectors = split.collectors
    return split.params


def assign_configs(items: list[NsightCsv], params: list[str]) -> list[dict[str, Any]]:
    """Type the parameter columns across all files and number configs in first-seen order."""
    if not params:
        for it in items:
            it.frame[C.CONFIG] = 0
        return [{}]
    lengths = [len(it.frame) for it in items]
    allp = pd.concat([it.frame[params] for it in items], ignore_index=True)
    decimal = items[0].source.decimal
    for p in params:
        allp[p] = typed_param(allp[p], decimal)
    codes, _ = pd.factorize(pd.MultiIndex.from_frame(allp[params].astype(str)))
    first = allp.loc[pd.Series(codes).drop_duplicates().index]
    configs = [{p: _py(row[p]) for p in params} for _, row in first.iterrows()]
    start = 0
    for it, n in zip(items, lengths):
        sl = slice(start, start + n)
        for p in params:
            it.frame[p] = allp[p].iloc[sl].to_numpy()
            if allp[p].dtype != object:
                it.frame[p] = it.frame[p].astype(allp[p].dtype)
        it.frame[C.CONFIG] = codes[sl].astype("int64")
        start += n
    return configs


def _py(v: Any) -> Any:
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    return v


def key_columns(it: NsightCsv, params: list[str]) -> pd.DataFrame:
    """Annotation, Config, <params>, Metric of one nsight-python CSV (checked text columns)."""
    f = it.frame
    out = pd.DataFrame({
        C.ANNOTATION: text_column(f[C.ANNOTATION], it.path, C.ANNOTATION, True),
        C.CONFIG: f[C.CONFIG].astype("int64"),
    })
    for p in params:
        out[p] = f[p]
    out[C.METRIC] = text_column(f[C.METRIC], it.path, C.METRIC, True)
    return out


def number(it: NsightCsv, column: str, notes: list[str] | None = None) -> pd.Series:
    """A numeric column of ``it`` (NaN where absent); thousands separators read as the ncu CSV
    reader reads them (:func:`~profiling_worker.importing.textcsv.numbers_as_text`); inf/NaN
    cells become missing, counted in ``notes`` when given.

    Raises:
        ImportFailed: a cell that is not a number.
    """
    f = it.frame
    if column not in f.columns:
        return pd.Series(np.nan, index=f.index, dtype="float64")
    values = floats(f[column], it.path, column, finite=False, decimal=it.source.decimal,
                    thousands=it.source.decimal == ".")
    values, bad = non_finite_to_missing(values)
    if bad and notes is not None:
        metrics = ", ".join(dict.fromkeys(f.loc[values.isna() & f[column].notna(), C.METRIC]))
        notes.append(f"{it.path.name}: {bad} {column} cell(s) were inf or NaN ({metrics}; a "
                     "derived metric divided by a zero counter?); they are shown as missing")
    return values


def base_units(it: NsightCsv, notes: list[str]) -> tuple[pd.Series, pd.Series]:
    """Per row of ``it``: the factor that takes its values to the bundle's units (ns, byte,
    Hz, byte/s, %) and that unit, from the ``Unit`` column (0.9.x: inferred,
    :func:`~profiling_worker.importing.textcsv.units`) by
    :func:`~profiling_worker.extract.units.unit_factors`. Each conversion is noted per metric;
    a unit of time, size or rate the importer does not know is kept as written, with a note.

    Raises:
        ImportFailed: a duration metric (``*__time_duration*``, drawn in ns) in a unit the
            importer does not know.
    """
    given = units(it.frame)
    factor, unit, scaled = unit_factors(given)
    for metric, u in dict.fromkeys(zip(it.frame[C.METRIC].astype(str), given)):
        if u in scaled:
            notes.append(f"{metric}: {it.path.name}: values in {u} converted at import, "
                         f"{scaled[u]}")
        elif isinstance(u, str) and u not in UNITS and _is_duration(metric):
            raise ImportFailed(f"{it.path.name}: {metric} in unit {u!r}, which the importer "
                               "cannot convert to ns", "known units: " + ", ".join(UNITS))
        elif isinstance(u, str) and u not in UNITS and _DIMENSIONED.search(u):
            notes.append(f"{metric}: {it.path.name}: unit {u} is not one the importer converts; "
                         f"values kept as written, in {u} (not ns, bytes or Hz)")
    return factor, unit


def _is_duration(metric: str) -> bool:
    """An Nsight Compute duration metric (``gpu__time_duration.sum``; not a ratio of one)."""
    return bool(METRIC_NAME_RE.match(metric)) and "__time_duration" in metric


def runs_frame(it: NsightCsv, params: list[str], notes: list[str]) -> pd.DataFrame:
    """Per-run rows of one profiled_data file (Run numbered in file order per key), values
    in the bundle's units (:func:`base_units`).

    Raises:
        ImportFailed: see :func:`base_units`.
    """
    out = key_columns(it, params)
    factor, out[C.UNIT] = base_units(it, notes)
    out[C.VALUE] = number(it, C.VALUE, notes) * factor
    out[C.KERNELS] = kernels(it.frame)
    out[C.RUN] = out.groupby([C.ANNOTATION, C.CONFIG, C.METRIC], sort=False).cumcount() \
        .astype("int64")
    # an object column of two shared strings (np.where would make a wide unicode array)
    out[C.COMBINE_RULE] = pd.Series(RULE_SINGLE, index=out.index, dtype=object).mask(
        out[C.KERNELS] > 1, RULE_NSIGHT_COMBINED)
    return out[table_columns(C.TABLE_RUNS, params)]


def sort_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """Config, then annotation and metric in first-seen order, then run (one reordering copy)."""
    order = np.lexsort((runs[C.RUN].to_numpy(), pd.factorize(runs[C.METRIC])[0],
                        pd.factorize(runs[C.ANNOTATION])[0], runs[C.CONFIG].to_numpy()))
    return runs.take(order).reset_index(drop=True)


def agg_frame(it: NsightCsv, params: list[str], notes: list[str]) -> pd.DataFrame:
    """The aggregated rows of one processed_data file as written, CI95, relative std dev and
    stability recomputed from StdDev and NumRuns by the worker's method (:data:`CI_METHOD_T`);
    values in the bundle's units (:func:`base_units`).

    Raises:
        ImportFailed: see :func:`base_units`.
    """
    f = it.frame
    out = key_columns(it, params)
    factor, out[C.UNIT] = base_units(it, notes)
    nruns = number(it, C.NUM_RUNS)
    out[C.NUM_RUNS] = nruns.fillna(0).clip(0, 2**62).round().astype("int64")
    out[C.AVG] = number(it, C.AVG, notes) * factor
    for column in (C.STD, C.MIN, C.MAX):
        out[column] = number(it, column) * factor
    out[C.MEDIAN] = np.nan
    few = (out[C.NUM_RUNS] < intervals.MIN_RUNS) | out[C.STD].isna()  # no spread known
    lower, upper = intervals.ci95_bounds(out[C.AVG], out[C.STD], out[C.NUM_RUNS],
                                         out[C.MIN].fillna(out[C.AVG]))
    out[C.CI95_LOWER], out[C.CI95_UPPER] = np.where(few, np.nan, lower), np.where(few, np.nan, upper)
    _note_file_ci95(it, out, factor, notes)
    out[C.RSD] = _relative_std_dev(it, out)
    out[C.STABLE] = intervals.stable(out[C.NUM_RUNS], out[C.RSD])
    out[C.KERNELS] = kernels(f).astype("float64")
    out[C.KERNELS_VARY] = False
    return out[table_columns(C.TABLE_AGGREGATED, params)]


def _relative_std_dev(it: NsightCsv, out: pd.DataFrame) -> pd.Series:
    """RelativeStdDevPct (%) of the rows of ``out`` (AvgValue, StdDev, NumRuns filled): the
    file's own where it gives one, else ``100 * StdDev / |AvgValue|``; NaN below
    ``intervals.MIN_RUNS`` runs. The file's value is nsight-python's std / mean of the runs,
    computed before any normalisation, so it is also the relative spread of a normalised row,
    whose AvgValue is a ratio and whose StdDev is not (case 04: 0.86 % .. 2.17 %)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        recomputed = (out[C.STD] / out[C.AVG].abs() * 100).where(out[C.AVG] != 0)
    return number(it, C.RSD).abs().fillna(recomputed).where(
        out[C.NUM_RUNS] >= intervals.MIN_RUNS)


def _note_file_ci95(it: NsightCsv, out: pd.DataFrame, factor: pd.Series,
                    notes: list[str]) -> None:
    """Say so when the file's own CI95 columns differ from the recomputed Student-t ones
    (nsight-python writes mean ± 1.96·StdDev/√NumRuns, a z interval, under the same names)."""
    differ = pd.Series(False, index=out.index)
    for column in (C.CI95_LOWER, C.CI95_UPPER):
        if column not in it.frame.columns:
            continue
        mine, theirs = out[column].to_numpy(float), (number(it, column) * factor).to_numpy(float)
        differ |= ~np.isclose(mine, theirs, rtol=1e-6, equal_nan=True)
    if differ.any():
        notes.append(f"{it.path.name}: CI95_Lower/CI95_Upper recomputed as a Student-t interval "
                     "(mean ± t(0.975, NumRuns − 1)·StdDev/√NumRuns) from StdDev and NumRuns; "
                     "the file's own CI95 (nsight-python's z interval, mean ± "
                     f"1.96·StdDev/√NumRuns) differ in {int(differ.sum())} of {len(out)} rows")


def pairs_with(agg: pd.DataFrame, runs: pd.DataFrame) -> bool:
    """True when every aggregated row repeats the count, minimum and maximum of the per-run
    rows of its key: the processed_data file was written from these runs."""
    keys = [C.ANNOTATION, C.CONFIG, C.METRIC]
    stats = runs.groupby(keys, sort=False)[C.VALUE].agg(["size", "min", "max"]).reset_index()
    agg = agg[[*keys, C.NUM_RUNS, C.MIN, C.MAX]].copy()
    # A normalised row keeps the unnormalised count, min and max of its base metric.
    agg[C.METRIC] = [(N.relative_metric(m) or (m,))[0] for m in agg[C.METRIC].astype(str)]
    merged = agg.merge(stats, on=keys, how="left")
    if merged["size"].isna().any():
        return False
    return bool((merged[C.NUM_RUNS] == merged["size"]).all()
                and np.allclose(merged[C.MIN], merged["min"], rtol=1e-9, equal_nan=True)
                and np.allclose(merged[C.MAX], merged["max"], rtol=1e-9, equal_nan=True))


def separate_calls(frames: list[tuple[str, pd.DataFrame]]) -> tuple[list[pd.DataFrame], list[str]]:
    """Keep several calls of one function apart: when two files hold the same annotation x
    config x metric keys, each call's annotations become ``<annotation> [<call>]``. A file
    identical to an earlier one is dropped. Returns the frames and notes."""
    keys = [C.ANNOTATION, C.CONFIG, C.METRIC]
    seen: list[pd.DataFrame] = []
    calls: list[str] = []
    notes: list[str] = []
    for call, frame in frames:
        frame = frame.reset_index(drop=True) if not isinstance(frame.index, pd.RangeIndex) \
            else frame
        if any(len(frame) == len(s) and frame.equals(s) for s in seen):
            notes.append(f"{call}: the same rows as an earlier file (a second download?); "
                         "imported once")
            continue
        seen.append(frame)
        calls.append(call)
    key_sets = [set(map(tuple, f[keys].astype(str).to_numpy())) for f in seen]
    clash = any(a & b for i, a in enumerate(key_sets) for b in key_sets[i + 1:])
    if not clash:
        return seen, notes
    names = [c if calls.count(c) == 1 else f"{c} #{i + 1}" for i, c in enumerate(calls)]
    out = []
    for name, frame in zip(names, seen):
        frame = frame.copy()
        frame[C.ANNOTATION] = frame[C.ANNOTATION].astype(str) + f" [{name}]"
        out.append(frame)
    notes.append("several calls of one function (" + ", ".join(names) + "): kept apart, each "
                 "annotation named with its call")
    return out, notes


def environment(items: list[NsightCsv]) -> dict[str, Any]:
    """GPU, host and the device's maximum clocks as nsight-python recorded them."""
    env: dict[str, Any] = {}
    names = {"GPU": "gpu_name", "Host": "host", "ComputeClock": "max_sm_clock_khz",
             "MemoryClock": "max_mem_clock_khz"}
    for col, key in names.items():
        vals: list[str] = []
        for it in items:
            if col in it.frame.columns:
                for v in it.frame[col].astype(str).str.strip().unique():
                    if v and v not in vals and v not in NA_STRINGS:
                        vals.append(v[:200])
        if vals:
            env[key] = vals[0] if len(vals) == 1 else vals[:20]
    if env:
        env["source"] = ("nsight-python CSV columns (ComputeClock/MemoryClock are the device's "
                         "maximum clocks in kHz, not clocks measured during the runs)")
    return env


__all__ = ["NsightCsv", "RULE_NSIGHT_COMBINED", "CI_METHOD_T", "nsight_call", "call_of", "load",
           "assign_configs", "key_columns", "number", "runs_frame", "sort_runs", "agg_frame",
           "pairs_with", "separate_calls", "environment"]
