"""The ``.ncu-rep`` part of an import: a report made anywhere -> the per-launch table.

:mod:`profiling_worker.importing.assemble` calls :func:`read_report` when a ``.ncu-rep`` (or
``.ncu-rep.gz``) is among the sources. The report is read with
:func:`~profiling_worker.extract.ncu_report_reader.read_launches` (the only ``ncu_report``
import; no GPU and no ``ncu`` needed). Which metrics are read is bounded: the metrics nsight-python
collected when the CSVs name them, else :data:`REPORT_METRICS` (those missing from the report are
skipped), at most :data:`MAX_METRICS`.

Attribution of launches to configs and runs (:func:`attribute_launches`):

* reports written by this project's worker carry a ``kprof`` NVTX range ``c<config>r<run>``
  around each call, so every launch already has its Config and Run;
* reports made elsewhere have no such range: the reader gives Config ``-1`` and counts launches
  per annotation in Run. When the CSVs say how many runs each config had and how many kernels
  each run launched, the launches are numbered in that order (nsight-python profiles config by
  config, run by run); when the counts do not add up, or with no CSV, the configs stay unknown
  and each launch of an annotation is one run of a single config (the manifest says so).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.schema import metrics as M
from profiling_worker.bundle.errors import ImportFailed
from profiling_worker.importing import ncu_version
from profiling_worker.bundle.inflate import InflateError, plain_file
from profiling_worker.bundle.writer import empty_table, table_columns
from profiling_worker.bundle.schema import columns as C

#: Metrics read from a report when no CSV names them (missing ones are skipped).
REPORT_METRICS = (
    C.GPU_TIME,
    M.SM_PCT,
    M.DRAM_PCT,
    M.MEMORY_PCT,
    M.GPC_HZ,
    M.SM_HZ,
    M.DRAM_HZ,
    M.DRAM_READ,
    M.DRAM_WRITE,
    M.DRAM_BYTES,
    M.DRAM_PEAK_PER_CYCLE,
    M.L2_BYTES,
    M.L1_BYTES,
    M.TENSOR_FP16,
    M.TENSOR_BF16,
    M.TENSOR_TF32,
    M.TENSOR_FP8,
    M.SMSP_INST_EXECUTED,  # work counters: configs by work (importing.launch_runs)
    M.SM_INST_EXECUTED,
    M.FFMA,
    M.FADD,
    M.FMUL,
    M.DFMA,
    M.HFMA,
    M.FFMA_PEAK,
    M.HGMMA_FP16_PEAK,
    M.HGMMA_BF16_PEAK,
    M.REGISTERS_PER_THREAD,
    M.OCCUPANCY_LIMIT_REGISTERS,
    M.WARPS_ACTIVE_PCT,
)
MAX_METRICS = 64
#: Config parameter of a report imported without CSVs: the config index the report records.
CONFIG_INDEX = C.CONFIG_INDEX

ATTRIBUTED_KPROF = "config and run from the worker's kprof NVTX ranges"
ATTRIBUTED_ORDER = "config and run by launch order, checked against the CSVs' run and kernel counts"
ATTRIBUTED_NONE = ("configs unknown (report made elsewhere, no matching CSV): each launch of an "
                   "annotation is one run of config 0")


def is_report(path: Path) -> bool:
    """True for ``*.ncu-rep`` and ``*.ncu-rep.gz``."""
    name = path.name.lower()
    return name.endswith(".ncu-rep") or name.endswith(".ncu-rep.gz")


def read_report(report: Path, metrics: Sequence[str], other_ranges: bool = True
                ) -> tuple[pd.DataFrame, dict[str, Any], dict[str, Any]]:
    """Per-launch rows, device attributes and summary of one report.

    Args:
        report: a ``.ncu-rep`` or ``.ncu-rep.gz`` (inflated to a temporary file, capped).
        metrics: metric names to read (bounded to :data:`MAX_METRICS`).
        other_ranges: keep launches outside nsight-python ranges (Annotation = another NVTX
            range, or None: no range at all).

    Returns:
        (rows, device, summary): rows as :func:`read_launches` gives them (Annotation, Config,
        Run, Launch, Kernel, Grid, Block, Metric, Value, Unit; Config -1 for a report made
        elsewhere), the ``device__attribute_*`` values plus ``missing_metrics``, and
        :func:`~profiling_worker.extract.ncu_report_reader.summarize` of the report.

    Raises:
        ImportFailed: ncu_report is missing, or cannot read the report.
    """
    try:
        from profiling_worker.extract.ncu_report_reader import read_with_summary
    except ImportError as exc:
        raise ImportFailed(f"{report.name}: the ncu_report module is not installed here ({exc})",
                           "install Nsight Compute's Python report interface (`pip install "
                           "ncu-report`, or add `<ncu>/extras/python` to `PYTHONPATH`), or import "
                           "the CSVs only") from exc
    try:
        with plain_file(report) as plain:
            try:
                rows, device, summary = read_with_summary(plain, list(metrics)[:MAX_METRICS],
                                                          other_ranges)
                summary["ncu_version"] = ncu_version.from_report(plain)
            except Exception as exc:  # ncu_report raises plain RuntimeError/OSError/...
                raise ImportFailed(
                    f"{report.name}: ncu_report cannot read it as a report "
                    f"({type(exc).__name__}: {str(exc)[:200]})",
                    "give an unmodified report written by Nsight Compute (a copy that was cut "
                    "short cannot be read)") from exc
    except InflateError as exc:
        raise ImportFailed(exc.message, exc.hint) from exc
    summary["report"] = report.name
    frame = pd.DataFrame(rows, columns=[C.ANNOTATION, C.CONFIG, C.RUN, C.LAUNCH, C.KERNEL,
                                        C.GRID, C.BLOCK, C.METRIC, C.VALUE, C.UNIT])
    return frame, device, summary


def expected_launches(runs: pd.DataFrame, annotation: str) -> list[tuple[int, int, int]]:
    """(config, run, launch) of every launch nsight-python made for ``annotation``, in order."""
    sub = runs[runs[C.ANNOTATION] == annotation]
    per_run = sub.groupby([C.CONFIG, C.RUN], sort=True)[C.KERNELS].max()
    return [(int(c), int(r), k) for c, r, n in per_run.reset_index().itertuples(index=False)
            for k in range(int(n))]


def attribute_launches(rows: pd.DataFrame, params: Sequence[str],
                       configs: Sequence[dict[str, Any]], runs: pd.DataFrame | None
                       ) -> tuple[pd.DataFrame, str]:
    """Give every launch its Config, Run, Launch and config parameter values.

    Args:
        rows: output of :func:`read_report`.
        params: config parameter names.
        configs: one dict per config index (parameter values).
        runs: the runs table from the CSVs (Annotation, Config, Run, Kernels), or None.

    Returns:
        (launches, how): the launches table laid out by ``table_columns("launches", params)``,
        and which of :data:`ATTRIBUTED_KPROF`, :data:`ATTRIBUTED_ORDER`,
        :data:`ATTRIBUTED_NONE` applied. A report whose kprof config indices do not fit
        ``configs`` gives an empty table and an explanation instead.
    """
    cols = table_columns(C.TABLE_LAUNCHES, params)
    if rows.empty:
        return empty_table(C.TABLE_LAUNCHES, params), "the report holds no annotated launch"
    df = rows.copy()
    kprof = df[C.CONFIG] >= 0
    if kprof.any():  # the worker's report: a launch outside every range is never guessed
        df, how = df[kprof].copy(), ATTRIBUTED_KPROF
        if not kprof.all():
            how += (f"; {int((~kprof).sum())} launch rows outside every config/run range "
                    "(another thread, or between runs) left out, not attributed")
        if df[C.CONFIG].max() >= len(configs):
            return (empty_table(C.TABLE_LAUNCHES, params),
                    "not attributed: the report has "
                    f"{counted(int(df[C.CONFIG].max()) + 1, 'config')}, the CSVs "
                    f"{len(configs)}")
    else:
        how = ATTRIBUTED_NONE
        if runs is not None and not runs.empty:
            placed = _place_by_order(df, runs)
            if placed is not None:
                df, how = placed, ATTRIBUTED_ORDER
        if how == ATTRIBUTED_NONE:
            df[C.CONFIG], df[C.LAUNCH] = 0, 0
            if len(configs) != 1:
                return (empty_table(C.TABLE_LAUNCHES, params),
                        "not attributed: the launch counts of the report do not match the "
                        "CSVs' runs x kernels")
    for p in params:
        df[p] = [configs[int(c)].get(p) for c in df[C.CONFIG]]
    for c in (C.CONFIG, C.RUN, C.LAUNCH):
        df[c] = df[c].astype("int64")
    return df[cols].reset_index(drop=True), how


def _place_by_order(df: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame | None:
    """Number the launches of each annotation config by config, run by run; None when the
    launch count of some annotation differs from what the runs table expects."""
    out = []
    for annotation, sub in df.groupby(C.ANNOTATION, sort=False):
        expected = expected_launches(runs, str(annotation))
        order = sorted(sub[C.RUN].unique())
        if len(order) != len(expected):
            return None
        place = dict(zip(order, expected))
        sub = sub.copy()
        triples = [place[r] for r in sub[C.RUN]]
        sub[C.CONFIG] = [t[0] for t in triples]
        sub[C.RUN] = [t[1] for t in triples]
        sub[C.LAUNCH] = [t[2] for t in triples]
        out.append(sub)
    return pd.concat(out, ignore_index=True)


def report_only_configs(rows: pd.DataFrame) -> tuple[list[str], list[dict[str, Any]]]:
    """Parameters and configs of a report imported without CSVs: ``config_index`` = the config
    index the worker's kprof ranges record (0.. ), or one config 0 for a report made elsewhere."""
    if rows.empty or not (rows[C.CONFIG] >= 0).any():
        return [CONFIG_INDEX], [{CONFIG_INDEX: 0}]
    n = int(rows[C.CONFIG].max()) + 1  # launches outside every range (-1) are left out
    return [CONFIG_INDEX], [{CONFIG_INDEX: i} for i in range(n)]


def gpu_environment(device: dict[str, Any]) -> dict[str, Any]:
    """Environment fields known from the report's device attributes."""
    env: dict[str, Any] = {}
    name = device.get(M.DEVICE_NAME)
    if name:
        env["gpu_name"] = str(name)
    major = device.get(M.CC_MAJOR)
    minor = device.get(M.CC_MINOR)
    if major is not None and minor is not None:
        env["compute_capability"] = f"{major}.{minor}"
    if env:
        env["source"] = "device attributes recorded in the .ncu-rep"
    return env


__all__ = ["REPORT_METRICS", "CONFIG_INDEX", "is_report", "read_report", "attribute_launches",
           "expected_launches",
           "report_only_configs", "gpu_environment"]
