"""Derived quantities computed in the app from a bundle's raw per-run durations (pure pandas).

Changing the unit or the baseline never re-profiles: everything here starts from the ``runs``
table (one row per Annotation x Config x Run x Metric, duration ``Value`` in ns) and the ``work``
table (analytic ``Flops`` and ``Bytes`` per Annotation x Config).

A time is aggregated from its runs. A **throughput** (TFLOP/s, GB/s) of a point is the work
over the mean time, ``W / mean(t)`` (:func:`aggregate_quantity`), on every page (Size sweep, one
kernel, Roofline): the rate at which the runs did their work (total work over total time), the
estimator of a throughput of the mean time. The mean of per-run rates ``mean(W / t_i)`` is
biased upward (Jensen's inequality: ``mean(1/t) >= 1/mean(t)``) and was 34 % above
``W / mean(t)`` on h200-events-j1-fp16 n=1024 (issue 34). Its CI95 is the time's mapped
through ``W / t`` (a monotone map keeps a confidence interval's coverage); per-run rates are
still drawn where single runs are shown.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
from profiling_worker.bundle import number_text
from profiling_worker.bundle.schema import columns as C, intervals

from app.core import frame_columns as F, metric_roles, numbers

TIME = "time"
TFLOPS = "tflops"
GBPS = "gbps"
QUANTITIES = (TIME, TFLOPS, GBPS)
#: The GB/s quantity here is the kernel catalog's analytic minimum bytes / time, not measured DRAM
#: bytes (the Memory and Bound pages): its label says so, so the two never read as one number.
GBPS_SOURCE = "analytic minimum bytes / time"
QUANTITY_LABELS = {TIME: "Time", TFLOPS: "Throughput (TFLOP/s)",
                   GBPS: f"Bandwidth, {GBPS_SOURCE} (GB/s)"}
TIME_UNITS = number_text.TIME_UNITS  # divisor from ns
#: The time unit the pages' Time unit controls open at.
DEFAULT_TIME_UNIT = "µs"


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


def is_time(metric: str) -> bool:
    """True for a duration metric (ns in the tables): the time-unit choice applies to it only."""
    return metric in C.DURATION_METRICS


def shown_scale(units: Iterable[object]) -> tuple[float, str | None]:
    """The divisor and unit that show values of one metric that is not a duration, in
    ``units`` (each row's, as the tables give them), in the unit a person reads
    (:func:`~profiling_worker.bundle.number_text.shown_unit`: an SM clock in Hz in MHz, as the
    run audit's sentences); (1.0, None) where the rows' units differ or none reads otherwise."""
    distinct = {metric_roles.unit_text(u) for u in units}
    if len(distinct) != 1:
        return 1.0, None
    unit, divisor = number_text.shown_unit(distinct.pop())
    return (divisor, unit) if divisor != 1.0 else (1.0, None)


def rows_in_shown_units(frame: pd.DataFrame, time_unit: str = DEFAULT_TIME_UNIT,
                        columns: Sequence[str] = (C.VALUE,)) -> pd.DataFrame:
    """A Metric / Unit table with values in ``columns`` (a deep dive section's Value; a
    baseline comparison's Baseline, This, Difference ...; a copy where a row changes) with
    each row in the unit
    the other pages show it in: a duration in ns in ``time_unit``, a clock in Hz in MHz
    (:func:`~profiling_worker.bundle.number_text.shown_unit`); other rows, and a frame without
    those columns, unchanged. A value that is not a number stays as it is; a row is in its
    shown unit only where each of its numbers is (its Unit names them all).

    Raises:
        KeyError: ``time_unit`` is none of :data:`TIME_UNITS`.
    """
    names = [c for c in columns if c in frame.columns]
    if frame.empty or not names or not {C.METRIC, C.UNIT} <= set(frame.columns):
        return frame
    # one scale per distinct (metric, unit), mapped onto the rows: a 10,000-config runs table
    # has a handful of pairs and 100,000s of rows
    pairs = frame[C.METRIC].astype(str) + "\0" + frame[C.UNIT].map(metric_roles.unit_text)
    scales = {pair: _shown_scale(pair.partition("\0")[0], pair.partition("\0")[2], time_unit)
              for pair in pairs.unique()}
    divisor = pairs.map({p: d for p, (_, d) in scales.items()})
    numbers = {c: pd.to_numeric(frame[c], errors="coerce") for c in names}
    texts = pd.concat([numbers[c].isna() & frame[c].notna() for c in names], axis=1).any(axis=1)
    no_number = pd.concat([numbers[c].isna() for c in names], axis=1).all(axis=1)
    rows = (divisor != 1.0) & ~texts & ~no_number  # a text among its values: as it was
    if not rows.any():
        return frame
    out = frame.copy()
    for c in names:
        if pd.api.types.is_numeric_dtype(out[c]):
            out[c] = out[c].astype(float)
        out.loc[rows, c] = numbers[c][rows] / divisor[rows]
    out.loc[rows, C.UNIT] = pairs[rows].map({p: u for p, (u, _) in scales.items()})
    return out


def _shown_scale(metric: str, unit: str, time_unit: str) -> tuple[str, float]:
    """The unit a value of ``metric`` in ``unit`` is shown in and its size in ``unit``: a
    duration in ns in ``time_unit``, else :func:`~profiling_worker.bundle.number_text
    .shown_unit`'s.

    Raises:
        KeyError: ``time_unit`` is none of :data:`TIME_UNITS`.
    """
    if is_time(metric) and unit == "ns":
        return time_unit, TIME_UNITS[time_unit]
    return number_text.shown_unit(unit)


def per_run_metric(runs: pd.DataFrame, metric: str, time_unit: str = "µs") -> pd.DataFrame:
    """One value of the job's ``metric`` per Annotation x Config x Run, as the tables hold it:
    a duration metric in ``time_unit``, any other (an ncu counter, an imported derived metric
    such as nsight-python's ``compute_tflops``) in its own unit, "" when it has none.

    Returns:
        Columns Annotation, Config, <config parameters>, Run, Value, Unit (empty frame of those
        columns when ``runs`` has no row of ``metric``).

    Raises:
        ValueError: unknown ``time_unit``.
    """
    if time_unit not in TIME_UNITS:
        raise ValueError(f"unknown time unit {time_unit!r}")
    if runs.empty or C.METRIC not in runs or not (runs[C.METRIC] == metric).any():
        return pd.DataFrame(columns=[C.ANNOTATION, C.CONFIG, C.RUN, C.VALUE, C.UNIT])
    rows = runs[runs[C.METRIC] == metric]
    units = rows[C.UNIT] if C.UNIT in rows else pd.Series([None] * len(rows), index=rows.index)
    out = rows.drop(columns=[c for c in (C.METRIC, C.UNIT, C.KERNELS, C.COMBINE_RULE)
                             if c in rows]).copy()
    out[C.VALUE] = out[C.VALUE].astype(float)
    if is_time(metric):
        out[C.VALUE] = out[C.VALUE] / TIME_UNITS[time_unit]
        out[C.UNIT] = time_unit
    else:
        divisor, shown = shown_scale(units.unique())
        out[C.VALUE] = out[C.VALUE] / divisor
        out[C.UNIT] = shown or [metric_roles.unit_text(u) for u in units]
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
        ``keys`` + Unit, NumRuns, AvgValue, StdDev (sample, ddof=1), MinValue, MaxValue,
        MedianValue, CI95_Lower, CI95_Upper, RelativeStdDevPct (100 StdDev / |AvgValue|, %),
        StableMeasurement (at least 2 runs and RSD < 2 %): the worker's aggregated table's
        method (:mod:`profiling_worker.bundle.schema.intervals`: Student-t, cut at 0 for
        non-negative quantities). One run: StdDev, both CI95 bounds and RSD are NaN, not stable.
    """
    grouped = per_run.groupby(keys, sort=True, dropna=False)
    stats = grouped[C.VALUE].agg(["count", "mean", "std", "min", "max", "median"]).reset_index()
    stats = stats.rename(columns={"count": C.NUM_RUNS, "mean": C.AVG, "std": C.STD,
                                  "min": C.MIN, "max": C.MAX, "median": C.MEDIAN})
    n, mean, std = (stats[c].to_numpy(float) for c in (C.NUM_RUNS, C.AVG, C.STD))
    stats[C.CI95_LOWER], stats[C.CI95_UPPER] = intervals.ci95_bounds(mean, std, n, stats[C.MIN])
    stats[C.RSD] = intervals.rsd_pct(mean, std)
    stats[C.STABLE] = intervals.stable(n, stats[C.RSD])
    units = grouped[C.UNIT].first().reset_index(drop=True) if C.UNIT in per_run else None
    stats.insert(len(keys), C.UNIT, units if units is not None else "")
    return intervals.with_ci95_half_pct(stats)


def aggregate_normalised(per_run: pd.DataFrame, keys: list[str], baseline: str) -> pd.DataFrame:
    """:func:`aggregate` of :func:`normalise`: each annotation's mean over the ``baseline``
    annotation's mean at the same Config, whose CI95 takes both annotations' run spread into
    account (:func:`profiling_worker.bundle.schema.intervals.ratio_ci95_bounds`: Fieller's interval
    of a ratio of means, as the Compare page and the regression gate; ``+inf`` above where the
    baseline mean cannot be told from 0), not only the annotation's own: the baseline's mean
    is a measurement too. The baseline's own rows are 1 by definition and have no interval
    (CI95 NaN: a new user read [0.989, 1.011] on fp16 normalised to fp16 as uncertainty about
    a ratio that is exactly 1; the baseline's spread is already inside every other row's
    interval). StdDev, RelativeStdDevPct and StableMeasurement describe the annotation's own
    runs.

    Raises:
        ValueError: ``baseline`` is not an annotation of the frame.
    """
    out = aggregate(normalise(per_run, baseline), keys)
    base = aggregate(per_run[per_run[C.ANNOTATION] == baseline], [C.CONFIG])
    base = out[[C.CONFIG]].merge(base, on=C.CONFIG, how="left")
    own = out[keys].merge(aggregate(per_run, keys), on=keys, how="left")
    lower, upper = intervals.ratio_ci95_bounds(base[C.AVG], base[C.STD], base[C.NUM_RUNS],
                                               own[C.AVG], own[C.STD], own[C.NUM_RUNS])
    others = (out[C.ANNOTATION] != baseline).to_numpy()
    out[C.CI95_LOWER] = np.where(others, lower, np.nan)
    out[C.CI95_UPPER] = np.where(others, upper, np.nan)
    return intervals.with_ci95_half_pct(out)


def aggregate_quantity(runs: pd.DataFrame, work: pd.DataFrame, duration_metric: str,
                       quantity: str, keys: list[str], time_unit: str = "µs",
                       baseline: str | None = None) -> pd.DataFrame:
    """A quantity per group of ``keys``, as :func:`aggregate` returns it: a time aggregated
    from its runs (in ``time_unit``); a throughput as the work over the mean time (module
    docstring): AvgValue ``W / mean(t)``, MinValue ``W / max(t)``, MaxValue ``W / min(t)``,
    MedianValue ``W / median(t)``, CI95 ``[W / t_upper, W / t_lower]`` (``inf`` above where the
    time's lower bound is 0), StdDev ``W s_t / mean(t)^2`` (delta method), RSD and
    StableMeasurement those of the time. ``baseline``: each annotation over the baseline
    annotation at the same Config; a throughput ratio ``(W_a/W_b) (mean t_b / mean t_a)`` with
    the baseline's and the annotation's times in Fieller's interval (:func:`aggregate_normalised`
    on the times, inverted).

    Raises:
        MissingWork: a throughput was asked for and some annotation x config has no work row.
        ValueError: unknown ``quantity`` or ``time_unit``; ``baseline`` not an annotation.
    """
    if quantity == TIME:
        per_run = per_run_quantity(runs, work, duration_metric, TIME, time_unit)
        return (aggregate_normalised(per_run, keys, baseline) if baseline
                else aggregate(per_run, keys))
    rate = per_run_quantity(runs, work, duration_metric, quantity)  # checks work, names units
    times = per_run_quantity(runs, work, duration_metric, TIME, "ns")
    column = C.FLOPS if quantity == TFLOPS else C.BYTES
    scale = 1e3 if quantity == TFLOPS else 1.0  # W/ns -> TFLOP/s (1e3) or GB/s (1)
    amounts = work[[C.ANNOTATION, C.CONFIG, column]].astype({column: float})
    if baseline:
        stats = aggregate_normalised(times, keys, baseline)  # mean t_a / mean t_b, Fieller
        base = amounts[amounts[C.ANNOTATION] == baseline][[C.CONFIG, column]]
        amount = stats[[C.ANNOTATION, C.CONFIG]].merge(amounts, how="left").merge(
            base, on=C.CONFIG, how="left", suffixes=("", "_b"))
        factor = (amount[column] / amount[column + "_b"]).to_numpy()
        unit = f"× {baseline}"
    else:
        stats = aggregate(times, keys)
        amount = stats[[C.ANNOTATION, C.CONFIG]].merge(amounts, how="left")
        factor = amount[column].to_numpy() / scale
        unit = str(rate[C.UNIT].iloc[0]) if len(rate) else quantity_unit(quantity)
        return fitting_rate_unit(_inverted(stats, factor, unit))
    return _inverted(stats, factor, unit)


#: The columns of an :func:`aggregate` frame in its ``Unit`` (RSD and CI95 % have none).
_VALUE_COLUMNS = (C.AVG, C.STD, C.MIN, C.MAX, C.MEDIAN, C.CI95_LOWER, C.CI95_UPPER)


def median_rate_step(values: "pd.Series[float] | np.ndarray", unit: str = "TFLOP/s"
                     ) -> tuple[float, str]:
    """:func:`app.core.numbers.rate_step` of the median of the finite ``values`` (in ``unit``):
    the factor and the unit of its family that every value of a chart, a table and its CSV is
    written in; ``(1.0, unit)`` when none is finite."""
    finite = np.asarray(values, dtype=float)
    finite = finite[np.isfinite(finite)]
    return numbers.rate_step(float(np.median(finite)) if finite.size else math.nan, unit)


def roofline_rate_step(points: pd.DataFrame, with_roofs: bool) -> tuple[float, str]:
    """The factor and FLOP/s unit of a roofline's achieved throughputs (a roofline frame's
    ``AchievedTFLOPs``), one for its chart, its table and its CSV: TFLOP/s beside datasheet
    roofs (``with_roofs``; they are in TFLOP/s), else the unit the median of the points drawn
    (those with an arithmetic intensity) fits (:func:`median_rate_step`): a cpu job's 4.2e-5
    TFLOP/s reads 42 MFLOP/s."""
    if with_roofs:
        return 1.0, "TFLOP/s"
    drawn = points.dropna(subset=[F.ACHIEVED_TFLOPS, F.ARITHMETIC_INTENSITY])
    return median_rate_step(drawn[F.ACHIEVED_TFLOPS], "TFLOP/s")


def fitting_rate_unit(stats: pd.DataFrame) -> pd.DataFrame:
    """An aggregated TFLOP/s or GB/s frame written in the one unit of its family in which its
    median AvgValue is at least 1 (:func:`app.core.numbers.rate_step`): a cpu job's 9.6e-5
    TFLOP/s reads 96 MFLOP/s and its 0.385 GB/s 385 MB/s, on the chart's axis, in the table and
    in the CSV, as One kernel's tile reads them. One unit for all rows, so the points of a chart
    stay on one axis; a GPU job stays in TFLOP/s and GB/s.

    Args:
        stats: rows of :func:`aggregate`'s columns, all with ``Unit`` ``TFLOP/s`` or all ``GB/s``.

    Returns:
        A copy with AvgValue, StdDev, Min/Max/MedianValue and the CI95 bounds scaled and ``Unit``
        set; RelativeStdDevPct and CI95HalfWidthPct, ratios, unchanged.

    Raises:
        KeyError: the unit is neither.
    """
    factor, unit = median_rate_step(stats[C.AVG], str(stats[C.UNIT].iloc[0]) if len(stats)
                                    else "TFLOP/s")
    out = stats.copy()
    if factor != 1.0:
        columns = [c for c in _VALUE_COLUMNS if c in out]
        out[columns] = out[columns].astype(float) * factor
    out[C.UNIT] = unit
    return out


def rate_unit(runs: pd.DataFrame, work: pd.DataFrame, duration_metric: str,
              quantity: str) -> str:
    """The unit :func:`aggregate_quantity` writes the throughput ``quantity`` (:data:`TFLOPS`,
    :data:`GBPS`) in without a baseline (:func:`fitting_rate_unit`: the one its median AvgValue,
    work / mean time of each annotation x config, fits), from those means alone: what a control
    naming the unit needs, not the statistics. The catalog's unit (:func:`quantity_unit`)
    where there are no durations or some annotation x config has no work (no throughput)."""
    unit = quantity_unit(quantity)
    column = C.FLOPS if quantity == TFLOPS else C.BYTES
    if runs.empty or C.METRIC not in runs or column not in work:
        return unit
    times = runs.loc[runs[C.METRIC] == duration_metric, [C.ANNOTATION, C.CONFIG, C.VALUE]]
    mean_ns = times.astype({C.VALUE: float}).groupby(
        [C.ANNOTATION, C.CONFIG], sort=False)[C.VALUE].mean().reset_index()
    amount = mean_ns.merge(work[[C.ANNOTATION, C.CONFIG, column]], how="left")[column]
    if mean_ns.empty or amount.isna().any():
        return unit
    scale = 1e3 if quantity == TFLOPS else 1.0  # W/ns -> TFLOP/s (1e3) or GB/s (1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rates = amount.to_numpy(float) / scale / mean_ns[C.VALUE].to_numpy(float)
    return median_rate_step(rates, unit)[1]


def _inverted(stats: pd.DataFrame, factor: np.ndarray, unit: str) -> pd.DataFrame:
    """``factor / x`` of an :func:`aggregate` frame of ``x`` (module docstring's rules)."""
    out = stats.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = stats[C.AVG].to_numpy(float)
        out[C.AVG] = factor / mean
        out[C.MIN], out[C.MAX] = factor / stats[C.MAX].to_numpy(float), \
            factor / stats[C.MIN].to_numpy(float)
        out[C.MEDIAN] = factor / stats[C.MEDIAN].to_numpy(float)
        lower, upper = (stats[c].to_numpy(float) for c in (C.CI95_LOWER, C.CI95_UPPER))
        out[C.CI95_LOWER] = factor / upper
        out[C.CI95_UPPER] = np.where(lower > 0, factor / lower, np.where(np.isnan(lower),
                                                                         np.nan, np.inf))
        out[C.STD] = factor * stats[C.STD].to_numpy(float) / mean**2
    out[C.UNIT] = unit
    return intervals.with_ci95_half_pct(out)


def is_power_of_two(value: float) -> bool:
    """True for 1, 2, 4, 8 ... (integers only)."""
    return value > 0 and float(value).is_integer() and (int(value) & (int(value) - 1)) == 0


def log2_labels(sizes: Sequence[float]) -> list[str]:
    """Tick labels of sizes, one notation for the whole axis: ``2^10`` for each where every
    size is a power of two, else each number itself with thousands separators (``1,000,000``;
    ``:g`` wrote "1e+06" beside "900,000"). A sweep of 16, 32, 48, 64 read "2^4, 2^5, 48, 2^6"
    (session 25's fresh user): issue 37 asks no axis to mix notations."""
    if sizes and all(is_power_of_two(v) for v in sizes):
        return [f"2^{int(math.log2(v))}" for v in sizes]
    return [f"{v:,.0f}" if float(v).is_integer() else f"{v:,.6g}" for v in sizes]
