"""``.ncu-rep`` reports in an import: alone (a job of their own) or beside nsight-python CSVs
(the per-launch table, and per-launch values replacing what nsight-python combined).

Regions are nsight-python annotations where present, else other NVTX ranges, else kernel names
(:mod:`.regions`). Configs come from the worker's ``kprof`` ranges when the report has them,
else from the launch parameters; either way the manifest says how.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.writer import table_columns
from profiling_worker.bundle.errors import ImportFailed, ImportInternalError
from profiling_worker.bundle.inflate import check_report
from profiling_worker.bundle.stats.aggregate import aggregate_runs, launches_to_runs
from profiling_worker.extract.kernel_regions import region_names
from profiling_worker.importing import ncu_rep as R, ncu_version as V
from profiling_worker.importing import regions as G
from profiling_worker.importing.job import Job
from profiling_worker.importing.own_process import forked
from profiling_worker.importing.textcsv import METRIC_NAME_RE
from profiling_worker.bundle.schema import backends as B, columns as C

#: The grouping rule of a report whose configs and runs nsight-python recorded.
KPROF_RULE = "nsight-python's own records (the config and run of every launch)"
ATTRIBUTED_PARAMS = ("configs told apart by launch parameters (kernel, grid, block) and work "
                     "(counters, else durations): the report does not record which config a "
                     "launch belonged to")


def _first_refusal(reports: list[Path]) -> tuple[bool, str, str] | None:
    """(the files' fault, message, hint) of the first report that cannot be read, or None."""
    for report in reports:
        try:
            R.read_report(report, (C.GPU_TIME,))
        except ImportFailed as exc:
            return True, exc.message, exc.hint
        except Exception as exc:  # the importer's fault: said so, as assemble says it
            return False, (f"the importer failed on {report.name} ({type(exc).__name__}: "
                           f"{str(exc)[:300]})"), "report this with the files"
    return None


def validate_reports(reports: list[Path]) -> None:
    """Open every further report of an upload (the first is read in full), in a process of its
    own (:func:`~.own_process.forked`: ncu_report would keep their launches in this one).

    Raises:
        ImportFailed: one of them cannot be read, naming it; or the process checking them
            ended without an answer (killed, e.g. out of memory).
    """
    if not reports:
        return
    names = ", ".join(p.name for p in reports)[:200]
    refusal = forked(lambda: _first_refusal(reports), lambda code: (
        True, f"{names}: the check of these reports ended without a result (its process "
        f"exited with {code}; killed, e.g. out of memory?)", "import them one at a time"))
    if refusal is not None:
        files_fault, message, hint = refusal
        raise (ImportFailed if files_fault else ImportInternalError)(message, hint)


def _sequence(rows: pd.DataFrame) -> pd.Series:
    """A launch's position in the recording (rows come in launch order, one per metric)."""
    # fillna first: astype(str) keeps a missing Annotation missing (pandas' str dtype), and
    # NaN != NaN made every metric row a launch of its own (runs numbered 0, 8, 16, ...)
    keys = rows[[C.ANNOTATION, C.CONFIG, C.RUN, C.LAUNCH, C.KERNEL]].fillna("").astype(str)
    return (keys != keys.shift()).any(axis=1).cumsum()


def _report_launches(rows: pd.DataFrame) -> tuple[pd.DataFrame, list[str], list[str], str, str]:
    """Launch rows of a report read alone: regions named, configs and runs set; (rows,
    warnings, notes on how runs and configs were read, attribution, the grouping rule)."""
    rows = rows.copy()
    rows["_seq"] = _sequence(rows)
    names = region_names(rows[C.KERNEL])
    unnamed = rows[C.ANNOTATION].isna()
    rows.loc[unnamed, C.ANNOTATION] = rows.loc[unnamed, C.KERNEL].map(names)
    if (rows[C.CONFIG] >= 0).all() and not unnamed.any():
        return rows, G.cut_short(rows), [], R.ATTRIBUTED_KPROF, KPROF_RULE
    rows, notes, rule = G.attribute(rows)
    return rows, [], notes, ATTRIBUTED_PARAMS, rule


def _cut_by_structure(report: Path) -> list[str]:
    """A partial warning when the block walk ends inside a block (the file's own structure,
    never the runs per config). A ``.gz`` is walked as it inflates (a cut gzip stream is
    refused there)."""
    if report.name.lower().endswith(".gz"):
        return []
    missing = check_report(report).missing()
    if not missing:
        return []
    return [f"partial: {report.name} ends {missing:,} bytes before the end of its last block: "
            "the file was cut short (an interrupted copy), so its last launches may be "
            "missing; copy it again from where it was recorded"]


def _no_launch(report: Path) -> ImportFailed:
    """Why a report gave no launch: cut short (its last block incomplete, so no launch record
    was whole), or whole but without a launch the dashboard reads."""
    walk = check_report(report)
    if walk.missing():
        kept = report.stat().st_size
        return ImportFailed(f"{report.name}: cut short: the file ends {walk.missing():,} bytes "
                            f"before the end of its block {walk.blocks + 1} ({kept:,} bytes "
                            "kept), before any launch record was complete",
                            "copy the report again from where it was recorded (an interrupted "
                            "copy or download; compare its size with the original's)")
    return ImportFailed(f"{report.name}: a whole Nsight Compute report with no profiled launch "
                        "(its filters matched no kernel) or none of the metrics the dashboard "
                        "reads", "profile with `--set basic` or `--metrics "
                                 "gpu__time_duration.sum`, "
                        "or import nsight-python's CSVs")


def from_report(report: Path) -> Job:
    """A job from one report alone.

    Raises:
        ImportFailed: the report cannot be read or holds no launch.
    """
    rows, device, summary = R.read_report(report, R.REPORT_METRICS)
    if rows.empty:
        raise _no_launch(report)
    rows, warnings, reading, how, rule = _report_launches(rows)
    warnings += _cut_by_structure(report)
    if device.get("empty_launches"):
        warnings.append(f"partial: {device['empty_launches']} launch(es) at the end of "
                        f"{report.name} hold no metric at all: the file ends inside a launch's "
                        "record, so it was cut short (an interrupted copy) and the recording "
                        "may have gone on")
    params = [R.CONFIG_INDEX]
    n_configs = int(rows[C.CONFIG].max()) + 1
    configs = [{R.CONFIG_INDEX: i} for i in range(n_configs)]
    rows[R.CONFIG_INDEX] = rows[C.CONFIG]
    launches = _typed(rows[table_columns(C.TABLE_LAUNCHES, params)])
    runs = launches_to_runs(launches, params)
    notes = [f"{report.name}: {how}; here: {rule}"] if how == ATTRIBUTED_PARAMS else []
    notes += [f"{report.name}: {n}" for n in reading] + source_notes(report.name, device)
    if how == ATTRIBUTED_PARAMS and n_configs == 1:
        notes.append(f"{report.name}: {G.ONE_CONFIG}")
    stem = report.name.split(".ncu-rep")[0]
    return Job(params=params, configs=configs, runs=runs, agg=aggregate_runs(runs, params),
               launches=launches, kernels=[stem.removeprefix("ncu-output-").rsplit("-", 1)[0]],
               label=f"imported: {report.name}", environment=R.gpu_environment(device),
               notes=notes, warnings=warnings,
               provenance={"measurement": "imported Nsight Compute report",
                           "aggregated": ["computed from the report's launches (combined per "
                                          "run with the metric-aware rules, Student-t CI95)"],
                           "parameters": params, "report_summary": summary,
                           "backend": {"name": B.NCU, "report": report.name,
                                       "device_attributes": _device(device)},
                           "launches": {**_launch_provenance(report, rows, device, how),
                                        "grouping": rule},
                           V.PROVENANCE_KEY: {report.name: summary.get("ncu_version")}})


def _typed(launches: pd.DataFrame) -> pd.DataFrame:
    out = launches.copy()
    for c in (C.CONFIG, C.RUN, C.LAUNCH):
        out[c] = out[c].astype("int64")
    for c in (C.GRID, C.BLOCK):
        out[c] = out[c].map(lambda v: None if v is None or v != v else str(v))
    out[C.VALUE] = pd.to_numeric(out[C.VALUE], errors="coerce")
    return out.reset_index(drop=True)


def _device(device: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in device.items()
            if k not in ("missing_metrics", "metric_sources", "empty_launches")}


def source_notes(report_name: str, device: dict[str, Any]) -> list[str]:
    """One note per metric read under another name (``device["metric_sources"]`` of
    :func:`~profiling_worker.extract.ncu_report_reader.read_launches`)."""
    return [f"{report_name}: {name} read from {source}, the name this report holds it under "
            "(Nsight Compute's Speed Of Light section in the default set)"
            for name, source in device.get("metric_sources", {}).items()]


def _launch_provenance(report: Path, rows: pd.DataFrame, device: dict[str, Any],
                       how: str) -> dict[str, Any]:
    return {"report": report.name, "attribution": how, "rows": int(len(rows)),
            "metrics_read": sorted(set(rows[C.METRIC])) if len(rows) else [],
            "metrics_missing": device.get("missing_metrics", [])[:50],
            "metric_sources": device.get("metric_sources", {})}


def add_report(job: Job, report: Path) -> Job:
    """Add a report's launches to a job read from nsight-python CSVs (see
    :func:`add_launch_rows`).

    Raises:
        ImportFailed: the report cannot be read.
    """
    table = job.runs if not job.runs.empty else job.agg
    named = [m for m in dict.fromkeys(table[C.METRIC]) if METRIC_NAME_RE.match(str(m))]
    rows, device, summary = R.read_report(report, tuple(dict.fromkeys([*named,
                                                                        *R.REPORT_METRICS])),
                                          other_ranges=False)
    job = add_launch_rows(job, rows, report.name, device)
    job.provenance["report_summary"] = summary
    job.provenance[V.PROVENANCE_KEY] = {report.name: summary.get("ncu_version")}
    return job


def add_launch_rows(job: Job, rows: pd.DataFrame, report_name: str,
                    device: dict[str, Any]) -> Job:
    """Place a report's launch rows (:func:`~.ncu_rep.read_report`) into a job read from
    nsight-python CSVs. When every launch can be placed (kprof ranges, or launch order matching
    the CSVs' run and kernel counts), the runs of the metrics the report holds are recomputed
    per launch with the metric-aware combine rules (a sum of percentages over kernels becomes
    a duration-weighted mean; durations and bytes add)."""
    launches, how = R.attribute_launches(rows, job.params, job.configs,
                                         job.runs if not job.runs.empty else None)
    job.launches = _typed(launches) if not launches.empty else None
    if job.launches is not None and not job.runs.empty and how != R.ATTRIBUTED_NONE:
        job.runs, replaced = _runs_from_launches(job.runs, job.launches, job.params)
        if replaced:
            job.agg = aggregate_runs(job.runs, job.params)[
                table_columns(C.TABLE_AGGREGATED, job.params)]
            job.notes.append(f"{report_name}: per-run values of {', '.join(replaced)} "
                             "recomputed from the report's launches")
    elif launches.empty:
        job.notes.append(f"{report_name}: launches not used ({how})")
        if not job.runs.empty:
            job.warnings += _fewer_launches(rows, job.runs, report_name)
    job.notes += source_notes(report_name, device)
    job.environment = {**R.gpu_environment(device), **job.environment}
    job.provenance["launches"] = _launch_provenance(Path(report_name), rows, device, how)
    job.provenance["backend"] = {"name": B.NCU, "report": report_name,
                                 "device_attributes": _device(device)}
    return job


def _fewer_launches(rows: pd.DataFrame, runs: pd.DataFrame, report_name: str) -> list[str]:
    """Warnings for annotations whose launches in the report are fewer than the CSVs' runs x
    kernels name (a report cut short: the CSVs were written from the whole recording)."""
    out = []
    for annotation, sub in rows[rows[C.CONFIG] < 0].groupby(C.ANNOTATION, sort=False):
        expected = len(R.expected_launches(runs, str(annotation)))
        have = sub[C.RUN].nunique()
        if have < expected:
            out.append(f"partial: {report_name} holds {have} of the "
                       f"{counted(expected, 'launch', 'launches')} of "
                       f"{annotation} that the CSVs' runs name; the report was probably cut "
                       "short (an interrupted copy), so its per-launch values are not used")
    return out


def _runs_from_launches(runs: pd.DataFrame, launches: pd.DataFrame, params: list[str]
                        ) -> tuple[pd.DataFrame, list[str]]:
    """Runs with the rows of every metric the launches hold replaced by the launches'
    per-run combination (only where nsight-python combined several kernels)."""
    combined = runs[runs[C.KERNELS] > 1]
    metrics = sorted(set(combined[C.METRIC]) & set(launches[C.METRIC]))
    if not metrics:
        return runs, []
    fresh = launches_to_runs(launches[launches[C.METRIC].isin(metrics)], params)
    keep = runs[~runs[C.METRIC].isin(metrics)]
    out = pd.concat([keep, fresh[runs.columns]], ignore_index=True)
    return out.sort_values([C.CONFIG, C.ANNOTATION, C.METRIC, C.RUN], kind="stable") \
        .reset_index(drop=True), metrics


__all__ = ["validate_reports", "from_report", "add_report", "add_launch_rows", "ATTRIBUTED_PARAMS"]
