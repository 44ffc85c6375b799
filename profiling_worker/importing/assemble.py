"""The one assembler of an import: the readers' frames -> a result bundle, written with the
worker's own bundle writer (:mod:`profiling_worker.bundle_writer`)."""

from __future__ import annotations

import datetime as _dt
import json
import re
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from profiling_worker.bundle_writer import empty_table, finish_bundle, write_table
from profiling_worker.errors import ImportFailed, ImportInternalError
from profiling_worker.extract.aggregate import aggregate_runs, launches_to_runs
from profiling_worker.importing import ncu_rep as R
from profiling_worker.importing.nsight_csv import from_csvs
from profiling_worker.importing.sources import expand
from profiling_worker.importing.textcsv import METRIC_NAME_RE
from profiling_worker.schema import columns as C
from profiling_worker.schema.manifest import JobStatus
from profiling_worker.schema.spec import SpecInvalid, validate_spec

_JOB_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


def reconstruct_spec(kernels: Sequence[str], configs: list[dict[str, Any]], table: pd.DataFrame,
                     n_runs: int, label: str) -> tuple[dict[str, Any], bool, list[str]]:
    """The spec of an imported job as far as the files tell: (spec, valid, field errors).

    ``table``: the runs (or aggregated) rows; their Nsight Compute metric names and annotations
    go into the spec. An invalid spec is kept as given, with the errors, never guessed at."""
    metrics = [m for m in dict.fromkeys(table[C.METRIC])
               if METRIC_NAME_RE.match(str(m)) or m == C.HOST_TIME]
    raw = {"kernels": list(dict.fromkeys(kernels)) or ["imported"], "configs": configs,
           "runs": max(n_runs, 1), "metrics": metrics or [C.GPU_TIME], "backend": "ncu",
           "annotations": list(dict.fromkeys(table[C.ANNOTATION])), "label": label[:200]}
    try:
        return validate_spec(raw).to_json(), True, []
    except SpecInvalid as exc:
        return raw, False, [str(e) for e in exc.errors][:20]


