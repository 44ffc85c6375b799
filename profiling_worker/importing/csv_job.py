"""nsight-python CSVs -> the runs and aggregated tables of one imported job.

Steps: parse and name parameters (:mod:`.nsight_csv`), read values (:mod:`.nsight_values`), give
columns their roles (:mod:`.roles`), number configs across files, build each profiled_data file's
runs, pair each processed_data file with the runs it was written from (by content), keep several
calls apart, undo sums of rates over combined kernels (:mod:`.combined`), aggregate with the
worker's own :func:`~profiling_worker.bundle.stats.aggregate.aggregate_runs` (Student-t CI95,
median).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from profiling_worker.bundle.writer import empty_table, table_columns
from profiling_worker.bundle.errors import ImportFailed
from profiling_worker.bundle.stats.aggregate import aggregate_runs
from profiling_worker.importing import nsight_columns as N
from profiling_worker.importing import nsight_csv as S, nsight_values as V
from profiling_worker.importing.combined import blank_combined_agg, fix_combined_runs
from profiling_worker.importing.job import Job
from profiling_worker.importing.roles import (agg_collector_stats, apply_roles,
                                              blank_normalised_stats, collectors_frame)
from profiling_worker.importing.kinds import NSIGHT_AGG, NSIGHT_RAW
from profiling_worker.importing.sniff import Sniffed
from profiling_worker.importing.textcsv import index_column_note
from profiling_worker.bundle.schema import columns as C


def _agg_sources(raw: list[tuple[str, pd.DataFrame]], aggs: list[S.NsightCsv],
                 params: list[str], notes: list[str],
                 roles: dict[str, dict[str, Any]]
                 ) -> tuple[list[tuple[str, pd.DataFrame]], list[str]]:
    """Aggregated rows to keep as written: every processed_data file that pairs with no
    per-run file, and the normalised rows of those that do."""
    kept: list[tuple[str, pd.DataFrame]] = []
    how: list[str] = []
    for it in aggs:
        frame = V.agg_frame(it, params, notes)
        partner = next((call for call, runs in raw if V.pairs_with(frame, runs)), None)
        if partner is None:
            kept.append((it.call, frame))
            how.append(f"{it.path.name}: taken as written, {V.CI_METHOD_T}")
            continue
        normalised = frame[C.METRIC].map(
            lambda m: roles.get(m, {}).get("role") == N.ROLE_NORMALISED).astype(bool)
        how.append(f"{it.path.name}: paired with the per-run rows of {partner} (same run counts, "
                   "minima and maxima); recomputed from them")
        if normalised.any():
            kept.append((it.call, frame[normalised]))
    return kept, how


def written_from(agg: Sniffed, raw: Sniffed) -> bool:
    """True when the processed_data file ``agg`` was written from the runs of the profiled_data
    file ``raw``, by content as :func:`from_csvs` pairs them (same run counts, minima and
    maxima per annotation x config x metric), whatever the files are called. False when they do
    not pair or cannot be read together (other parameters, a missing column)."""
    try:
        items = S.load([raw, agg], None)
    except ImportFailed:
        return False
    params = items[0].params
    for it in items:
        apply_roles(it)  # derived and normalised rows renamed, as from_csvs reads them
    S.assign_configs(items, params)
    notes: list[str] = []
    return V.pairs_with(V.agg_frame(items[1], params, notes), V.runs_frame(items[0], params, notes))


def from_csvs(sources: Sequence[Sniffed], param_names: Sequence[str] | None) -> Job:
    """Read nsight-python CSVs into a :class:`Job`.

    Raises:
        ImportFailed: see :func:`~profiling_worker.importing.nsight_csv.load`.
    """
    items = S.load(sources, param_names)
    params = items[0].params
    roles: dict[str, dict[str, Any]] = {}
    for it in items:
        roles.update(apply_roles(it))
    configs = S.assign_configs(items, params)
    notes = [n for it in items if (n := index_column_note(it.source))]
    raw_items = [it for it in items if it.kind == NSIGHT_RAW]
    raw = [(it.call, V.runs_frame(it, params, notes)) for it in raw_items]
    kept_agg, agg_how = _agg_sources(raw, [it for it in items if it.kind == NSIGHT_AGG],
                                     params, notes, roles)
    frames, call_notes = S.separate_calls(raw)
    del raw
    notes += call_notes
    runs = V.sort_runs(frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)) \
        if frames else empty_table(C.TABLE_RUNS, params)
    del frames
    env = S.environment(items)
    gpu = env.get("gpu_name")
    runs, combined_notes = fix_combined_runs(runs, gpu if isinstance(gpu, str) else None)
    notes += combined_notes
    parts = [aggregate_runs(runs, params)] if len(runs) else []
    if kept_agg:
        agg_frames, agg_call_notes = S.separate_calls(kept_agg)
        agg_only, blank_notes = blank_combined_agg(pd.concat(agg_frames, ignore_index=True))
        parts.append(blank_normalised_stats(agg_only, roles))
        notes += agg_call_notes + blank_notes
    agg = pd.concat(parts, ignore_index=True)[table_columns(C.TABLE_AGGREGATED, params)]
    collected = [collectors_frame(it, params) for it in raw_items]
    collectors = pd.concat([c for c, _ in collected], ignore_index=True) if collected else None
    told = {h: why for it in raw_items for h, why in it.collectors.items()}
    if told:
        # the advice only where a call's processed_data CSV was not given (issue 37: it was
        # given to a user who had uploaded both)
        paired = {it.call for it in items if it.kind == NSIGHT_AGG}
        alone = any(it.collectors and it.call not in paired for it in raw_items)
        notes.append("read as nsight-python 1.1 info-collector values, not config parameters "
                     f"(the parameters: {', '.join(params) or 'none'}): " +
                     "; ".join(f"{h} ({why})" for h, why in told.items()) +
                     ("; the processed_data CSV of the same call names the parameters exactly: "
                      "import it with this file" if alone else ""))
    text_collectors = {k: v for _, t in collected for k, v in t.items()}
    if text_collectors:
        env["collectors"] = text_collectors
    collector_names = sorted({*{n for it in raw_items for n in
                                N.raw_extra_columns(it.header, params)},
                              *{n for it in items if it.kind == NSIGHT_AGG
                                for n in agg_collector_stats(it)}})
    version = N.detect_version([it.header for it in items])
    if collector_names and version.startswith("1.0-1.1"):  # collectors came with 1.1
        version = "1.1 (Unit and info-collector columns)"
    return Job(params=params, configs=configs, runs=runs, agg=agg, collectors=collectors,
               kernels=[it.call.rsplit("-", 1)[0] for it in items],
               label="imported: " + ", ".join(it.path.name for it in items),
               environment=env, notes=notes, roles=roles,
               provenance={"nsight_python_version": version,
                           "aggregated": agg_how or ["recomputed from the per-run rows "
                                                     "(Student-t CI95)"],
                           "parameters": params, "collectors": collector_names})


__all__ = ["from_csvs", "written_from"]
