"""Size sweep view: one row per Annotation x Config, x = the size parameter (pure pandas)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from profiling_worker.schema import columns as C

from app.core import derived
from app.core.bundle_loader import Bundle


@dataclass(frozen=True)
class SweepOptions:
    """What the sweep page lets the user choose.

    Attributes:
        quantity: ``time``, ``tflops`` or ``gbps`` (see :mod:`app.core.derived`).
        time_unit: ``ns``, ``µs`` or ``ms`` (time only).
        baseline: annotation to normalise to per config, or None for absolute values.
    """

    quantity: str = derived.TIME
    time_unit: str = "µs"
    baseline: str | None = None


def sweep_x(bundle: Bundle) -> str:
    """The x-axis parameter: the first config parameter whose values are all numbers."""
    for name in bundle.parameters:
        values = [cfg.get(name) for cfg in bundle.spec.get("configs", [])]
        if values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            return name
    return bundle.parameters[0] if bundle.parameters else C.CONFIG


def annotations_of(bundle: Bundle) -> list[str]:
    """Annotations that have duration rows, in first-seen order."""
    for name in (C.TABLE_RUNS, C.TABLE_AGGREGATED):
        table = bundle.table(name)
        if not table.empty and C.ANNOTATION in table:
            return list(dict.fromkeys(table[C.ANNOTATION]))
    return []


def sweep_frame(bundle: Bundle, options: SweepOptions) -> pd.DataFrame:
    """The sweep of ``bundle`` in the chosen quantity and unit.

    Returns:
        Columns Annotation, Config, <x parameter> (e.g. ``n``), Unit, NumRuns, AvgValue,
        StdDev, MinValue, MaxValue, MedianValue, CI95_Lower, CI95_Upper, RelativeStdDevPct,
        StableMeasurement, all in the unit of the ``Unit`` column (e.g. ``µs``, ``TFLOP/s``,
        ``× fp32``), sorted by Annotation then x. Empty when the bundle has no durations.

    Raises:
        derived.MissingWork: a throughput was asked for and the ``work`` table lacks rows.
        ValueError: the baseline is not an annotation of the bundle.
    """
    x = sweep_x(bundle)
    runs = bundle.table(C.TABLE_RUNS)
    if runs.empty and options.quantity == derived.TIME and options.baseline is None:
        return _from_aggregated(bundle, options, x)
    per_run = derived.per_run_quantity(runs, bundle.table(C.TABLE_WORK), bundle.duration_metric,
                                       options.quantity, options.time_unit)
    if per_run.empty:
        return per_run
    if options.baseline:
        per_run = derived.normalise(per_run, options.baseline)
    keys = [C.ANNOTATION, C.CONFIG] + ([x] if x in per_run and x != C.CONFIG else [])
    frame = derived.aggregate(per_run, keys)
    return _in_order(frame, per_run[C.ANNOTATION], x)


def _in_order(frame: pd.DataFrame, seen: pd.Series, x: str) -> pd.DataFrame:
    """Sort by annotation in first-seen (catalog) order, then by x."""
    rank = {a: i for i, a in enumerate(dict.fromkeys(seen))}
    order = frame[C.ANNOTATION].map(rank)
    return (frame.assign(_rank=order).sort_values(["_rank", x]).drop(columns="_rank")
            .reset_index(drop=True))


def _from_aggregated(bundle: Bundle, options: SweepOptions, x: str) -> pd.DataFrame:
    """Time from the aggregated table (plain nsight output without per-run rows)."""
    agg = bundle.table(C.TABLE_AGGREGATED)
    if agg.empty or C.METRIC not in agg:
        return pd.DataFrame()
    frame = agg[agg[C.METRIC] == bundle.duration_metric].copy()
    scale = derived.TIME_UNITS[options.time_unit]
    for col in (C.AVG, C.STD, C.MIN, C.MAX, C.MEDIAN, C.CI95_LOWER, C.CI95_UPPER):
        if col in frame:
            frame[col] = frame[col].astype(float) / scale
    frame[C.UNIT] = options.time_unit
    keep = [c for c in (C.ANNOTATION, C.CONFIG, x, C.UNIT, C.NUM_RUNS, C.AVG, C.STD, C.MIN, C.MAX,
                        C.MEDIAN, C.CI95_LOWER, C.CI95_UPPER, C.RSD, C.STABLE) if c in frame]
    return _in_order(frame[list(dict.fromkeys(keep))], frame[C.ANNOTATION], x)