def import_nsight_output(sources: Sequence[Path], out_dir: Path, job_id: str, *,
                         param_names: Sequence[str] | None = None) -> Path:
    """Turn nsight-python output files into the result bundle ``out_dir/job_id``.

    Args:
        sources: files and/or folders. Folders contribute their ``profiled_data-*.csv``,
            ``processed_data-*.csv``, ``*.ncu-rep`` and ``*.log`` files. A CSV is recognised by
            its columns (``Value`` = per-run table, ``AvgValue`` = aggregated table), so renamed
            files work too. nsight-python 0.9.x (no ``Unit`` column) and 1.x are accepted.
        out_dir: the folder that receives the bundle (created if missing).
        job_id: the bundle's folder name (letters, digits, ``_ . -``); must not exist yet.
        param_names: the config parameter columns, when the files cannot tell (a 1.1 per-run CSV
            with info-collector columns and no aggregated CSV beside it); None = detect: the
            columns between ``Metric`` and ``AvgValue`` of the aggregated CSV, else the columns
            after nsight-python's fixed ones.

    Returns:
        The bundle directory, holding ``tables/{runs,aggregated,launches,work,nvml_trace}``
        (``.parquet`` + ``.csv``), ``nsight/`` (copies of the sources), ``spec.json`` and
        ``manifest.json`` (status ``done``). Values keep nsight's units (ns, %, byte...).
        ``runs``: per-run rows, Run numbered 0.. in file order within annotation x config x
        metric, Config numbered in first-seen order of the parameter values; ``Kernels`` from
        the ``|``-joined Kernel names. ``aggregated``: recomputed from the runs (Student-t CI95,
        median) for every call that has a per-run CSV; otherwise nsight-python's rows as written
        (its 1.96-sigma CI, no median: MedianValue is NaN). The bundle is built in a temporary
        folder and renamed into place, so a failed import leaves nothing behind.

    Raises:
        ImportFailed: with ``message`` naming the file and the problem and ``hint`` the fix:
            missing or unreadable files, no CSV among the sources, empty/truncated/non-UTF-8/
            non-CSV files, wrong or duplicate columns, non-numeric or infinite values, parameter
            names that clash with bundle columns, a bad job_id, an existing bundle.
    """
    if not isinstance(job_id, str) or not _JOB_ID_RE.match(job_id) or ".." in job_id:
        raise ImportFailed(f"job id {str(job_id)[:80]!r} is not a plain folder name",
                           "use letters, digits, '_', '.' and '-' only")
    out_dir = Path(out_dir)
    final = out_dir / job_id
    if final.exists():
        raise ImportFailed(f"{job_id}: a bundle of that name already exists in {out_dir.name}",
                           "choose another job id; finished bundles are never overwritten")
    csvs, extra, ignored = expand([Path(s) for s in sources])
    if not csvs and not any(R.is_report(p) for p in extra):
        raise ImportFailed("no nsight-python CSV and no .ncu-rep among the sources "
                           f"({', '.join(Path(s).name for s in sources)[:200] or 'none given'})",
                           "run the profiled function with output_csv=True and import the "
                           "profiled_data-*.csv (and processed_data-*.csv) it writes, or its "
                           ".ncu-rep")
    try:
        return _import(csvs, extra, ignored, out_dir, job_id, final, param_names)
    except ImportFailed:
        raise
    except OSError as exc:  # the results folder, not the user's files
        raise ImportFailed(f"{job_id}: the bundle cannot be written in {out_dir.name} "
                           f"({exc.strerror or exc})",
                           "free disk space or choose a writable results folder") from exc
    except Exception as exc:  # a bug of the importer, never blamed on the user's files
        names = ", ".join(p.name for p in [*csvs, *extra])[:200]
        raise ImportInternalError(
            f"the importer failed on {names} ({type(exc).__name__}: {str(exc)[:300]}); "
            "this is a fault of the importer, not of the files",
            "report this with the files; meanwhile import the CSVs and the report separately"
        ) from exc


def _add_report(prep: dict[str, Any] | None, report: Path) -> tuple[dict[str, Any], pd.DataFrame,
                                                                      dict[str, Any]]:
    """Read ``report`` into the launches table; with no CSVs, runs and aggregated come from it."""
    metrics = R.REPORT_METRICS
    if prep is not None:
        table = prep["runs"] if not prep["runs"].empty else prep["agg"]
        named = [m for m in dict.fromkeys(table[C.METRIC]) if METRIC_NAME_RE.match(m)]
        metrics = tuple(dict.fromkeys([*named, *R.REPORT_METRICS]))
    rows, device, summary = R.read_report(report, metrics)
    if prep is None:
        params, configs = R.report_only_configs(rows)
        launches, how = R.attribute_launches(rows, params, configs, None)
        if launches.empty:
            raise ImportFailed(f"{report.name}: holds no launch inside an nsight-python "
                               "annotation", "profile with nsight-python (nsight.annotate "
                               "ranges), or import its CSVs")
        runs = launches_to_runs(launches, params)
        agg = aggregate_runs(runs, params)
        stem = re.sub(r"\.ncu-rep(\.gz)?$", "", report.name, flags=re.IGNORECASE)
        kernel = re.sub(r"-\d+$", "", re.sub(r"^ncu-output-", "", stem))
        prep = {"params": params, "configs": configs, "runs": runs, "agg": agg,
                "spec_inputs": ([kernel], runs, f"imported: {report.name}"), "environment": {},
                "provenance": {"aggregated": "computed from the report's launches (combined "
                                             "per run, Student-t CI95)",
                               "parameters": params}}
    else:
        launches, how = R.attribute_launches(rows, prep["params"], prep["configs"], prep["runs"])
    prep["environment"] = {**R.gpu_environment(device), **prep["environment"]}
    prep["provenance"]["launches"] = {
        "report": report.name, "attribution": how, "rows": int(len(launches)),
        "metrics_read": sorted(set(rows[C.METRIC])) if len(rows) else [],
        "metrics_missing": device.get("missing_metrics", [])[:50]}
    device = {k: v for k, v in device.items() if k != "missing_metrics"}
    return prep, launches, {"device_attributes": device, "summary": summary}


