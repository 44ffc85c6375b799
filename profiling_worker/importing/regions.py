"""Regions and configs of launches recorded without nsight-python's bookkeeping (a plain
``ncu -o`` report, an ncu CSV export, a report made by nsight-python elsewhere).

* Region: the NVTX range the launch ran in when there is one, else its kernel's name, shortened
  to the function name (``void at::vectorized_elementwise_kernel<4, ...MulFunctor...>(...)``
  -> ``vectorized_elementwise_kernel``); when two different kernels shorten alike, the first
  template argument token only one of them has is added (``(MulFunctor)``)
  (:mod:`profiling_worker.extract.kernel_regions`).
* Runs and configs: nothing records which run or size a launch belonged to. A run is one
  stretch of the region's launches between launches of other regions; runs with the same
  launches are one config unless their work differs (:mod:`.launch_runs`, which also says
  when the file cannot tell runs from launches). Sizes that change neither the launch
  parameters nor the work cannot be told apart: the manifest and every page say so.
"""

from __future__ import annotations

from collections.abc import Hashable

import pandas as pd

from profiling_worker.bundle.number_text import counted
from profiling_worker.importing import launch_runs as L
from profiling_worker.bundle.schema import columns as C

#: Note for a file read as one config per region.
ONE_CONFIG = ("the runs of each region launch the same kernels with the same launch parameters "
              "and do the same work within the runs' spread, so they are taken as runs of one "
              "config; sizes that change neither cannot be told apart and would be pooled here")
def attribute(launch_rows: pd.DataFrame) -> tuple[pd.DataFrame, list[str], str]:
    """Give launches of unknown config their Config, Run and Launch (rules:
    :mod:`.launch_runs`). Never marks the file partial: a program's regions may have any
    number of runs, so unequal runs per config say nothing about a cut (the readers tell a
    cut from the file's structure).

    Args:
        launch_rows: one row per launch x metric with Annotation (region), Kernel, Grid, Block,
            Metric, Value and ``_seq`` (the launch's position in the recording).

    Returns:
        (rows with Config/Run/Launch set, notes: how runs and configs were read where the file
        leaves a choice, the grouping rule in a line: the columns that decided the configs and
        the outliers kept, for the Import page and the CLI).
    """
    launches = launch_rows.drop_duplicates("_seq").sort_values("_seq")
    seqs = launches["_seq"].tolist()
    kernels = launches[C.KERNEL].astype(str).tolist()
    sigs = list(zip(kernels, launches[C.GRID].astype(str), launches[C.BLOCK].astype(str)))
    work = _work_values(launch_rows, seqs)
    own: dict[Hashable, list[list[int]]] = {}
    for region, stretch in L.stretches(launches[C.ANNOTATION].tolist()):
        own.setdefault(region, []).append(stretch)
    place: dict[object, tuple[int, int, int]] = {}
    notes: list[str] = []
    outliers = 0
    for region, parts in own.items():
        reading = L.read_region(str(region), parts, kernels, sigs, work)
        notes += reading.notes
        outliers += reading.outliers
        runs_seen: dict[int, int] = {}
        for run, config in zip(reading.runs, reading.configs):
            number = runs_seen.get(config, 0)
            runs_seen[config] = number + 1
            place.update((seqs[i], (config, number, k)) for k, i in enumerate(run))
    rows = launch_rows.copy()
    triples = [place[s] for s in rows["_seq"]]
    rows[C.CONFIG] = [t[0] for t in triples]
    rows[C.RUN] = [t[1] for t in triples]
    rows[C.LAUNCH] = [t[2] for t in triples]
    shapes = bool((launches[C.GRID].astype(str) != "").any()
                  or (launches[C.BLOCK].astype(str) != "").any())
    return rows, notes, grouping_rule(work, outliers, shapes)


def grouping_rule(work: dict[str, list[float]], outliers: int, shapes: bool = True) -> str:
    """The rule that grouped a file's launches in a line: ``kernel, grid, block; then
    smsp__inst_executed.sum; 1 outlier run kept in its config`` (``shapes=False``: the file
    gave no grid or block size, so the kernel's name stood in for the launch parameters)."""
    steps = L.evidence(work, shapes)
    told = "; then ".join(steps) + (
        f" (groups more than {L.DURATION_GAP - 1:.0%} apart)" if steps[-1] == C.GPU_TIME else "")
    if len(steps) == 1:
        told += " (no work counter and no duration in the file: sizes cannot be told apart)"
    return f"{told}; {outliers} outlier run{'s' * (outliers != 1)} kept in its config"


def _work_values(rows: pd.DataFrame, seqs: list[object]) -> dict[str, list[float]]:
    """{metric: value per launch, in ``seqs`` order} of the work metrics the rows hold."""
    wanted = rows[rows[C.METRIC].isin([C.GPU_TIME, *L.WORK_COUNTERS])]
    table = wanted.pivot_table(index="_seq", columns=C.METRIC, values=C.VALUE, aggfunc="first")
    table = table.reindex(seqs)
    return {str(m): pd.to_numeric(table[m], errors="coerce").tolist() for m in table.columns}


def cut_short(rows: pd.DataFrame) -> list[str]:
    """Warnings for a recording made by nsight-python (every config of a region has the runs
    the spec asked for) that ends inside a config: the config a region launched last has
    fewer runs than the region's other configs. The region of the recording's last launch
    says it was cut there; another region's says the recording possibly ends at a boundary
    that hides the cut elsewhere (runs of regions interleave)."""
    if rows.empty:
        return []
    ordered = rows.sort_values("_seq")
    final = ordered.iloc[-1][C.ANNOTATION]
    out: list[str] = []
    for region, sub in ordered.groupby(C.ANNOTATION, sort=False):
        last = int(sub.iloc[-1][C.CONFIG])
        runs = sub.groupby(C.CONFIG)[C.RUN].nunique()
        have, full = int(runs.get(last, 0)), int(runs.max())
        if have >= full:
            continue
        where = ("the recording ends inside" if region == final else
                 "the recording possibly ends inside (its last launches come before another "
                 "region's)")
        text = (f"partial: {where} config {last} of {region} ({have} of the "
                f"{counted(full, 'run')} its "
                "other configs have); the file was probably cut short (an interrupted copy), "
                "so that config's values are incomplete")
        out.insert(0, text) if region == final else out.append(text)
    return out


__all__ = ["ONE_CONFIG", "attribute", "grouping_rule", "cut_short"]
