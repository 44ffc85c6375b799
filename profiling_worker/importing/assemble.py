"""The one assembler of an import: sniffed sources -> one reader per format -> a result bundle,
written with the worker's own bundle writer (:func:`~profiling_worker.bundle.writer.write_table`
and :func:`~profiling_worker.bundle.writer.finish_bundle`, where every finished bundle is
checked).

Which reader reads what:

* nsight-python CSVs (:mod:`.csv_job`) give the runs and aggregated tables; a ``.ncu-rep``
  beside them adds the per-launch table and, when its launches can be placed, replaces the
  per-run values of the metrics it holds with values recomputed per launch;
* a ``.ncu-rep`` alone (:mod:`.report_job`) gives launches, runs and aggregated;
* an Nsight Compute CSV export alone (:mod:`.ncu_csv`) does the same from its rows;
* files of a kind with a reader of its own (a module of :mod:`.readers`) are read by it, alone.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tempfile
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from profiling_worker.bundle.writer import empty_table, finish_bundle, write_table
from profiling_worker.bundle.errors import ImportFailed, ImportInternalError
from profiling_worker.bundle.file_mode import folder_as_if_made
from profiling_worker.importing import kinds as R, nvtx_columns as X, sniff as K
from profiling_worker.importing.own_export import export_of
from profiling_worker.importing.refusals import HINT_IMPORTABLE, Refused
from profiling_worker.importing.csv_job import from_csvs
from profiling_worker.importing.how_read import how_read
from profiling_worker.importing.job import NOT_READ, NOT_READ_KEY, Job
from profiling_worker.importing.ncu_csv import from_ncu_csv
from profiling_worker.importing.ncu_rep import CONFIG_INDEX
from profiling_worker.importing.report_job import add_report, from_report, validate_reports
from profiling_worker.importing.textcsv import METRIC_NAME_RE
from profiling_worker.bundle.schema import backends as B, columns as C
from profiling_worker.bundle.schema import plausibility as P
from profiling_worker.bundle.schema.manifest import (METRIC_ROLES_KEY, SOURCE_SHA256_KEY, JobStatus,
                                                  now_iso)
from profiling_worker.bundle.schema.spec import BACKEND_UNKNOWN, SpecInvalid, validate_spec

_JOB_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
#: manifest.json keys the importer fills besides the worker's.
IMPORT_NOTES_KEY = "import_notes"  # what the import did to values, for the pages
PARTIAL_KEY = "partial"  # why the bundle holds only part of the job (every page shows it)


def reconstruct_spec(job: Job) -> tuple[dict[str, Any], bool, list[str]]:
    """The spec of an imported job as far as the files tell: (spec, valid, field errors).
    An invalid spec is kept as given, with the errors, never guessed at."""
    table = job.runs if not job.runs.empty else job.agg
    metrics = [m for m in dict.fromkeys(table[C.METRIC])
               if METRIC_NAME_RE.match(str(m)) or m == C.HOST_TIME]
    n_runs = int(job.agg[C.NUM_RUNS].max()) if len(job.agg) else 1
    backend = backend_name(job)
    raw = {"kernels": list(dict.fromkeys(job.kernels)) or ["imported"], "configs": job.configs,
           "runs": max(n_runs, 1), "metrics": metrics or [C.GPU_TIME],
           "backend": B.NCU if backend == BACKEND_UNKNOWN else backend,
           "annotations": list(dict.fromkeys(table[C.ANNOTATION])), "label": job.label[:200]}
    try:
        spec = validate_spec(raw).to_json()
    except SpecInvalid as exc:
        return {**raw, "backend": backend}, False, [str(e) for e in exc.errors][:20]
    return {**spec, "backend": backend}, True, []  # "unknown" is stated, never guessed


def backend_name(job: Job) -> str:
    """``ncu`` when the files prove it (a report or an ncu CSV export was read, an nsight-python
    version before 1.0, which had only ncu, or a metric besides gpu__time_duration.sum, which
    CUPTI cannot collect), else ``unknown``
    (:data:`~profiling_worker.bundle.schema.spec.BACKEND_UNKNOWN`)."""
    if job.provenance.get("backend", {}).get("name"):
        return str(job.provenance["backend"]["name"])
    if str(job.provenance.get("nsight_python_version", "")).startswith("0."):
        return B.NCU
    table = job.runs if not job.runs.empty else job.agg
    named = {m for m in table[C.METRIC] if METRIC_NAME_RE.match(str(m))}
    return B.NCU if named - {C.GPU_TIME} else BACKEND_UNKNOWN


def _check_target(out_dir: Path, job_id: str, reserved_ids: Collection[str]) -> Path:
    if not isinstance(job_id, str) or not _JOB_ID_RE.match(job_id) or ".." in job_id:
        raise ImportFailed(f"job id {str(job_id)[:80]!r} is not a plain folder name",
                           "use letters, digits, '_', '.' and '-' only")
    if job_id in reserved_ids:
        raise ImportFailed(f"{job_id}: the id of a job bundled with the dashboard; an import "
                           "under that name would hide it", "choose another name for `--out`")
    final = Path(out_dir) / job_id
    if final.exists():
        raise ImportFailed(f"{job_id}: a bundle of that name already exists in "
                           f"{Path(out_dir).name}",
                           "choose another job id; finished bundles are never overwritten")
    return final


def import_nsight_output(sources: Sequence[Path], out_dir: Path, job_id: str, *,
                         param_names: Sequence[str] | None = None,
                         reserved_ids: Collection[str] = (), nvtx: str = X.INNERMOST,
                         ignored: Sequence[str] = ()) -> Path:
    """Turn nsight-python / Nsight Compute output files into the bundle ``out_dir/job_id``.

    Args:
        sources: files and/or folders; every file is identified by its content
            (:mod:`~profiling_worker.importing.sniff`); files of a folder that are none of
            the supported kinds are listed in the manifest as ignored.
        out_dir: the folder that receives the bundle (created if missing).
        job_id: the bundle's folder name (letters, digits, ``_ . -``); must not exist yet
            and must not be one of ``reserved_ids`` (the bundled jobs' ids).
        param_names: the config parameter columns of nsight-python CSVs, when the files
            cannot tell; None = detect.
        nvtx: the region of a launch in NVTX ranges of an Nsight Compute CSV export or
            console text: ``innermost`` range or the whole ``stack`` (:mod:`.nvtx_columns`).
        ignored: notes on files left out before (``import --each`` of a folder), listed in
            the manifest with those of ``sources``.

    Returns:
        The bundle directory: ``tables/`` (runs, aggregated, launches, work, nvml_trace,
        collectors), ``nsight/`` (copies of the sources), ``spec.json``, ``manifest.json``
        (status ``done``; ``import_notes``, ``metric_roles``, ``partial`` when they apply).
        Built in a temporary folder and renamed into place: a failed import leaves nothing.

    Raises:
        ImportFailed: a file that cannot be imported (the message says which, what it is
            and what is wrong; the hint says what to do), a bad or taken job id.
        ImportInternalError: the importer itself failed (a bug), never blamed on the files.
    """
    final = _check_target(Path(out_dir), job_id, reserved_ids)
    found, left_out = K.gather([Path(s) for s in sources])
    ignored = [*ignored, *left_out]
    readable = [s for s in found if R.by_name()[s.kind].reader != R.NOT_READ]
    if not readable:
        given = ", ".join(Path(s).name for s in sources)[:200] or "none given"
        why = (Refused("ncu's log (==PROF== lines) with no profiled values in it",
                       "upload it with the files of the same run that hold the values (its "
                       "CSVs, or the report `ncu --nvtx -o report python3 app.py` writes)")
               if found  # logs only: ncu's ==PROF== lines hold no profiled value
               else Refused("no nsight-python CSV, Nsight Compute CSV or report among these "
                            "files and folders", HINT_IMPORTABLE))
        raise ImportFailed(why.message(given), why.fix)
    try:
        job = _read(found, param_names, nvtx)
        return _write(job, found, ignored, Path(out_dir), job_id, final)
    except ImportFailed:
        raise
    except OSError as exc:  # the results folder, not the user's files
        raise ImportFailed(f"{job_id}: the bundle cannot be written in {Path(out_dir).name} "
                           f"({exc.strerror or exc})",
                           "free disk space or choose a writable results folder") from exc
    except Exception as exc:  # a bug of the importer, never blamed on the user's files
        names = ", ".join(s.path.name for s in found)[:200]
        raise ImportInternalError(
            f"the importer failed on {names} ({type(exc).__name__}: {str(exc)[:300]}); "
            "this is a fault of the importer, not of the files",
            "report this with the files; meanwhile import the CSVs and the report separately"
        ) from exc


def _read(found: list[K.Sniffed], param_names: Sequence[str] | None, nvtx: str) -> Job:
    own = next((R.by_name()[s.kind] for s in found if R.by_name()[s.kind].read), None)
    if own is None or own.read is None:
        return _read_combined(found, param_names, nvtx)
    return _read_own(found, own, own.read)


def _read_own(found: list[K.Sniffed], kind: R.ImportKind, read: Callable[[list[Path]], Job]
              ) -> Job:
    """The job of the files of ``kind``, a kind with a reader of its own (``read``, its
    :attr:`~.kinds.ImportKind.read`), which reads them alone.

    Raises:
        ImportFailed: files of another kind beside them (logs aside), or from the reader.
    """
    mine = [s.path for s in found if s.kind == kind.name]
    others = [s.path.name for s in found
              if s.kind != kind.name and R.by_name()[s.kind].reader != R.NOT_READ]
    if others:
        raise ImportFailed(", ".join(others)[:200] + f": not read with {mine[0].name} "
                           f"({kind.words}), which is read on its own",
                           "import these files separately")
    return read(mine)


def _read_combined(found: list[K.Sniffed], param_names: Sequence[str] | None, nvtx: str
                   ) -> Job:
    """The job of nsight-python CSVs, Nsight Compute exports and reports, read together."""
    nsight = _read_by(found, R.NSIGHT_CSVS)
    ncu_csvs = _read_by(found, R.NCU_EXPORTS)
    reports = [s.path for s in _read_by(found, R.NCU_REPORTS)]
    validate_reports(reports[1:])
    if nsight:
        job = from_csvs(nsight, param_names)
        if reports:
            job = add_report(job, reports[0])
    elif reports:
        job = from_report(reports[0])
    else:
        job = from_ncu_csv(ncu_csvs, nvtx)
    own = [s for s in ncu_csvs if reports and not nsight and export_of(reports[0], s)]
    if own:
        job.notes.append(", ".join(s.path.name for s in own) + f": the launches and values of "
                         f"{reports[0].name} (exported from it: one profile); read once, "
                         "from the report")
    ncu_csvs = [s for s in ncu_csvs if s not in own]
    unread = [*((s.path.name for s in ncu_csvs) if (nsight or reports) else ()),
              *(p.name for p in reports[1:])]
    if unread:
        job.provenance[NOT_READ_KEY] = unread
    if (nsight or reports) and ncu_csvs:
        job.notes.append(", ".join(s.path.name for s in ncu_csvs) + ": " + NOT_READ
                         + " (Nsight Compute CSV export beside the "
                         + ("nsight-python CSVs" if nsight else "report") + ", which give the "
                         "values; kept with the files); import it on its own to see its values")
    if not job.agg.empty and not (job.agg[C.METRIC] == C.GPU_TIME).any():
        job.notes.append(", ".join(s.path.name for s in found) + f": no {C.GPU_TIME} (kernel "
                         "duration) in the file(s): the time views are empty; profile with the "
                         "default set or --metrics gpu__time_duration.sum for durations")
    if len(reports) > 1:
        job.notes.append(", ".join(p.name for p in reports[1:]) + ": " + NOT_READ
                         + f" (one import reads one report; the values here are from "
                         f"{reports[0].name}; kept with the files); import each report on its "
                         "own to see its values")
    return job


def _read_by(found: list[K.Sniffed], reader: str) -> list[K.Sniffed]:
    """The files of ``found`` that ``reader`` (:data:`.kinds.READERS`) reads, in order."""
    return [s for s in found if R.by_name()[s.kind].reader == reader]


def _copy_sources(found: list[K.Sniffed], nsight: Path) -> list[str]:
    nsight.mkdir()
    copied = []
    for s in found:
        name, k = s.path.name, 1
        while (nsight / name).exists():
            name = f"{s.path.stem}-{k}{s.path.suffix}"
            k += 1
        shutil.copy2(s.path, nsight / name)
        copied.append(name)
    return copied


def _write(job: Job, found: list[K.Sniffed], ignored: list[str], out_dir: Path, job_id: str,
           final: Path) -> Path:
    backend = backend_name(job)  # before _manifest moves the provenance's backend entry
    spec, spec_valid, spec_errors = reconstruct_spec(job)
    params = job.params
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".import-{job_id}-", dir=out_dir))
    try:
        folder_as_if_made(tmp)  # readable like a job bundle, not mkdtemp's 0700
        write_table(tmp, C.TABLE_RUNS, job.runs)
        write_table(tmp, C.TABLE_AGGREGATED, job.agg)
        write_table(tmp, C.TABLE_LAUNCHES, job.launches if job.launches is not None
                    else empty_table(C.TABLE_LAUNCHES, params))
        write_table(tmp, C.TABLE_WORK, empty_table(C.TABLE_WORK, params))
        write_table(tmp, C.TABLE_NVML, empty_table(C.TABLE_NVML))
        collectors = job.collectors if job.collectors is not None and len(job.collectors) \
            else empty_table(C.TABLE_COLLECTORS, params)
        write_table(tmp, C.TABLE_COLLECTORS, _typed_collectors(collectors, params))
        _copy_sources(found, tmp / C.NSIGHT_DIR)
        summary = job.provenance.pop("report_summary", None)
        if summary is not None:
            (tmp / C.REPORT_SUMMARY_FILE).write_text(json.dumps(summary, indent=1, default=str),
                                                     encoding="utf-8")
        (tmp / C.SPEC_FILE).write_text(json.dumps(spec, indent=2, default=str), encoding="utf-8")
        finish_bundle(tmp, _manifest(job, backend, spec, spec_valid, spec_errors, found, ignored,
                                      job_id))
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


def _typed_collectors(frame: pd.DataFrame, params: list[str]) -> pd.DataFrame:
    out = frame.copy()
    out[C.VALUE] = pd.to_numeric(out[C.VALUE], errors="coerce").astype("float64")
    for col in (C.CONFIG, C.RUN):
        out[col] = out[col].astype("int64")
    out[C.UNIT] = out[C.UNIT].astype(object)
    return out


def _page_notes(job: Job) -> list[P.Note]:
    """The import's notes as plausibility notes (check ``import``), so that the pages drawing
    the values show them: a partial bundle on every page (warning), a note that starts with a
    metric name on the pages that draw that metric."""
    out = [P.note(P.IMPORT, P.WARNING, text) for text in job.warnings]
    for text in job.notes:
        head = text.split(":", 1)[0]
        metric = head if METRIC_NAME_RE.match(head) else None
        severity = P.WARNING if any(w in text for w in ("left out", "missing", NOT_READ)) \
            else P.INFO
        out.append(P.note(P.IMPORT, severity, text, metric=metric))
    return out


def _sha256(path: Path) -> str:
    """The SHA-256 (hex) of the file at ``path``, read in chunks (a report may be GBs)."""
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _manifest(job: Job, measured_by: str, spec: dict[str, Any], spec_valid: bool,
              spec_errors: list[str], found: list[K.Sniffed], ignored: list[str], job_id: str
              ) -> dict[str, Any]:
    """The import's manifest; ``spec`` is the JSON written (:func:`reconstruct_spec`) and
    ``measured_by`` its backend (:func:`backend_name`)."""
    now = now_iso()
    backend = {"name": measured_by, "measurement": job.provenance.pop(
        "measurement", "imported nsight-python output"), **job.provenance.pop("backend", {})}
    manifest: dict[str, Any] = {
        "job_id": job_id, "status": JobStatus.DONE.value, "spec": spec, "backend": backend,
        "environment": job.environment, "timings": {"imported_at": now},
        "warnings": [*job.warnings, *job.notes],
        IMPORT_NOTES_KEY: job.notes, METRIC_ROLES_KEY: job.roles,
        P.NOTES_KEY: _page_notes(job),
        "provenance": {
            "imported_from": [s.path.name for s in found],
            SOURCE_SHA256_KEY: {s.path.name: _sha256(s.path) for s in found},
            "formats": {s.path.name: s.kind for s in found},
            "ignored": ignored, "date": now, **job.provenance,
            "how_read": how_read(found, job),
            "spec_reconstructed": True,
            "spec_fields_from_files": ["kernels", "configs", "runs", "metrics", "annotations"],
            "spec_fields_defaulted": sorted(k for k in spec if k not in (
                "kernels", "configs", "runs", "metrics", "annotations", "label", "backend")),
            "backend_from_files": measured_by != BACKEND_UNKNOWN,
            "spec_valid": spec_valid, "spec_errors": spec_errors,
            P.RUNS_NOT_ASKED: job.params == [CONFIG_INDEX],
        },
    }
    if job.warnings:
        manifest[PARTIAL_KEY] = job.warnings
    return manifest


__all__ = ["import_nsight_output", "reconstruct_spec", "backend_name", "IMPORT_NOTES_KEY",
           "PARTIAL_KEY", "NOT_READ", "NOT_READ_KEY"]
