"""Nsight Compute CSV exports and console text -> the per-launch table of a job.

Each file is read into an :class:`~.ncu_rows.NcuTable` (:func:`~.ncu_rows.read_export` for
``--csv`` raw and details pages of every layout, :func:`~.ncu_text.read_text` for console text);
here the tables become one job. Values are converted to the bundle's units (ns, byte, Hz,
byte/s, %). Regions are the launches' NVTX ranges where the file has them (innermost, or the
whole stack: :mod:`.nvtx_columns`), else kernel names; configs follow the launch parameters
(:mod:`.regions`). The ``device__attribute_*`` columns go to the environment; rule results to
the bundle's report summary (``report_summary.json``, the Files page).
"""

from __future__ import annotations

import functools

from typing import Any

import pandas as pd

from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.schema import metrics as M
from profiling_worker.bundle.writer import table_columns
from profiling_worker.bundle.errors import ImportFailed
from profiling_worker.bundle.stats.aggregate import aggregate_runs, launches_to_runs
from profiling_worker.bundle.stats.units import normalise_unit
from profiling_worker.importing.ncu_errors import error_warning
from profiling_worker.importing import nvtx_columns as X
from profiling_worker.extract.kernel_regions import region_names
from profiling_worker.importing import regions as G
from profiling_worker.importing.job import NOT_READ, NOT_READ_KEY, Job
from profiling_worker.importing.ncu_rep import CONFIG_INDEX, gpu_environment
from profiling_worker.importing.ncu_rows import NcuTable, read_export
from profiling_worker.importing.ncu_text import read_text
from profiling_worker.importing.same_profile import differ_note, same_values
from profiling_worker.importing.kinds import NCU_DETAILS, NCU_TEXT
from profiling_worker.importing.sniff import Sniffed
from profiling_worker.importing.textcsv import index_column_note, numbers_as_text
from profiling_worker.bundle.schema import backends as B, columns as C

#: Section metrics of the details page (default sets) -> (their Nsight Compute name, the unit
#: that name has after conversion). A display name is taken for the Nsight Compute metric only
#: in that unit: "Memory Throughput" is a % in the Speed Of Light section but byte/second in
#: the Memory Workload Analysis section (ncu 2020.1's details page, import_cases/15).
DISPLAY_NAMES = {
    "Duration": (C.GPU_TIME, "ns"),
    "DRAM Throughput": (M.DRAM_PCT, "%"),
    "Compute (SM) Throughput": (M.SM_PCT, "%"),
    "Memory Throughput": (M.MEMORY_PCT, "%"),
    "SM Frequency": (M.GPC_HZ, "Hz"),
    "DRAM Frequency": (M.DRAM_HZ, "Hz"),
    "Elapsed Cycles": (M.GPC_CYCLES_MAX, "cycle"),
    "Registers Per Thread": (M.REGISTERS_PER_THREAD, "register/thread"),
    "Achieved Occupancy": (M.WARPS_ACTIVE_PCT, "%"),
}


def _nsight_name(metric: str, unit: str) -> str:
    """The Nsight Compute name of a details page's display name in ``unit`` (else as is)."""
    name, wanted = DISPLAY_NAMES.get(metric, (metric, None))
    return name if normalise_unit(1.0, unit)[1] == wanted else metric


def read_table(s: Sniffed) -> NcuTable:
    """The :class:`~.ncu_rows.NcuTable` of one export or console text, metric names mapped
    (:data:`DISPLAY_NAMES`). Parsed once per file version: grouping an upload
    (:func:`launch_ids`, :func:`launch_values`) and importing it (:func:`from_ncu_csv`) read
    the same table, the last :data:`KEPT_TABLES` files' kept; callers do not change it.

    Raises:
        ImportFailed: see :func:`~.ncu_rows.read_export` and :func:`~.ncu_text.read_text`.
    """
    stat = s.path.stat()
    return _read_once(s, stat.st_size, stat.st_mtime_ns)


