"""Several reports and tables in one import: which given files make one bundle, and importing
each such group as a bundle of its own (``python -m profiling_worker import --each``).

Files belong together when the importer reads them as one job:

* the files nsight-python writes for one call of a decorated function -- ``profiled_data-``,
  ``processed_data-`` (CSV), ``ncu-output-`` (report, log) with the same ``<function>-<id>``,
  any ``output_prefix`` (:func:`~profiling_worker.importing.nsight_csv.nsight_call`): the
  processed file is paired with the per-run file, the report adds its launches;
* a processed_data file under another name and the profiled_data file it was written from, by
  content (:func:`~profiling_worker.importing.csv_job.written_from`);
* Nsight Compute CSV exports of one profile (its raw and details pages: the same launches
  with the same values, :func:`~profiling_worker.importing.same_profile.same_values`), which
  the importer reads once, and with them the report they were exported from
  (:mod:`~profiling_worker.importing.own_export`); two runs of one program list the same launches
  with other values
  and stay two groups, ready for Compare.

A folder is the files in it (as ``import`` reads a folder): several nsight-python calls in one
folder make a bundle each; files of no supported kind in it are left out and listed.

Every other file -- a report or export of its own, an nsight-python CSV under another name that
pairs with no other, a file of no supported kind -- is a group of one, so that its import (or its
error, naming it)
is its own and a bad file never stops the others.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterator, Sequence
from pathlib import Path
from typing import Any

from profiling_worker.bundle.errors import ImportFailed, ImportInternalError, WorkerError
from profiling_worker.importing import kinds as R, sniff as K
from profiling_worker.importing.assemble import import_nsight_output
from profiling_worker.importing.csv_job import written_from
from profiling_worker.importing.ncu_csv import launch_ids, launch_values
from profiling_worker.importing.same_profile import same_values
from profiling_worker.importing.how_read import grouping_rules
from profiling_worker.importing.nsight_csv import nsight_call
from profiling_worker.importing.own_export import export_of_forked
from profiling_worker.importing.nvtx_columns import INNERMOST
from profiling_worker.importing.own_process import forked
from profiling_worker.bundle.schema.manifest import JobStatus



def _sniffed(path: Path) -> K.Sniffed | None:
    try:
        return K.sniff(path)
    except ImportFailed:  # unreadable: its own import says so
        return None


def _group_key(path: Path, found: K.Sniffed | None) -> Hashable:
    """What ties ``path`` to other files: its nsight-python call, the launches of an ncu CSV
    export, or the path itself (a group of one)."""
    if found is None:
        return path
    # ncu CSV exports go by their launches; nsight-python's files, reports and logs by call
    if found.kind not in R.read_by(R.NCU_EXPORTS):
        call = nsight_call(path)
        return ("nsight-python call", call) if call else path
    try:
        return ("ncu launches", launch_ids(found))
    except Exception:  # any reading fault: the file stands alone and its import names it
        return path


def _pairs(agg: K.Sniffed, group: list[Path], kinds: dict[Path, K.Sniffed]) -> bool:
    """True when ``agg`` was written from the runs of a profiled_data file of ``group``."""
    raws = [kinds[p] for p in group if p in kinds and kinds[p].kind == R.NSIGHT_RAW]
    try:
        return any(written_from(agg, raw) for raw in raws)
    except Exception:  # any reading fault: no pairing; the import names the fault
        return False


def _pair_by_content(groups: list[list[Path]], kinds: dict[Path, K.Sniffed]
                     ) -> list[list[Path]]:
    """A group of processed_data files only (renamed, or their profiled_data file renamed)
    joins the group of the profiled_data file they were written from, as the importer pairs
    them (:func:`~profiling_worker.importing.csv_job.written_from`)."""
    out = list(groups)
    for group in groups:
        if not all(p in kinds and kinds[p].kind == R.NSIGHT_AGG for p in group):
            continue
        home = next((g for g in out if g is not group and _pairs(kinds[group[0]], g, kinds)),
                    None)
        if home is not None:
            home.extend(group)
            out = [g for g in out if g is not group]
    return out


def _by_values(group: list[Path], kinds: dict[Path, K.Sniffed]) -> list[list[Path]]:
    """A group of ncu CSV exports of the same launches cut into profiles: an export joins the
    first profile whose values it repeats (:func:`same_values`), else starts one."""
    out: list[tuple[tuple[Any, bool] | None, list[Path]]] = []
    for path in group:
        try:
            rows, rounded = launch_values(kinds[path])
        except Exception:  # any reading fault: alone; its import names the fault
            out.append((None, [path]))
            continue
        home = next((g for r, g in out if r is not None and
                     same_values(r[0], rows, r[1] or rounded)), None)
        if home is None:
            out.append(((rows, rounded), [path]))
        else:
            home.append(path)
    return [g for _, g in out]


def _files(sources: Sequence[Path]) -> tuple[list[Path], list[str]]:
    """Folders replaced by their files of a supported kind; notes on the files left out."""
    files: list[Path] = []
    ignored: list[str] = []
    for path in map(Path, sources):
        if not path.is_dir():
            files.append(path)
            continue
        found, left = K.gather([path])
        files += [s.path for s in found]
        ignored += [f"{path.name}/{note}" for note in left]
    return files, ignored


def group_sources(sources: Sequence[Path]) -> list[list[Path]]:
    """The given files (folders: their files) in groups that each make one bundle (rules in
    the module docstring), groups and files in the order given.

    Raises:
        ImportFailed: a folder that cannot be listed. Nothing for the files' content: a file
            that cannot be read is a group of one.
    """
    groups: dict[Hashable, list[Path]] = {}
    kinds: dict[Path, K.Sniffed] = {}
    for path in _files(sources)[0]:
        found = _sniffed(path)
        if found is not None:
            kinds[path] = found
        groups.setdefault(_group_key(path, found), []).append(path)
    split = [part for key, group in groups.items()
             for part in (_by_values(group, kinds) if isinstance(key, tuple) and
                          key[0] == "ncu launches" and len(group) > 1 else [group])]
    return _join_exports(_pair_by_content(split, kinds), kinds)


def _join_exports(groups: list[list[Path]], kinds: dict[Path, K.Sniffed]) -> list[list[Path]]:
    """A group of ncu CSV exports that repeat a report's values (exported from it) joins that
    report's group (:func:`~profiling_worker.importing.own_export.export_of`): one profile,
    one bundle naming both."""
    reports = [g for g in groups if len(g) == 1 and g[0] in kinds
               and kinds[g[0]].kind == R.NCU_REPORT]
    out = list(groups)
    for group in groups:
        if not reports or not all(p in kinds and kinds[p].kind in R.read_by(R.NCU_EXPORTS)
                                  for p in group):
            continue
        home = next((g for g in reports if export_of_forked(g[0], kinds[group[0]])), None)
        if home is not None:
            home.extend(group)
            out = [g for g in out if g is not group]
    return out


def _import_group(files: list[Path], out_dir: Path, job_id: str, reserved_ids: Collection[str],
                  nvtx: str, ignored: list[str]) -> dict[str, Any]:
    """The event of one group's import (see :func:`import_each`)."""
    names = [p.name for p in files]
    try:
        path = import_nsight_output(files, out_dir, job_id, reserved_ids=reserved_ids,
                                    nvtx=nvtx, ignored=ignored)
    except WorkerError as exc:
        return {"event": "error", **exc.to_event_fields(), "files": names, "job_id": job_id}
    except Exception as exc:  # a bug here must not cost the other groups their import
        fault = ImportInternalError(
            f"the importer failed on {', '.join(names)[:200]} ({type(exc).__name__}: "
            f"{str(exc)[:300]}); this is a fault of the importer, not of the files",
            "report this with these files; the other files of the import have their "
            "own results")
        return {"event": "error", **fault.to_event_fields(), "files": names, "job_id": job_id}
    return {"event": "result", "status": JobStatus.DONE.value, "bundle": str(path),
            "files": names, "grouping": grouping_rules(path)}


