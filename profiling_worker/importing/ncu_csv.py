"""Reader of Nsight Compute CSV exports -> the per-launch table of a job.

Both pages ncu writes (checked on ncu 2025.3.1 exports of the H200, tests/fixtures/h200_import):

``--page raw``      one row per launch: ``ID, Process ID, Process Name, Host Name, Kernel Name,
                    Context, Stream, Block Size, Grid Size, Device, CC, <metric>...``; the second
                    row holds each metric's unit (``Kbyte``, ``usecond``, ``%``...; base units
                    with ``--print-units base``).
``--page details``  one row per launch x metric: ``..., Section Name, Metric Name, Metric Unit,
                    Metric Value`` (also ``--metrics`` output printed while profiling).

Values carry thousands separators (``1,980,000``); rows printed live follow ncu's ``==PROF==``
lines and may end with a comma. Units are converted to the bundle's (ns, byte, Hz, byte/s, %).
Regions are kernel names (a CSV export holds no NVTX ranges), configs follow the launch
parameters (:mod:`.regions`). The ``device__attribute_*`` columns go to the environment.
"""

from __future__ import annotations

import pandas as pd

from profiling_worker.schema import metrics as M
from profiling_worker.bundle_writer import table_columns
from profiling_worker.errors import ImportFailed
from profiling_worker.extract.aggregate import aggregate_runs, launches_to_runs
from profiling_worker.extract.units import normalise_unit
from profiling_worker.importing import regions as G
from profiling_worker.importing.job import NOT_READ, NOT_READ_KEY, Job
from profiling_worker.importing.ncu_rep import CONFIG_INDEX, gpu_environment
from profiling_worker.importing.same_profile import differ_note, same_values
from profiling_worker.importing.sniff import NCU_DETAILS, Sniffed
from profiling_worker.importing.textcsv import (METRIC_NAME_RE, index_column_note,
                                                numbers_as_text, parse_csv)
from profiling_worker.schema import backends as B, columns as C

#: Section metrics of the details page (default sets) -> their Nsight Compute names.
DISPLAY_NAMES = {
    "Duration": C.GPU_TIME,
    "DRAM Throughput": M.DRAM_PCT,
    "Compute (SM) Throughput": M.SM_PCT,
    "Memory Throughput": M.MEMORY_PCT,
    "SM Frequency": M.GPC_HZ,
    "DRAM Frequency": M.DRAM_HZ,
    "Elapsed Cycles": M.GPC_CYCLES_MAX,
    "Registers Per Thread": M.REGISTERS_PER_THREAD,
    "Achieved Occupancy": M.WARPS_ACTIVE_PCT,
}
_SKIP_PREFIXES = (M.DEVICE_ATTRIBUTE_PREFIX, "c2clink__", "nvlink__")
_LAUNCH_KEYS = ["ID", "Kernel Name", "Grid Size", "Block Size"]


def _long_rows(s: Sniffed) -> tuple[pd.DataFrame, dict[str, str]]:
    """(ID, Kernel Name, Grid Size, Block Size, Metric, Unit, Text) rows and the device
    attributes of one export."""
    header, frame = parse_csv(s)
    missing = [c for c in _LAUNCH_KEYS if c not in header]
    if missing:
        raise ImportFailed(f"{s.path.name}: an Nsight Compute CSV without column(s) "
                           f"{', '.join(missing)}", "export it again with ncu --csv")
    if s.kind == NCU_DETAILS:
        rows = frame[[*_LAUNCH_KEYS, "Metric Name", "Metric Unit", "Metric Value"]].copy()
        rows.columns = [*_LAUNCH_KEYS, C.METRIC, C.UNIT, "Text"]
        rows[C.METRIC] = rows[C.METRIC].map(lambda m: DISPLAY_NAMES.get(m, m))
        return rows, {}
    units = frame.iloc[0] if frame["ID"].iloc[0] == "" else pd.Series("", index=frame.columns)
    data = frame[frame["ID"] != ""]
    metrics = [h for h in header if METRIC_NAME_RE.match(h)]
    device = {h: str(data[h].iloc[0]) for h in metrics if h.startswith(M.DEVICE_ATTRIBUTE_PREFIX)}
    keep = [h for h in metrics if not h.startswith(_SKIP_PREFIXES)]
    rows = data[[*_LAUNCH_KEYS, *keep]].melt(id_vars=_LAUNCH_KEYS, var_name=C.METRIC,
                                              value_name="Text")
    rows[C.UNIT] = rows[C.METRIC].map(units)
    return rows, device


def _launch_rows(s: Sniffed) -> tuple[pd.DataFrame, dict[str, str], bool]:
    """Numeric launch x metric rows in the bundle's units (non-numeric metrics dropped), the
    device attributes, and whether the values are a details page's rounded display values
    (scaled from a display unit as printed: 6.05 us for 6,048 ns)."""
    rows, device = _long_rows(s)
    values = pd.to_numeric(numbers_as_text(rows["Text"], s.decimal, thousands=s.decimal == "."),
                           errors="coerce")
    rows = rows[values.notna()].assign(**{C.VALUE: values[values.notna()]})
    scaled = [normalise_unit(float(v), str(u)) for v, u in zip(rows[C.VALUE], rows[C.UNIT])]
    rounded = s.kind == NCU_DETAILS and any(float(v) != b for v, (b, _)
                                            in zip(rows[C.VALUE], scaled))  # scaled: not base
    rows[C.VALUE] = [v for v, _ in scaled]
    rows[C.UNIT] = [u or None for _, u in scaled]
    rows["_seq"] = pd.to_numeric(rows["ID"], errors="coerce")
    return rows.drop(columns="Text"), device, rounded


