"""The reference kernel of a sweep: a GPU slower than its peers is flagged.

Every task times the same short kernel first (``reference/`` of its attempt folder). Tasks on
GPUs of one model are peers. A task's GPU is flagged slow when its reference time is above the
median of its peers by more than their spread, where the spread is the larger of

* 3 x the peers' robust standard deviation, 1.4826 x MAD (the normal-consistent median
  absolute deviation: ``scipy.stats.median_abs_deviation(scale="normal")``), and
* the half-widths of the task's own CI95 plus the peers' median CI95 half-width (two
  measurements whose intervals overlap are not told apart).

A model with fewer than 3 tasks has too few peers to judge; nothing is flagged there. On the
``cpu`` backend the reference kernel runs on the host, so a flagged task names a slow or busy
host, not a GPU.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.plausibility import SLOW_GPU
from profiling_worker.sweep.task import REFERENCE_DIR

MIN_PEERS = 3  # tasks of one model needed before any is judged
SPREAD_SIGMAS = 3.0


def reference_time(attempt: Path) -> dict[str, float] | None:
    """The reference kernel's AvgValue and CI95 bounds (ns) of an attempt, or None when it
    was not run or did not finish."""
    import pyarrow.parquet as pq

    path = attempt / REFERENCE_DIR / C.TABLES_DIR / f"{C.TABLE_AGGREGATED}.parquet"
    try:
        frame = pq.read_table(path, use_threads=False).to_pandas()
    except (OSError, ValueError):
        return None
    if frame.empty:
        return None
    row = frame.iloc[0]
    return {"avg_ns": float(row[C.AVG]), "ci95_lower_ns": float(row[C.CI95_LOWER]),
            "ci95_upper_ns": float(row[C.CI95_UPPER]), "runs": int(row[C.NUM_RUNS])}


def _half_width(ref: Mapping[str, float]) -> float:
    width = (ref["ci95_upper_ns"] - ref["ci95_lower_ns"]) / 2
    return float(width) if np.isfinite(width) else 0.0


def slow_tasks(entries: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Tasks whose GPU is slower than its peers (see the module's rule).

    Args:
        entries: one per task with ``task``, ``gpu_model`` and ``reference``
            (:func:`reference_time`'s dict, or None).

    Returns:
        task name -> ``{"avg_ns", "peers_median_ns", "threshold_ns", "peers"}`` for each
        flagged task.
    """
    # here, not at the top: the dashboard imports this module with its job panel, and
    # scipy.stats (about a second) held up its first page load (issue 37)
    from scipy.stats import median_abs_deviation

    by_model: dict[str, list[Mapping[str, Any]]] = {}
    for e in entries:
        if e.get("reference"):
            by_model.setdefault(str(e.get("gpu_model")), []).append(e)
    flagged: dict[str, dict[str, Any]] = {}
    for group in by_model.values():
        if len(group) < MIN_PEERS:
            continue
        for e in group:
            peers = [p["reference"] for p in group if p is not e]
            times = np.array([p["avg_ns"] for p in peers])
            median = float(np.median(times))
            robust = float(median_abs_deviation(times, scale="normal"))
            overlap = (_half_width(e["reference"])
                       + float(np.median([_half_width(p) for p in peers])))
            threshold = median + max(SPREAD_SIGMAS * robust, overlap)
            if e["reference"]["avg_ns"] > threshold:
                flagged[str(e["task"])] = {"avg_ns": e["reference"]["avg_ns"],
                                           "peers_median_ns": median,
                                           "threshold_ns": threshold, "peers": len(peers)}
    return flagged


def slow_notes(flagged: Mapping[str, Mapping[str, Any]], where: Mapping[str, Mapping[str, Any]],
               on_gpu: bool = True) -> list[dict[str, Any]]:
    """One plausibility note (check :data:`SLOW_GPU`, warning) per config of a flagged task.

    Args:
        flagged: :func:`slow_tasks`'s answer.
        where: task name -> ``{"configs": [...], "node": str, "gpu_uuid": str | None}``.
        on_gpu: the sweep's backend runs on a GPU. False (the ``cpu`` backend): the reference
            kernel ran on the host's CPU, so a slow task says the host was busy or slower,
            never that a GPU was slow.
    """
    notes = []
    for task, f in flagged.items():
        info = where[task]
        if on_gpu:
            where_ran = f"a slow GPU: task {task} on {info.get('node')} " \
                        f"({info.get('gpu_uuid') or 'the host'})"
            cause = "compare it with care"
        else:
            where_ran = f"a slow or busy host: task {task} on {info.get('node')} (cpu backend)"
            cause = "other work on the host's CPUs, or a slower CPU; compare it with care"
        for config in info["configs"]:
            notes.append({"check": SLOW_GPU, "severity": "warning", "scope": "config",
                          "annotation": None, "config": int(config), "metric": None,
                          "message": f"config {config} ran on {where_ran} timed the reference "
                          f"kernel at {f['avg_ns']:.0f} ns, its {f['peers']} peers' median is "
                          f"{f['peers_median_ns']:.0f} ns (flagged above "
                          f"{f['threshold_ns']:.0f} ns): {cause}"})
    return notes
