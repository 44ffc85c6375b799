"""The kernel's own timeline: the PM-sampling series of one launch (the worker's ``pmsampling``
answer, :mod:`profiling_worker.extract.pm_sampling`) as frames for the deep-dive page. Pure.

Each series is sorted into one chart panel by its name and unit: **throughput** (% of peak:
``*pct_of_peak*``), **occupancy** (``*warps_active*``), **warp stalls** (``*stalled*``),
**hit rates** (%) and **per-sample counts** (cycles, sectors, blocks, instructions per cycle:
the counter accumulated over one sample interval). A panel without series is named as absent,
never drawn as zeros.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from profiling_worker.bundle.schema import columns as C

from app.core import frame_columns as F

THROUGHPUT, OCCUPANCY, STALLS = F.PM_THROUGHPUT, F.PM_OCCUPANCY, F.PM_STALLS
HIT_RATES, COUNTS, PANELS = F.PM_HIT_RATES, F.PM_COUNTS, F.PM_PANELS
TIME, TIME_FIRST, PANEL = F.PM_TIME_NS, F.PM_TIME_FIRST_NS, F.PM_PANEL
METRIC, UNIT, VALUE = C.METRIC, C.UNIT, C.VALUE


@dataclass(frozen=True)
class Timeline:
    """One launch's samples: ``frame`` long (Time, Metric, Panel, Unit, Value), ``time`` the
    name of its time column (from the kernel's start, or from the first sample when the report
    has no workload timestamps), ``interval_ns``, ``duration_ns`` (None: unknown), ``dropped``
    (samples outside the kernel, per series), ``missing`` (panels without any series)."""

    frame: pd.DataFrame
    time: str
    interval_ns: float
    duration_ns: float | None
    dropped: int
    missing: tuple[str, ...]


def panel_of(metric: str, unit: str) -> str:
    """The panel a series belongs to (module docstring)."""
    if "stalled" in metric:
        return STALLS
    if "warps_active" in metric:
        return OCCUPANCY
    if unit == "%":
        return THROUGHPUT if "pct_of_peak" in metric else HIT_RATES
    return COUNTS


def timeline(rows: Sequence[Mapping[str, Any]], launch_id: int) -> Timeline | None:
    """The launch's series, or None when it has none (no PmSampling section collected).

    Args:
        rows: the ``pm_sampling`` rows (``launch_id``, ``metric``, ``unit``, ``interval_ns``,
            ``origin``, ``duration_ns``, ``dropped``, ``t_ns``, ``values``).
    """
    mine = [r for r in rows if int(r.get("launch_id", -1)) == launch_id and r.get("t_ns")]
    if not mine:
        return None
    from_start = all(r.get("origin") == "kernel start" for r in mine)
    time = TIME if from_start else TIME_FIRST
    parts = [pd.DataFrame({time: r["t_ns"], METRIC: r["metric"],
                           PANEL: panel_of(str(r["metric"]), str(r["unit"])),
                           UNIT: r["unit"], VALUE: r["values"]}) for r in mine]
    frame = pd.concat(parts, ignore_index=True).astype({time: "int64", VALUE: "float64"})
    durations = {r.get("duration_ns") for r in mine}
    duration = durations.pop() if len(durations) == 1 and from_start else None
    present = set(frame[PANEL])
    return Timeline(frame, time, float(mine[0].get("interval_ns") or 0.0),
                    float(duration) if duration is not None else None,
                    int(max(int(r.get("dropped") or 0) for r in mine)),
                    tuple(p for p in (THROUGHPUT, OCCUPANCY, STALLS) if p not in present))


def default_metrics(line: Timeline, most: int = 8) -> list[str]:
    """The series shown first: the throughput series with the highest mean over the kernel,
    at most ``most``, then the occupancy and stall series."""
    frame = line.frame
    tput = frame[frame[PANEL] == THROUGHPUT].groupby(METRIC)[VALUE].mean()
    top = list(tput.sort_values(ascending=False).index[:most])
    return top + sorted(set(frame[frame[PANEL].isin([OCCUPANCY, STALLS])][METRIC]))


def wide(line: Timeline, metrics: Sequence[str]) -> pd.DataFrame:
    """One row per sample start, one column per metric (``<metric> (<unit>)``): the chart's
    table and CSV."""
    frame = line.frame[line.frame[METRIC].isin(list(metrics))]
    if frame.empty:
        return pd.DataFrame(columns=[line.time])
    named = frame.assign(**{METRIC: frame[METRIC] + " (" + frame[UNIT] + ")"})
    out = named.pivot_table(index=line.time, columns=METRIC, values=VALUE, aggfunc="first")
    return out.reset_index().rename_axis(columns=None)


def summary(line: Timeline) -> pd.DataFrame:
    """Per series: Metric, Panel, Unit, Samples, Mean and Max over the samples shown."""
    grouped = line.frame.groupby([METRIC, PANEL, UNIT], sort=False)[VALUE]
    out = grouped.agg(Samples="count", Mean="mean", Max="max").reset_index()
    order = {p: i for i, p in enumerate(PANELS)}
    return out.sort_values([PANEL, "Mean"], key=lambda s: s.map(order) if s.name == PANEL else -s,
                           ignore_index=True)