def _in_own_process(args: tuple[Any, ...]) -> dict[str, Any]:
    """:func:`_import_group` in a forked child (:func:`~.own_process.forked`): three bundled
    H200 reports imported in one process left it 186, 269, 326 MiB above its start; one child
    each costs the largest one's alone."""
    names = [p.name for p in args[0]]

    def died(code: int | None) -> dict[str, Any]:
        fault = ImportInternalError(
            f"the import of {', '.join(names)[:200]} ended without a result (its process "
            f"exited with {code}; killed, e.g. out of memory?)",
            "import these files on their own, on a machine with more memory; the other "
            "files of the import have their own results")
        return {"event": "error", **fault.to_event_fields(), "files": names, "job_id": args[2]}

    return forked(lambda: _import_group(*args), died)


def import_each(sources: Sequence[Path], out_dir: Path, base_id: str, *,
                reserved_ids: Collection[str] = (), nvtx: str = INNERMOST
                ) -> Iterator[dict[str, Any]]:
    """Import every group of :func:`group_sources` as its own bundle ``out_dir/<base_id>``
    (one group) or ``out_dir/<base_id>-<k>`` (group k of several, from 1), each of several
    groups in a process of its own (:func:`_in_own_process`: the memory of one group's reports
    is returned before the next).

    Yields:
        One event per group, in order, with ``files`` (the names in the group): ``result``
        (``status``, ``bundle``: the bundle directory) or ``error`` (``kind``, ``message``,
        ``hint``, ``job_id``). A failed group never stops the next one.
    """
    groups = group_sources(sources)
    ignored = _files(sources)[1]
    for k, files in enumerate(groups, 1):
        args = (files, out_dir, base_id if len(groups) == 1 else f"{base_id}-{k}",
                reserved_ids, nvtx, ignored)
        yield _import_group(*args) if len(groups) == 1 else _in_own_process(args)


__all__ = ["group_sources", "import_each"]
