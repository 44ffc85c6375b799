"""The stopping rule of ``runs: "auto"`` (bundle/schema/run_target.py), driven from a backend's run
loop.

**Interval.** A config's precision is the relative CI95 half-width of the mean of each
annotation's per-run duration (the launches of one run add up), ``100 t(0.975, n-1) s /
(sqrt(n) |mean|)`` %: Student's t interval of
:data:`~profiling_worker.bundle.schema.intervals.CI_METHOD`, computed by
:func:`~profiling_worker.bundle.schema.intervals.ci95_half_width`, the same function the aggregated
table's CI95 columns come from. A config's width is its widest annotation's.

**Rule.** (1) Every config runs ``min_runs`` times, in order. (2) While budget is left, the open
config (target not met, fewer than ``max_runs``) with the widest interval gets a batch of runs:
as many as the interval's 1/sqrt(n) shrinkage says it still needs, ``n (w / target)^2 - n``, at
most doubling its runs (a spread estimated from few runs is itself noisy) and no more than the
budget left pays for at its measured seconds per run. A config stops as soon as its width is at
most the target.

**Anchor.** nvbench's ``stdrel`` criterion (NVIDIA/nvbench nvbench/detail/stdrel_criterion.cxx)
stops one benchmark once the relative std dev of its samples is below ``max-noise`` (0.5 %) after
at least ``min-time`` (0.5 s) of samples, or once that noise estimate has itself stopped moving
(relative std dev of the last estimates < 5 %), with a timeout. Here the target is on the interval
of the mean rather than on the spread of samples (a noisy kernel can still be known to 0.5 % with
enough runs), runs are counted rather than seconds (every run is one call of the config under the
profiler), and one budget is shared by all configs of the job, spent where it narrows the widest
interval, instead of one timeout per benchmark.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.intervals import CI_METHOD, ci95_half_width
from profiling_worker.bundle.schema.run_target import RunTarget

#: ``measure(config, runs)``: run config ``config`` ``runs`` more times; returns annotation ->
#: the per-run values (ns) of those runs, in run order.
Measure = Callable[[int, int], Mapping[str, Sequence[float]]]
#: Why a config stopped (the manifest's ``auto_runs.configs[].stopped``).
MET, AT_MAX, OUT_OF_BUDGET = "target met", "max_runs reached", "budget spent"
NO_VALUES = "no values measured"  # its min_runs gave no launch in any annotation


def rel_ci95_pct(values: Sequence[float]) -> float:
    """Relative CI95 half-width of the mean of ``values`` (% of the mean); inf below 2 values or
    for a zero mean with a spread, 0 when every value is 0."""
    n = len(values)
    if n < 2:
        return math.inf
    arr = np.asarray(values, dtype="float64")
    mean, std = float(arr.mean()), float(arr.std(ddof=1))
    half = float(ci95_half_width(std, n))
    if mean == 0:
        return 0.0 if half == 0 else math.inf
    return 100.0 * half / abs(mean)


@dataclass
class ConfigRuns:
    """What the rule knows of one config: its per-run values and the seconds spent on them."""

    config: int
    values: dict[str, list[float]] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def runs(self) -> int:
        """Runs measured (the fewest of any annotation; 0 before the first)."""
        return min((len(v) for v in self.values.values()), default=0)

    def width_pct(self) -> float:
        """The widest relative CI95 half-width of its annotations, % (inf before 2 runs)."""
        return max((rel_ci95_pct(v) for v in self.values.values()), default=math.inf)

    def add(self, measured: Mapping[str, Sequence[float]], seconds: float) -> None:
        """Append one batch's per-run values and the wall-clock seconds it took."""
        for annotation, values in measured.items():
            self.values.setdefault(annotation, []).extend(values)
        self.seconds += seconds