#: Tables kept for the next reader of the same file (an export's raw and details pages).
KEPT_TABLES = 2


@functools.lru_cache(maxsize=KEPT_TABLES)
def _read_once(s: Sniffed, size: int, mtime_ns: int) -> NcuTable:  # noqa: ARG001 - the key
    table = read_text(s) if s.kind == NCU_TEXT else read_export(s)
    if s.kind in (NCU_DETAILS, NCU_TEXT):
        pairs = table.rows[[C.METRIC, C.UNIT]].astype(str)
        names = {k: _nsight_name(*k) for k in set(zip(pairs[C.METRIC], pairs[C.UNIT]))}
        table.rows[C.METRIC] = [names[k] for k in zip(pairs[C.METRIC], pairs[C.UNIT])]
        twice = table.rows.duplicated(["ID", C.METRIC], keep=False)  # one name, two sections
        if twice.any():
            rows = table.rows
            rows.loc[twice, C.METRIC] = (rows.loc[twice, C.METRIC].astype(str) + " ("
                                         + rows.loc[twice, "Section"].astype(str) + ")")
            table.notes.append(f"{s.path.name}: metric names printed in two sections of one "
                               "launch are named with their section: "
                               + ", ".join(sorted(set(rows.loc[twice, C.METRIC]))[:6]))
    return table


def _launch_rows(s: Sniffed, table: NcuTable) -> tuple[pd.DataFrame, bool]:
    """Numeric launch x metric rows in the bundle's units (non-numeric metrics dropped) and
    whether any value was scaled from a display unit (``usecond``, ``Kbyte``: on a details page
    or in console text the value is rounded as printed, 6.05 us for 6,048 ns)."""
    rows = table.rows
    values = pd.to_numeric(numbers_as_text(rows["Text"], s.decimal, thousands=s.decimal == "."),
                           errors="coerce")
    rows = rows[values.notna()].assign(**{C.VALUE: values[values.notna()]})
    scaled = [normalise_unit(float(v), str(u)) for v, u in zip(rows[C.VALUE], rows[C.UNIT])]
    display = any(float(v) != b for v, (b, _) in zip(rows[C.VALUE], scaled))
    rows[C.VALUE] = [v for v, _ in scaled]
    rows[C.UNIT] = [u or None for _, u in scaled]
    rows["_seq"] = pd.to_numeric(rows["ID"], errors="coerce")
    return rows.drop(columns=[c for c in ("Text", "Section") if c in rows.columns]), display


def _launch_ids(rows: pd.DataFrame) -> frozenset[tuple[str, str]]:
    return frozenset(zip(rows["ID"].astype(str), rows["Kernel Name"].astype(str)))


def launch_ids(s: Sniffed) -> frozenset[tuple[str, str]]:
    """(ID, Kernel Name) of every launch an export lists: exports of one profile (its raw and
    details pages, with or without ``--print-units base``) list the same launches.

    Raises:
        ImportFailed: the export lacks ncu's launch columns.
    """
    return _launch_ids(read_table(s).rows)


def _regions(rows: pd.DataFrame, table: NcuTable, kernel_regions: dict[str, str],
             nvtx: str) -> pd.Series:
    """Each row's region: its launch's NVTX range (``nvtx`` mode), else its kernel's name."""
    by_id = {i: X.region(pp, se, nvtx) for i, (pp, se) in table.ranges.items()}
    named = rows["ID"].astype(str).map(by_id)
    return named.where(named.notna(), rows["Kernel Name"].astype(str).map(kernel_regions))


def launch_values(s: Sniffed) -> tuple[pd.DataFrame, bool]:
    """Numeric launch x metric rows of an export (ID, Kernel Name, Metric, Unit, Value in the
    bundle's units) and whether they are a details page's rounded display values, for
    :func:`~profiling_worker.importing.same_profile.same_values`.

    Raises:
        ImportFailed: the export lacks ncu's launch columns.
    """
    rows, display = _launch_rows(s, read_table(s))
    return rows, _rounded(s, display)


