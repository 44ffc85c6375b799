"""How each given file of an import was read, one row per file (manifest
``provenance.how_read``, the table the Import page shows).

Readers that know more fill their own rows (:mod:`.ncu_csv`: page, layout, units, NVTX
regions, rule results); every other file gets one here from what the job records.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from profiling_worker.importing import kinds as R, ncu_version, sniff as K
from profiling_worker.importing.job import Job
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import read_manifest

#: The columns of the Import page's table, in order: (manifest key, heading).
FIELDS = (("kind", "Kind"), ("tool_version", "Tool version"), ("page", "Page"),
          ("units", "Units"), ("regions", "Regions from"), ("configs", "Configs found"),
          ("grouping", "Launches grouped by"), ("launches", "Launches"))


#: The Launches cell of an nsight-python CSV: it has none to count.
NO_LAUNCHES = ("- (an nsight-python CSV holds a row per config and run, not its kernel "
               "launches)")


def launch_count(job: Job) -> int | str:
    """The kernel launches of ``job``'s launches table (distinct annotation, config, run and
    launch), "-" where it has none."""
    table = job.launches
    keys = [C.ANNOTATION, C.CONFIG, C.RUN, C.LAUNCH]
    if table is None or table.empty or not set(keys) <= set(table.columns):
        return "-"
    return int(len(table.drop_duplicates(keys)))


def _default(s: K.Sniffed, job: Job, not_read: set[str]) -> dict[str, Any]:
    kind = R.by_name()[s.kind]
    row: dict[str, Any] = {"kind": kind.words, "configs": len(job.configs)}
    if kind.reader == R.NSIGHT_CSVS:
        row.update(tool_version="nsight-python " + str(job.provenance.get(
            "nsight_python_version", "unknown")), page="-",
                   units="the file's Unit column (0.9.x: ns)", regions="nsight-python annotations",
                   grouping="nsight-python's own records (config parameters and runs)",
                   launches=NO_LAUNCHES)
    elif kind.reader == R.NCU_REPORTS:
        launches = job.provenance.get("launches") or {}
        versions = job.provenance.get(ncu_version.PROVENANCE_KEY) or {}
        row.update(tool_version=ncu_version.label(versions.get(s.path.name))
                   if s.path.name in versions else "-", page="-",
                   units="base units (ncu_report)",
                   regions="nsight-python annotations, else NVTX ranges, else kernel names ("
                           + str(launches.get("attribution", "")) + ")",
                   grouping=launches.get("grouping", "-"), launches=launch_count(job))
    elif kind.reader == R.NCU_EXPORTS:
        row.update(regions="read once: the same launches as another file of this import")
    if s.path.name in not_read or kind.reader == R.NOT_READ:
        row.update(configs="-", regions="not read", launches="-")
    return row


def how_read(found: list[K.Sniffed], job: Job) -> dict[str, dict[str, Any]]:
    """``{file name: {kind, tool_version, page, units, regions, configs, ...}}`` for every file
    of ``found``: the reader's own row where it wrote one (``job.provenance["how_read"]``),
    else one made from the job's provenance."""
    own = job.provenance.get("how_read") or {}
    not_read = set(job.provenance.get("not_read") or ())
    return {s.path.name: own.get(s.path.name) or _default(s, job, not_read) for s in found}


def grouping_rules(bundle: Path) -> dict[str, str]:
    """``{file name: the rule that grouped its launches}`` of a written bundle (manifest
    ``provenance.how_read``), for the CLI's result event."""
    rows = (read_manifest(bundle).get("provenance") or {}).get("how_read") or {}
    return {name: str(row["grouping"]) for name, row in rows.items() if row.get("grouping")}


__all__ = ["FIELDS", "how_read", "grouping_rules"]