def next_batch(state: ConfigRuns, target: RunTarget, seconds_left: float) -> int:
    """Runs to give ``state`` next (>= 1, see the module docstring): the projected shortfall
    ``ceil(n (w / target)^2) - n``, at most ``n``, at most ``max_runs - n``, and at most what
    ``seconds_left`` pays for at the config's seconds per run so far."""
    n, width = state.runs, state.width_pct()
    need = n if math.isinf(width) else math.ceil(n * (width / target.rel_ci95_pct) ** 2) - n
    batch = min(max(need, 1), n, target.max_runs - n)
    if state.seconds > 0 and n:
        batch = min(batch, max(1, int(seconds_left / (state.seconds / n))))
    return max(batch, 1)


def run_adaptive(target: RunTarget, n_configs: int, measure: Measure,
                 clock: Callable[[], float] = time.perf_counter) -> list[ConfigRuns]:
    """Measure configs ``0..n_configs-1`` by the rule of the module docstring.

    Args:
        target: the job's ``run_target``.
        n_configs: number of configs.
        measure: runs a batch of one config (:data:`Measure`); its wall-clock time counts
            against ``target.budget_s``.
        clock: seconds (tests pass their own).

    Returns:
        One :class:`ConfigRuns` per config, in config order.
    """
    start = clock()
    states = [ConfigRuns(i) for i in range(n_configs)]

    def batch(state: ConfigRuns, runs: int) -> None:
        t0 = clock()
        measured = measure(state.config, runs)
        state.add(measured, clock() - t0)

    for state in states:
        batch(state, target.min_runs)
    while (left := target.budget_s - (clock() - start)) > 0:
        open_ = [s for s in states  # a config with no values has nothing to narrow
                 if s.runs and s.width_pct() > target.rel_ci95_pct and s.runs < target.max_runs]
        if not open_:
            break
        widest = max(open_, key=ConfigRuns.width_pct)
        batch(widest, next_batch(widest, target, left))
    return states


def summary(states: Sequence[ConfigRuns], target: RunTarget) -> dict[str, Any]:
    """The manifest's ``backend.auto_runs``: the target, the interval method and, per config,
    ``{config, runs, rel_ci95_pct, target_met, stopped, seconds}`` (``stopped``: :data:`MET`,
    :data:`AT_MAX`, :data:`OUT_OF_BUDGET` or :data:`NO_VALUES`; ``rel_ci95_pct`` None before 2
    runs)."""
    rows = []
    for s in states:
        width = s.width_pct()
        met = width <= target.rel_ci95_pct
        rows.append({C.CONFIG: s.config, "runs": s.runs,
                     "rel_ci95_pct": None if math.isinf(width) else round(width, 4),
                     "target_met": met,
                     "stopped": MET if met else NO_VALUES if not s.runs else AT_MAX
                     if s.runs >= target.max_runs else OUT_OF_BUDGET,
                     "seconds": round(s.seconds, 4)})
    return {"target": target.to_json(), "method": CI_METHOD, "configs": rows,
            "seconds": round(sum(s.seconds for s in states), 4)}


def region_values(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[float]]:
    """Per-run values of each annotation from per-launch rows (``Annotation``, ``Run``,
    ``Value``; one metric, the backend's duration): the launches of a run add up, runs in
    order."""
    sums: dict[str, dict[int, float]] = {}
    for row in rows:
        per_run = sums.setdefault(str(row[C.ANNOTATION]), {})
        per_run[row[C.RUN]] = per_run.get(row[C.RUN], 0.0) + float(row[C.VALUE])
    return {a: [v for _r, v in sorted(runs.items())] for a, runs in sums.items()}


def merge_summaries(parts: Sequence[tuple[Mapping[str, Any], Sequence[int]]]) -> dict[str, Any]:
    """One :func:`summary` of a sweep split into tasks: ``parts`` is (a task's summary, the
    sweep config index of each of its configs), in task order; each task had the whole
    ``budget_s`` to itself (``budget_per_task`` says so)."""
    first = parts[0][0]
    rows = [{**row, C.CONFIG: int(indices[int(row[C.CONFIG])])}
            for summ, indices in parts for row in summ.get("configs") or ()]
    return {**first, "configs": sorted(rows, key=lambda r: int(r[C.CONFIG])),
            "seconds": round(sum(float(s.get("seconds") or 0) for s, _i in parts), 4),
            "budget_per_task": len(parts) > 1}
