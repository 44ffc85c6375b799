"""Each run's SM cycles, for the gate's cycle check (:mod:`profiling_worker.bundle.gate.verdict`).

Sources, the first both bundles hold wins (the runs table unless said):

1. a cycles counter of the region's kernels: ``gpc__cycles_elapsed.max`` (Nsight Compute);
2. ``duration x SM clock`` with the clock the kernels ran at, per run:
   ``gpc__cycles_elapsed.avg.per_second`` or ``sm__cycles_elapsed.avg.per_second`` (Hz,
   Nsight Compute; collected in a replay pass, possibly not the one that timed the kernel);
3. ``duration x sm_clock`` of the info collectors (MHz, CUPTI and ncu attach; NVML's reading
   taken just before each run, so a clock change inside a run is missed).

The NVML trace (``tables/nvml_trace``) is not used: it samples every 10-50 ms on its own timer,
not per run, and most bundles cannot place their runs on its time axis.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from profiling_worker.bundle.schema import columns as C, metrics as M

#: The collector holding the SM clock (MHz) in ``tables/collectors``.
SM_CLOCK_COLLECTOR = "sm_clock"
#: Source name -> (metric in the runs table, factor to cycles from its value x duration ns);
#: a factor of None: the value is already cycles.
CLOCK_METRICS: dict[str, tuple[str, float | None]] = {
    M.GPC_CYCLES_MAX: (M.GPC_CYCLES_MAX, None),
    M.GPC_HZ: (M.GPC_HZ, 1e-9),
    M.SM_HZ: (M.SM_HZ, 1e-9),
}
COLLECTOR_SOURCE = f"collector {SM_CLOCK_COLLECTOR}"
#: Columns of :func:`cycles_per_run`'s aggregate.
CYCLES = "Cycles"  # prefix: a side's cycles columns are <side>CyclesAvg, ...StdDev, ...Runs
CYCLES_AVG, CYCLES_STD, CYCLES_RUNS = CYCLES + "Avg", CYCLES + C.STD, CYCLES + C.RUNS


def source_words(source: str, mark: Callable[[str], str] = str) -> str:
    """How a run's SM cycles are had from ``source`` (one of :func:`sources`), in words, the
    metric's raw name marked by ``mark`` (``code`` on a page): ``"the SM clock rate
    gpc__cycles_elapsed.avg.per_second (Hz) × the run's duration"``. A rate is no count of
    cycles: "SM cycles from gpc__cycles_elapsed.avg.per_second" read as the counter's own."""
    if source == COLLECTOR_SOURCE:
        return (f"the SM clock of the {mark(SM_CLOCK_COLLECTOR)} info collector (MHz, read by "
                "NVML before the run) × the run's duration")
    metric, factor = CLOCK_METRICS.get(source, (source, None))
    if factor is None:
        return f"the cycles counter {mark(metric)}"
    return f"the SM clock rate {mark(metric)} (Hz) × the run's duration"


def sources(runs: pd.DataFrame, collectors: pd.DataFrame) -> list[str]:
    """The cycle sources (module docstring) one bundle holds, in order of preference."""
    have = set(runs[C.METRIC]) if not runs.empty and C.METRIC in runs else set()
    out = [name for name, (metric, _) in CLOCK_METRICS.items() if metric in have]
    if (not collectors.empty and C.COLLECTOR in collectors
            and (collectors[C.COLLECTOR] == SM_CLOCK_COLLECTOR).any()):
        out.append(COLLECTOR_SOURCE)
    return out


def common_source(base: tuple[pd.DataFrame, pd.DataFrame],
                  cand: tuple[pd.DataFrame, pd.DataFrame]) -> str | None:
    """The first source both bundles hold (``(runs, collectors)`` each), None without one."""
    theirs = set(sources(*cand))
    return next((s for s in sources(*base) if s in theirs), None)


def cycles_per_run(runs: pd.DataFrame, collectors: pd.DataFrame, source: str,
                   keys: list[str], duration: str = C.GPU_TIME) -> pd.DataFrame:
    """Each region x config's cycles over its runs.

    Args:
        runs, collectors: one bundle's tables.
        source: one of :func:`sources`.
        keys: Annotation and the config parameters (or Config).
        duration: the duration metric (ns).

    Returns:
        ``keys`` + CyclesAvg, CyclesStdDev (ddof=1), CyclesRuns (cycles; runs with a duration
        and a clock).
    """
    time = runs[runs[C.METRIC] == duration]
    on = [*dict.fromkeys([*keys, C.CONFIG, C.RUN])]
    if source == COLLECTOR_SOURCE:
        clock = collectors[collectors[C.COLLECTOR] == SM_CLOCK_COLLECTOR]
        both = time[on + [C.VALUE]].merge(
            clock[[C.CONFIG, C.RUN, C.VALUE]].rename(columns={C.VALUE: "_clock"}),
            on=[C.CONFIG, C.RUN])
        cycles = both[C.VALUE].astype(float) * both["_clock"].astype(float) * 1e-3  # ns x MHz
    else:
        metric, factor = CLOCK_METRICS[source]
        clock = runs[runs[C.METRIC] == metric][on + [C.VALUE]].rename(columns={C.VALUE: "_clock"})
        both = time[on + [C.VALUE]].merge(clock, on=on)
        value = both["_clock"].astype(float)
        cycles = value if factor is None else both[C.VALUE].astype(float) * value * factor
    grouped = both.assign(_cycles=cycles).dropna(subset=["_cycles"]).groupby(keys)["_cycles"]
    out = grouped.agg(["mean", "std", "count"]).reset_index()
    return out.rename(columns={"mean": CYCLES_AVG, "std": CYCLES_STD, "count": CYCLES_RUNS})
