"""Derived quantities computed in the app from a bundle's raw per-run durations (pure pandas).

Changing the unit or the baseline never re-profiles: everything here starts from the ``runs``
table (one row per Annotation x Config x Run x Metric, duration ``Value`` in ns) and the ``work``
table (analytic ``Flops`` and ``Bytes`` per Annotation x Config).

Every quantity is computed per run and only then aggregated, so the spread (StdDev, CI95) is
the spread of the quantity itself, not of the time it came from.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from profiling_worker.schema import columns as C

TIME = "time"
TFLOPS = "tflops"
GBPS = "gbps"
QUANTITIES = (TIME, TFLOPS, GBPS)
QUANTITY_LABELS = {TIME: "Time", TFLOPS: "Throughput (TFLOP/s)", GBPS: "Bandwidth (GB/s)"}
TIME_UNITS = {"ns": 1.0, "µs": 1e3, "ms": 1e6}  # divisor from ns


class MissingWork(ValueError):
    """TFLOP/s or GB/s asked for, but the bundle has no ``work`` rows for some annotation."""


def quantity_unit(quantity: str, time_unit: str = "µs") -> str:
    """Display unit of a quantity: the time unit, ``TFLOP/s`` or ``GB/s``."""
    return {TIME: time_unit, TFLOPS: "TFLOP/s", GBPS: "GB/s"}[quantity]


def per_run_quantity(runs: pd.DataFrame, work: pd.DataFrame, duration_metric: str,
                     quantity: str, time_unit: str = "µs") -> pd.DataFrame:
    """One value of ``quantity`` per Annotation x Config x Run.

    Args:
        runs: the bundle's ``runs`` table; only rows with ``Metric == duration_metric`` are used.
        work: the ``work`` table (Annotation, Config, Flops, Bytes); needed for TFLOP/s and GB/s.
        duration_metric: ``gpu__time_duration.sum`` or ``host__time_duration.sum`` (ns).
        quantity: ``time`` (in ``time_unit``), ``tflops`` (Flops / s / 1e12) or ``gbps``
            (Bytes / s / 1e9).

    Returns:
        Columns Annotation, Config, <config parameters>, Run, Value, Unit.

    Raises:
        MissingWork: a throughput was asked for and some annotation x config has no work row.
        ValueError: unknown ``quantity`` or ``time_unit``.
    """
    if quantity not in QUANTITIES or time_unit not in TIME_UNITS:
        raise ValueError(f"unknown quantity {quantity!r} or time unit {time_unit!r}")
    if runs.empty or C.METRIC not in runs:
        return pd.DataFrame(columns=[C.ANNOTATION, C.CONFIG, C.RUN, C.VALUE, C.UNIT])
    frame = runs[runs[C.METRIC] == duration_metric].drop(
        columns=[c for c in (C.METRIC, C.UNIT, C.KERNELS, C.COMBINE_RULE) if c in runs])
    ns = frame[C.VALUE].astype(float).to_numpy()
    if quantity == TIME:
        values = ns / TIME_UNITS[time_unit]
    else:
        column = C.FLOPS if quantity == TFLOPS else C.BYTES
        merged = frame[[C.ANNOTATION, C.CONFIG]].merge(
            work[[C.ANNOTATION, C.CONFIG, column]] if not work.empty else
            pd.DataFrame(columns=[C.ANNOTATION, C.CONFIG, column]),
            on=[C.ANNOTATION, C.CONFIG], how="left")
        amount = merged[column].astype(float).to_numpy()
        if np.isnan(amount).any():
            missing = sorted(set(merged.loc[merged[column].isna(), C.ANNOTATION]))
            raise MissingWork(f"no analytic {column} for annotation(s) {', '.join(missing)}")
        # FLOP/ns = 1e9 FLOP/s -> TFLOP/s is FLOP/ns / 1e3; bytes/ns is exactly GB/s.
        values = amount / ns / (1e3 if quantity == TFLOPS else 1.0)
    out = frame.copy()
    out[C.VALUE] = values
    out[C.UNIT] = quantity_unit(quantity, time_unit)
    return out.reset_index(drop=True)


def normalise(per_run: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Divide every run's value by the baseline annotation's mean at the same Config.

    Returns:
        The same columns; ``Value`` is a ratio (1.0 = the baseline's mean) and ``Unit`` is
        ``× <baseline>``. Configs where the baseline has no runs are dropped.

    Raises:
        ValueError: ``baseline`` is not an annotation of the frame.
    """
    if baseline not in set(per_run[C.ANNOTATION]):
        raise ValueError(f"baseline annotation {baseline!r} is not in this job")
    means = (per_run[per_run[C.ANNOTATION] == baseline].groupby(C.CONFIG)[C.VALUE].mean()
             .rename("_base"))
    out = per_run.merge(means, left_on=C.CONFIG, right_index=True, how="inner")
    out[C.VALUE] = out[C.VALUE] / out.pop("_base")
    out[C.UNIT] = f"× {baseline}"
    return out.reset_index(drop=True)


def aggregate(per_run: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Statistics of ``Value`` per group of ``keys`` (nsight-python column names).

    Returns:
        ``keys`` + Unit, NumRuns, AvgValue, StdDev (sample, ddof=1; 0 for one run), MinValue,
        MaxValue, MedianValue, CI95_Lower, CI95_Upper (AvgValue -+ t(0.975, n-1) StdDev / sqrt(n),
        Student's t as the worker's aggregated table uses; no width for one run),
        RelativeStdDevPct (100 StdDev / |AvgValue|), StableMeasurement (RSD < 2 %).
    """
    grouped = per_run.groupby(keys, sort=True, dropna=False)
    stats = grouped[C.VALUE].agg(["count", "mean", "std", "min", "max", "median"]).reset_index()
    stats = stats.rename(columns={"count": C.NUM_RUNS, "mean": C.AVG, "std": C.STD,
                                  "min": C.MIN, "max": C.MAX, "median": C.MEDIAN})
    stats[C.STD] = stats[C.STD].fillna(0.0)
    half = ci95_half_width(stats[C.STD].to_numpy(float), stats[C.NUM_RUNS].to_numpy(float))
    stats[C.CI95_LOWER] = stats[C.AVG] - half
    stats[C.CI95_UPPER] = stats[C.AVG] + half
    with np.errstate(divide="ignore", invalid="ignore"):
        stats[C.RSD] = 100.0 * stats[C.STD] / stats[C.AVG].abs()
    stats[C.STABLE] = stats[C.RSD] < C.STABLE_RSD_PCT
    units = grouped[C.UNIT].first().reset_index(drop=True) if C.UNIT in per_run else None
    stats.insert(len(keys), C.UNIT, units if units is not None else "")
    return stats


def ci95_half_width(std: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Half width of the 95 % confidence interval of a mean: t(0.975, n-1) * std / sqrt(n);
    0 where n <= 1."""
    tq = np.where(n > 1, scipy_stats.t.ppf(0.975, np.maximum(n - 1, 1)), 0.0)
    return tq * std / np.sqrt(np.maximum(n, 1))


def is_power_of_two(value: float) -> bool:
    """True for 1, 2, 4, 8 ... (integers only)."""
    return value > 0 and float(value).is_integer() and (int(value) & (int(value) - 1)) == 0


def log2_label(value: float) -> str:
    """Tick label of a size: ``2^10`` for powers of two, else the number itself."""
    if is_power_of_two(value):
        return f"2^{int(math.log2(value))}"
    return f"{value:g}"