def _launch_ids(rows: pd.DataFrame) -> frozenset[tuple[str, str]]:
    return frozenset(zip(rows["ID"].astype(str), rows["Kernel Name"].astype(str)))


def launch_ids(s: Sniffed) -> frozenset[tuple[str, str]]:
    """(ID, Kernel Name) of every launch an export lists: exports of one profile (its raw and
    details pages, with or without ``--print-units base``) list the same launches.

    Raises:
        ImportFailed: the export lacks ncu's launch columns.
    """
    return _launch_ids(_long_rows(s)[0])


def launch_values(s: Sniffed) -> tuple[pd.DataFrame, bool]:
    """Numeric launch x metric rows of an export (ID, Kernel Name, Metric, Unit, Value in the
    bundle's units) and whether they are a details page's rounded display values, for
    :func:`~profiling_worker.importing.same_profile.same_values`.

    Raises:
        ImportFailed: the export lacks ncu's launch columns.
    """
    rows, _, rounded = _launch_rows(s)
    return rows, rounded


def _same_launches(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    return _launch_ids(a) == _launch_ids(b)


def from_ncu_csv(sources: list[Sniffed]) -> Job:
    """A job from Nsight Compute CSV exports (several exports of one profile -- raw and details
    of the same report -- are read once: the first that has the most metrics).

    Raises:
        ImportFailed: a file lacks ncu's launch columns or holds no numeric metric.
    """
    read = [(s, *_launch_rows(s)) for s in sources]
    read.sort(key=lambda r: -r[1][C.METRIC].nunique())
    used, notes = [read[0]], [n for s in sources if (n := index_column_note(s))]
    unread: list[str] = []
    for item in read[1:]:
        s, rows = item[0], item[1]
        if _same_launches(rows, used[0][1]) and same_values(used[0][1], rows,
                                                            used[0][3] or item[3]):
            notes.append(f"{s.path.name}: the same launches and values as {used[0][0].path.name} "
                         "(another page or unit setting of one profile); read once")
        elif _same_launches(rows, used[0][1]):  # another run: never pooled, never dropped
            notes.append(differ_note(s.path.name, used[0][0].path.name, used[0][1], rows)
                         + f"; {NOT_READ} here (kept with the files): import it on its own to "
                         "compare the two (the Import page makes a job of each)")
            unread.append(s.path.name)
        else:
            used.append(item)
    frames = []
    for k, (s, rows, *_) in enumerate(used):
        frames.append(rows.assign(_seq=rows["_seq"] + k * 1e9))
    rows = pd.concat(frames, ignore_index=True)
    if rows.empty:
        raise ImportFailed(f"{sources[0].path.name}: an Nsight Compute CSV with no numeric "
                           "metric value", "export it again with ncu --csv --page raw")
    names = G.region_names(rows["Kernel Name"])
    rows = rows.rename(columns={"Kernel Name": C.KERNEL, "Grid Size": C.GRID,
                                "Block Size": C.BLOCK})
    rows[C.ANNOTATION] = rows[C.KERNEL].map(names)
    rows, warnings, reading = G.attribute(rows)
    notes += reading
    params = [CONFIG_INDEX]
    rows[CONFIG_INDEX] = rows[C.CONFIG]
    launches = rows[table_columns(C.TABLE_LAUNCHES, params)].reset_index(drop=True)
    for c in (C.CONFIG, C.RUN, C.LAUNCH):
        launches[c] = launches[c].astype("int64")
    for c in (C.METRIC, C.UNIT):  # melt leaves categories: text columns like the report's
        launches[c] = launches[c].astype(object)
    runs = launches_to_runs(launches, params)
    n_configs = int(rows[C.CONFIG].max()) + 1
    device = used[0][2]
    env = gpu_environment({M.DEVICE_NAME:
                           device.get(M.DEVICE_NAME),
                           M.CC_MAJOR:
                           device.get(M.CC_MAJOR),
                           M.CC_MINOR:
                           device.get(M.CC_MINOR)})
    notes.append("regions are kernel names (an ncu CSV export holds no NVTX ranges); configs "
                 f"told apart by launch parameters ({n_configs} found)")
    notes.extend(f"{s.path.name}: the details page's values in display units are rounded as "
                 "printed (6.05 us for 6,048 ns: up to about 0.1 %); `ncu --csv --page raw` or "
                 "`--print-units base` keeps every digit" for s, _, _, rounded in used
                 if rounded)
    return Job(params=params, configs=[{CONFIG_INDEX: i} for i in range(n_configs)], runs=runs,
               agg=aggregate_runs(runs, params), launches=launches,
               kernels=[s.path.stem for s, *_ in used],
               label="imported: " + ", ".join(s.path.name for s in sources),
               environment=env, notes=notes, warnings=warnings,
               provenance={"measurement": "imported Nsight Compute CSV export",
                           "aggregated": ["computed from the exported launches (combined per "
                                          "run with the metric-aware rules, Student-t CI95)"],
                           "parameters": params,
                           "ncu_csv": {s.path.name: s.kind for s in sources},
                           **({NOT_READ_KEY: unread} if unread else {}),
                           "backend": {"name": B.NCU}})


__all__ = ["from_ncu_csv", "launch_ids", "launch_values", "DISPLAY_NAMES"]