def _import(csvs: list[Path], extra: list[Path], ignored: list[Path], out_dir: Path,
            job_id: str, final: Path, param_names: Sequence[str] | None) -> Path:
    reports = [p for p in extra if R.is_report(p)]
    prep = from_csvs(csvs, param_names) if csvs else None
    report_info: dict[str, Any] = {}
    if reports:
        prep, launches, report_info = _add_report(prep, reports[0])
    assert prep is not None
    params = prep["params"]
    if not reports:
        launches = empty_table(C.TABLE_LAUNCHES, params)
    if "spec_inputs" not in prep:
        items = prep["items"]
        table = prep["runs"] if not prep["runs"].empty else prep["agg"]
        prep["spec_inputs"] = ([re.sub(r"-\d+$", "", it.tag) for it in items], table,
                               "imported: " + ", ".join(it.path.name for it in items))
    kernels, table, label = prep["spec_inputs"]
    n_runs = int(prep["agg"][C.NUM_RUNS].max()) if len(prep["agg"]) else 1
    spec, spec_valid, spec_errors = reconstruct_spec(kernels, prep["configs"], table, n_runs,
                                                     label)
    measurement = "imported nsight-python output" if csvs else "imported Nsight Compute report"

    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".import-{job_id}-", dir=out_dir))
    try:
        write_table(tmp, C.TABLE_RUNS, prep["runs"])
        write_table(tmp, C.TABLE_AGGREGATED, prep["agg"])
        write_table(tmp, C.TABLE_LAUNCHES, launches)
        write_table(tmp, C.TABLE_WORK, empty_table(C.TABLE_WORK, params))
        write_table(tmp, C.TABLE_NVML, empty_table(C.TABLE_NVML))
        write_table(tmp, C.TABLE_COLLECTORS, empty_table(C.TABLE_COLLECTORS, params))
        nsight = tmp / C.NSIGHT_DIR
        nsight.mkdir()
        copied: list[str] = []
        for src in [*csvs, *extra]:
            name = src.name
            k = 1
            while (nsight / name).exists():
                name = f"{src.stem}-{k}{src.suffix}"
                k += 1
            shutil.copy2(src, nsight / name)
            copied.append(name)
        if report_info:
            (tmp / C.REPORT_SUMMARY_FILE).write_text(
                json.dumps(report_info["summary"], indent=1, default=str), encoding="utf-8")
        (tmp / C.SPEC_FILE).write_text(json.dumps(spec, indent=2, default=str), encoding="utf-8")
        now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        backend: dict[str, Any] = {"name": "ncu", "measurement": measurement}
        if report_info:
            backend["report"] = reports[0].name
            backend["device_attributes"] = report_info["device_attributes"]
        manifest = {
            "job_id": job_id,
            "status": JobStatus.DONE.value,
            "spec": spec,
            "backend": backend,
            "environment": prep["environment"],
            "timings": {"imported_at": now},
            "provenance": {
                "imported_from": [p.name for p in [*csvs, *extra]],
                "ignored": [p.name for p in ignored],
                "date": now,
                **prep["provenance"],
                "spec_reconstructed": True,
                "spec_fields_from_files": ["kernels", "configs", "runs", "metrics",
                                           "annotations"],
                "spec_fields_defaulted": sorted(k for k in spec if k not in (
                    "kernels", "configs", "runs", "metrics", "annotations", "label",
                    "backend")),
                "spec_valid": spec_valid,
                "spec_errors": spec_errors,
            },
        }
        finish_bundle(tmp, manifest)
        try:
            tmp.rename(final)
        except OSError as exc:
            raise ImportFailed(f"{job_id}: cannot create the bundle in {out_dir.name} "
                               f"({exc.strerror or exc})",
                               "choose another job id or a writable folder") from exc
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final
