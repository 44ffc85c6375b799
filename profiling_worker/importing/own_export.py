"""A report and a CSV export (or console text) of that same report, uploaded together: the
export repeats the report's values, so they are one profile -- one job naming both files, the
values read once from the report (issue 35; before, two identical jobs and no note). Two runs
of one program list the same launches with other values and stay apart, ready for Compare.

Launches are matched by position: ncu numbers an export's launches (``ID``) in the report's
order from 0. Values are compared on the metrics both hold of those the report reader reads
(:data:`~profiling_worker.importing.ncu_rep.REPORT_METRICS`), within the export's printed
rounding (:func:`~profiling_worker.importing.same_profile.same_values`).
"""

from __future__ import annotations

from pathlib import Path

from profiling_worker.importing import ncu_rep as R
from profiling_worker.importing.ncu_csv import launch_values
from profiling_worker.importing.own_process import forked
from profiling_worker.importing.same_profile import same_values
from profiling_worker.importing.sniff import Sniffed
from profiling_worker.bundle.schema import columns as C


def export_of(report: Path, export: Sniffed) -> bool:
    """True when ``export`` holds the launches and values of ``report`` (module doc); False
    when either cannot be read (their own imports say why)."""
    try:
        rows, rounded = launch_values(export)
        held = set(rows[C.METRIC])
        names = [m for m in R.REPORT_METRICS if m in held]  # ones the report reader reads
        if not names:
            return False
        got, _, _ = R.read_report(report, tuple(names))
    except Exception:  # any reading fault: not paired; each file's import names the fault
        return False
    if got.empty:
        return False
    # a launch's position: its metric rows come together, a new launch where the key changes
    keys = got[[C.ANNOTATION, C.CONFIG, C.RUN, C.LAUNCH, C.KERNEL]].fillna("").astype(str)
    got["ID"] = ((keys != keys.shift()).any(axis=1).cumsum() - 1).astype(str)
    if got["ID"].nunique() != rows["ID"].nunique():
        return False
    kernels = rows.drop_duplicates("ID").set_index(rows.drop_duplicates("ID")["ID"].astype(str))
    got["Kernel Name"] = got["ID"].map(kernels["Kernel Name"].astype(str))
    return same_values(got, rows.assign(ID=rows["ID"].astype(str),
                                        **{"Kernel Name": rows["Kernel Name"].astype(str)}),
                       rounded)


def export_of_forked(report: Path, export: Sniffed) -> bool:
    """:func:`export_of` in a forked child: ncu_report keeps a report's launches until its
    process ends, and the grouping runs before any import."""
    return forked(lambda: export_of(report, export), lambda _code: False)


__all__ = ["export_of", "export_of_forked"]
