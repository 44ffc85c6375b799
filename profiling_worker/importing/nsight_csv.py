"""Import plain nsight-python output (made anywhere) as a result bundle.

nsight-python with ``output_csv=True`` writes, per decorated call ``<fn>-<id>``:

``profiled_data-<fn>-<id>.csv``   one row per annotation x config x run x metric:
    ``Annotation, Value, Metric, Kernel, GPU, Host, ComputeClock, MemoryClock, [Unit],
    [<collector columns>], <config parameters>`` (0.9.x has no ``Unit``; collectors are 1.1+).
``processed_data-<fn>-<id>.csv``  the aggregated ``to_dataframe()`` rows:
    ``Annotation, Metric, <config parameters>, AvgValue, StdDev, MinValue, MaxValue, NumRuns,
    Kernel, GPU, Host, ComputeClock, MemoryClock, [Unit], ..., CI95_Lower, CI95_Upper,
    RelativeStdDevPct, StableMeasurement, Normalized, [NormalizationValue], Geomean``
``ncu-output-<fn>-<id>.ncu-rep`` / ``.log``  Nsight Compute's report and log (ncu backend only).

(research/nsight-python.md §1.9-1.10; checked against the H200 0.9.6 files in
shared/reference/h200-nsight-0.9.6-matmul/.)

:func:`import_nsight_output` turns such files into a bundle directory (layout in
:mod:`profiling_worker.schema.columns`): ``tables/runs`` from the per-run rows,
``tables/aggregated`` recomputed from them with :func:`~profiling_worker.extract.aggregate.
aggregate_runs` (Student-t CI, median, kernel counts) or, for a call whose per-run CSV is
missing, taken from ``processed_data`` as nsight-python wrote it; empty ``launches``, ``work`` and
``nvml_trace`` tables; the original files under ``nsight/``; ``spec.json`` reconstructed as far as
the files allow; ``manifest.json`` last.

Files are parsed with the :mod:`csv` module as text (never pickle or eval). Anything malformed
raises :class:`ImportFailed` naming the file and the problem.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from profiling_worker.bundle_writer import empty_table, table_columns
from profiling_worker.errors import ImportFailed
from profiling_worker.extract.aggregate import RULE_SINGLE, aggregate_runs
from profiling_worker.importing.sources import classify, tag_of
from profiling_worker.importing.textcsv import (HINT_CSV, NA_STRINGS, bools, floats, kernels,
                                                parse_csv, short, text_column, typed_param, units)
from profiling_worker.schema import columns as C


NSIGHT_RAW_FIXED = ("Annotation", "Value", "Metric", "Kernel", "GPU", "Host", "ComputeClock",
                    "MemoryClock", "Unit")
#: Columns of the aggregated CSV that are not config parameters (besides collector stats).

NSIGHT_AGG_FIXED = ("Annotation", "Metric", "AvgValue", "StdDev", "MinValue", "MaxValue",
                    "NumRuns", "Kernel", "GPU", "Host", "ComputeClock", "MemoryClock", "Unit",
                    "CI95_Lower", "CI95_Upper", "RelativeStdDevPct", "StableMeasurement",
                    "Normalized", "NormalizationValue", "Geomean")
#: CombineRule of imported runs whose value nsight-python had already combined from several
#: kernels with the user's ``combine_kernel_metrics`` (the function is not recorded).

RULE_NSIGHT_COMBINED = "combined by nsight-python (combine_kernel_metrics)"


@dataclass
class NsightCsv:
    path: Path
    kind: str  # "raw" (profiled_data) or "agg" (processed_data)
    tag: str
    header: list[str]
    rows: list[list[str]]
    frame: pd.DataFrame = field(default_factory=pd.DataFrame)
    params: list[str] = field(default_factory=list)

def _param_columns(item: NsightCsv, agg_params: dict[str, list[str]],
                   param_names: Sequence[str] | None) -> list[str]:
    header = item.header
    if param_names is not None:
        missing = [p for p in param_names if p not in header]
        if missing:
            raise ImportFailed(f"{item.path.name}: no column for parameter(s) {', '.join(missing)}",
                               f"the file has columns {short(header)}")
        return list(param_names)
    if item.kind == "agg":
        i_metric = header.index("Metric") if "Metric" in header else -1
        i_avg = header.index("AvgValue")
        if i_metric < 0 or i_metric > i_avg:
            raise ImportFailed(f"{item.path.name}: expected the parameters between Metric and "
                               "AvgValue", HINT_CSV)
        return [h for h in header[i_metric + 1:i_avg] if h not in NSIGHT_AGG_FIXED]
    # Per-run table: the aggregated table of the same call names the parameters exactly.
    for cand in (agg_params.get(item.tag), *agg_params.values()):
        if cand is not None and all(p in header for p in cand):
            return list(cand)
    last_fixed = max(i for i, h in enumerate(header) if h in NSIGHT_RAW_FIXED)
    return [h for h in header[last_fixed + 1:] if h not in NSIGHT_RAW_FIXED]

def _check_params(item: NsightCsv) -> None:
    clash = [p for p in item.params if p in C.RESERVED]
    if clash:
        raise ImportFailed(f"{item.path.name}: config parameter column(s) {', '.join(clash)} "
                           "clash with the dashboard's own column names",
                           "rename the parameter of the profiled function and profile again")

def load(csvs: list[Path], param_names: Sequence[str] | None) -> list[NsightCsv]:
    items = []
    for p in csvs:
        header, rows = parse_csv(p)
        kind = classify(p, header)
        required = ("Annotation", "Value", "Metric") if kind == "raw" else \
            ("Annotation", "Metric", "AvgValue")
        missing = [c for c in required if c not in header]
        if missing:
            raise ImportFailed(f"{p.name}: lacks column(s) {', '.join(missing)}", HINT_CSV)
        items.append(NsightCsv(p, kind, tag_of(p), header, rows))
    agg_params: dict[str, list[str]] = {}
    for it in items:
        if it.kind == "agg":
            it.params = _param_columns(it, {}, param_names)
            agg_params.setdefault(it.tag, it.params)
    for it in items:
        if it.kind == "raw":
            it.params = _param_columns(it, agg_params, param_names)
        _check_params(it)
        it.frame = pd.DataFrame(it.rows, columns=it.header, dtype=object)
        it.rows = []
    names = {tuple(it.params) for it in items}
    if len(names) > 1:
        raise ImportFailed("the files name different config parameters: " +
                           "; ".join(f"{it.path.name}: {it.params}" for it in items),
                           "import the output of one profiled function at a time")
    return items

def assign_configs(items: list[NsightCsv], params: list[str]) -> list[dict[str, Any]]:
    """Type the parameter columns across all files and number configs in first-seen order."""
    if not params:
        for it in items:
            it.frame[C.CONFIG] = 0
        return [{}]
    lengths = [len(it.frame) for it in items]
    allp = pd.concat([it.frame[params] for it in items], ignore_index=True)
    for p in params:
        allp[p] = typed_param(allp[p])
    keys = pd.MultiIndex.from_frame(allp[params].astype(str))
    codes, _ = pd.factorize(keys)
    configs = []
    first = allp.loc[pd.Series(codes).drop_duplicates().index]
    for _, row in first.iterrows():
        configs.append({p: _py(row[p]) for p in params})
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
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    return v

def _key_columns(it: NsightCsv, params: list[str]) -> pd.DataFrame:
    """Annotation, Config, <params>, Metric of one nsight-python CSV (checked text columns)."""
    f = it.frame
    out = pd.DataFrame({
        C.ANNOTATION: text_column(f["Annotation"], it.path, "Annotation", True),
        C.CONFIG: f[C.CONFIG].astype("int64"),
    })
    for p in params:
        out[p] = f[p]
    out[C.METRIC] = text_column(f["Metric"], it.path, "Metric", True)
    return out

def runs_from_raw(items: list[NsightCsv], params: list[str]) -> pd.DataFrame:
    frames = []
    for it in items:
        f = it.frame
        out = _key_columns(it, params)
        out[C.VALUE] = floats(f["Value"], it.path, "Value")
        out[C.UNIT] = units(f)
        out[C.KERNELS] = kernels(f)
        frames.append(out)
    runs = pd.concat(frames, ignore_index=True)
    runs[C.RUN] = runs.groupby([C.ANNOTATION, C.CONFIG, C.METRIC], sort=False).cumcount() \
        .astype("int64")
    runs[C.COMBINE_RULE] = np.where(runs[C.KERNELS] > 1, RULE_NSIGHT_COMBINED, RULE_SINGLE)
    cols = table_columns(C.TABLE_RUNS, params)
    f = runs[cols].copy()
    f["_a"] = pd.factorize(f[C.ANNOTATION])[0]
    f["_m"] = pd.factorize(f[C.METRIC])[0]
    f = f.sort_values([C.CONFIG, "_a", "_m", C.RUN], kind="stable")
    return f.drop(columns=["_a", "_m"]).reset_index(drop=True)

def agg_from_processed(items: list[NsightCsv], params: list[str]) -> pd.DataFrame:
    frames = []
    for it in items:
        f = it.frame

        def num(col: str, finite: bool = True) -> pd.Series:
            if col not in f.columns:
                return pd.Series(np.nan, index=f.index, dtype="float64")
            return floats(f[col], it.path, col, finite)

        out = _key_columns(it, params)
        out[C.UNIT] = units(f)
        nruns = num("NumRuns")
        out[C.NUM_RUNS] = nruns.fillna(0).clip(0, 2**62).round().astype("int64")
        out[C.AVG] = num("AvgValue")
        out[C.STD] = num("StdDev")
        out[C.MIN] = num("MinValue")
        out[C.MAX] = num("MaxValue")
        out[C.MEDIAN] = pd.Series(np.nan, index=f.index, dtype="float64")
        out[C.CI95_LOWER] = num("CI95_Lower")
        out[C.CI95_UPPER] = num("CI95_Upper")
        out[C.RSD] = num("RelativeStdDevPct", finite=False)
        out[C.STABLE] = bools(f["StableMeasurement"]) if "StableMeasurement" in f.columns \
            else pd.Series(False, index=f.index)
        out[C.KERNELS] = kernels(f).astype("float64")
        out[C.KERNELS_VARY] = pd.Series(False, index=f.index, dtype=bool)
        frames.append(out)
    return pd.concat(frames, ignore_index=True)[table_columns(C.TABLE_AGGREGATED, params)]

def environment(items: list[NsightCsv]) -> dict[str, Any]:
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

def dropped(items: list[NsightCsv], params: list[str]) -> list[str]:
    known = set(NSIGHT_RAW_FIXED) | set(NSIGHT_AGG_FIXED) | set(params) | {C.CONFIG}
    out: list[str] = []
    for it in items:
        out += [h for h in it.header if h not in known and h not in out]
    return out

def from_csvs(csvs: list[Path], param_names: Sequence[str] | None) -> dict[str, Any]:
    """Tables, environment and provenance from nsight-python's CSVs (``items``: the files read)."""
    items = load(csvs, param_names)
    params = items[0].params
    configs = assign_configs(items, params)
    raw_items = [it for it in items if it.kind == "raw"]
    raw_tags = {it.tag for it in raw_items}
    agg_only = [it for it in items if it.kind == "agg" and it.tag not in raw_tags]

    runs = runs_from_raw(raw_items, params) if raw_items else empty_table(C.TABLE_RUNS, params)
    parts = []
    if raw_items:
        parts.append(aggregate_runs(runs, params))
    if agg_only:
        parts.append(agg_from_processed(agg_only, params))
    agg = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    agg = agg[table_columns(C.TABLE_AGGREGATED, params)]
    if raw_items and not agg_only:
        agg_source = "recomputed from the per-run rows (Student-t CI95)"
    elif raw_items:
        agg_source = ("recomputed from the per-run rows where a profiled_data CSV was given, "
                      "else nsight-python's processed_data rows as written")
    else:
        agg_source = "nsight-python's processed_data rows as written (normal-approximation CI95)"

    version = "1.x (Unit column)" if any("Unit" in it.header for it in items) \
        else "0.9.x (no Unit column)"
    return {"params": params, "configs": configs, "runs": runs, "agg": agg, "items": items,
            "environment": environment(items),
            "provenance": {"nsight_python_format": version, "aggregated": agg_source,
                           "parameters": params, "dropped_columns": dropped(items, params)}}