def _rounded(s: Sniffed, display: bool) -> bool:
    """Values rounded as printed: a details page or console text in display units."""
    return display and s.kind in (NCU_DETAILS, NCU_TEXT)


def _same_launches(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    return _launch_ids(a) == _launch_ids(b)


def _how(s: Sniffed, table: NcuTable, display: bool, nvtx: str) -> dict[str, Any]:
    """How one file was read, for the Import page (manifest ``provenance.how_read``)."""
    pp = any(r[0] for r in table.ranges.values())
    se = any(r[1] for r in table.ranges.values())
    ids = table.rows["ID"].astype(str)
    outside = int(ids[~ids.isin(table.ranges.keys())].nunique())
    regions = X.source_label(pp, se)
    if pp or se:
        regions += (f" ({'innermost range' if nvtx == X.INNERMOST else 'whole stack'}); "
                    f"{counted(outside, 'launch', 'launches')} outside every range: kernel names")
    units = ("display units, converted (values rounded as printed)" if display and
             s.kind in (NCU_DETAILS, NCU_TEXT) else "display units, converted" if display
             else "base units (as with --print-units base)")
    return {**table.how, "units": units, "regions": regions,
            "launches": int(ids.nunique()), "rule_results": len(table.rules)}


def _rules_summary(used: list[tuple[Sniffed, NcuTable]]) -> dict[str, Any] | None:
    """A report summary of the files' rule results (report_summary.json), or None."""
    rules = [{**r, "file": s.path.name} for s, t in used for r in t.rules]
    if not rules:
        return None
    kernels = pd.concat([t.rows.drop_duplicates("ID")["Kernel Name"] for _, t in used])
    return {"report": ", ".join(s.path.name for s, _ in used),
            "launches": int(len(kernels)), "kernels": kernels.value_counts().to_dict(),
            "metrics_per_launch": int(used[0][1].rows.groupby("ID", observed=True).size().max()),
            "rule_results": rules[:C.SUMMARY_RULE_LAUNCHES * 20]}


def from_ncu_csv(sources: list[Sniffed], nvtx: str = X.INNERMOST) -> Job:
    """A job from Nsight Compute CSV exports or console text (several exports of one profile
    -- raw and details of the same report -- are read once: the first that has the most
    metrics). ``nvtx``: a launch's region is its innermost NVTX range or the whole stack
    (:mod:`.nvtx_columns`).

    Raises:
        ImportFailed: a file cannot be read (see :func:`read_table`) or holds no numeric metric.
    """
    read = []
    for s in sources:
        table = read_table(s)
        read.append((s, table, *_launch_rows(s, table)))
    read.sort(key=lambda r: -r[2][C.METRIC].nunique())
    used, notes = [read[0]], [n for s in sources if (n := index_column_note(s))]
    unread: list[str] = []
    for item in read[1:]:
        s, rows, first = item[0], item[2], used[0][2]
        rounded = _rounded(used[0][0], used[0][3]) or _rounded(s, item[3])
        if _same_launches(rows, first) and same_values(first, rows, rounded):
            notes.append(f"{s.path.name}: the same launches and values as {used[0][0].path.name} "
                         "(another page or unit setting of one profile); read once")
        elif _same_launches(rows, first):  # another run: never pooled, never dropped
            notes.append(differ_note(s.path.name, used[0][0].path.name, first, rows)
                         + f"; {NOT_READ} here (kept with the files): import it on its own to "
                         "compare the two (the Import page makes a job of each)")
            unread.append(s.path.name)
        else:
            used.append(item)
    if len(used) > 1:  # other launches, not another page of one profile: said, never silent
        notes.append(", ".join(s.path.name for s, *_ in used) + ": other launches in each file "
                     "(separate recordings, e.g. two processes) read into one job one after "
                     "the other; launches of one region name in several files are pooled into "
                     "its configs. Import each on its own (the Import page, or import --each) "
                     "to keep them apart")
    if all(rows.empty for _, _, rows, _ in used):
        raise ImportFailed(f"{sources[0].path.name}: an Nsight Compute CSV with no numeric "
                           "metric value", "export it again with `ncu --csv --page raw`")
    kernel_regions = region_names(pd.concat([r["Kernel Name"] for _, _, r, _ in used]))
    frames = [rows.assign(_seq=rows["_seq"] + k * 1e9,
                          **{C.ANNOTATION: _regions(rows, table, kernel_regions, nvtx)})
              for k, (s, table, rows, _) in enumerate(used)]
    rows = pd.concat(frames, ignore_index=True).rename(
        columns={"Kernel Name": C.KERNEL, "Grid Size": C.GRID, "Block Size": C.BLOCK})
    rows, reading, rule = G.attribute(rows)
    return _job(sources, used, rows, rule, notes + reading, nvtx, unread)


def _job(sources: list[Sniffed], used: list[tuple[Sniffed, NcuTable, pd.DataFrame, bool]],
         rows: pd.DataFrame, rule: str, notes: list[str], nvtx: str,
         unread: list[str]) -> Job:
    params = [CONFIG_INDEX]
    rows[CONFIG_INDEX] = rows[C.CONFIG]
    launches = rows[table_columns(C.TABLE_LAUNCHES, params)].reset_index(drop=True)
    for c in (C.CONFIG, C.RUN, C.LAUNCH):
        launches[c] = launches[c].astype("int64")
    for c in (C.METRIC, C.UNIT, C.ANNOTATION):  # melt leaves categories: text like the report's
        launches[c] = launches[c].astype(object)
    runs = launches_to_runs(launches, params)
    n_configs = int(rows[C.CONFIG].max()) + 1
    device = used[0][1].device
    env = gpu_environment({k: device.get(k) for k in (M.DEVICE_NAME, M.CC_MAJOR, M.CC_MINOR)})
    how = {s.path.name: {**_how(s, t, display, nvtx), "configs": n_configs, "grouping": rule}
           for s, t, _, display in used}
    notes.extend(f"{name}: regions from {h['regions']}; configs ({n_configs} found) told apart "
                 f"by {rule}" for name, h in how.items())
    for s, t, _, display in used:
        notes.extend(t.notes)
        if display and s.kind == NCU_DETAILS:
            notes.append(f"{s.path.name}: the details page's values in display units are "
                         "rounded as printed (6.05 us for 6,048 ns: up to about 0.1 %); `ncu "
                         "--csv --page raw` or `--print-units base` keeps every digit")
    provenance: dict[str, Any] = {
        "measurement": "imported Nsight Compute " + (
            "console text" if all(s.kind == NCU_TEXT for s in sources) else "CSV export"),
        "aggregated": ["computed from the exported launches (combined per run with the "
                       "metric-aware rules, Student-t CI95)"],
        "parameters": params, "ncu_csv": {s.path.name: s.kind for s in sources},
        "how_read": how, "nvtx_regions": nvtx, "backend": {"name": B.NCU},
        **({NOT_READ_KEY: unread} if unread else {})}
    summary = _rules_summary([(s, t) for s, t, _, _ in used])
    if summary:
        provenance["report_summary"] = summary
    return Job(params=params, configs=[{CONFIG_INDEX: i} for i in range(n_configs)], runs=runs,
               agg=aggregate_runs(runs, params), launches=launches,
               kernels=[s.path.stem for s, *_ in used],
               label="imported: " + ", ".join(s.path.name for s in sources),
               environment=env, notes=notes, provenance=provenance,
               warnings=[w for s in sources if (w := error_warning(s.path, s.encoding))])


__all__ = ["from_ncu_csv", "launch_ids", "launch_values", "read_table", "DISPLAY_NAMES"]
