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

from profiling_worker.bundle.errors import ImportFailed
from profiling_worker.importing import nsight_columns as N
from profiling_worker.importing.raw_columns import split_raw_columns
from profiling_worker.importing.kinds import NSIGHT_AGG, NSIGHT_RAW
from profiling_worker.importing.sniff import Sniffed
from profiling_worker.importing.textcsv import (HINT_CSV, NA_STRINGS, parse_csv, short,
                                                typed_param)
from profiling_worker.bundle.schema import columns as C

#: nsight-python's names of one call's files (any output_prefix before them, a browser's
#: `` (1)`` after them): profiled_data-, processed_data- (CSV), ncu-output- (report, log).
_CALL_RE = re.compile(r"(?:profiled_data|processed_data|ncu-output)-(?P<call>.+?-\d+)"
                      r"(?:[ _-]*\(?\d+\)?_?)?$")
_CALL_EXTENSIONS = (".csv", ".ncu-rep.gz", ".ncu-rep", ".log")


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
    .csv``, ``ncu-output-smem_ops-0.ncu-rep`` and ``ncu-output-smem_ops-0.log`` ->
    ``smem_ops-0``."""
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
            raise ImportFailed(f"{item.path.name}: no column for parameter(s) {', '.join(missing)}"
                               f"; expected them among its columns {short(header)}",
                               "name only parameters among the file's columns, or none (they "
                               "are detected)")
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


__all__ = ["NsightCsv", "nsight_call", "call_of", "load", "assign_configs", "separate_calls",
           "environment"]
