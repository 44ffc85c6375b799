"""Stability view: spread of each annotation x config (RSD, CI95, StableMeasurement), the per-run
values with their CI band, and drift over the run index (pure pandas)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from profiling_worker.bundle.schema import columns as C, intervals

from app.core import derived, metric_roles
from profiling_worker.bundle.loader import Bundle
from app.core.metrics import MissingData, available_metrics, keys_of, with_labels
from app.core import frame_columns as F
from app.core.table_text import header
from app.core.views.run_audit import NOTE_CHARS, failed_pairs_text, failed_rows

#: Below this mean duration (ns) launch overhead and timer jitter dominate the spread.
SHORT_KERNEL_NS = 10_000.0
SHORT_NOTE = "shorter than 10 µs: a variation of a few hundred ns is several % of its time"
#: Duration metrics of the backends that time a whole region (their time holds its launches).
_REGION_TIMERS = (C.EVENTS_TIME, C.HOST_TIME)


#: The most short pairs the note names; above, it counts them and names where they are: a
#: 10,000-config sweep's note named 8,000 pairs, 104,574 characters (issue 37).
SHORT_NAMED = 12


#: What a slope in the per-run chart usually means, by what timed the runs
DRIFT_CAUSE = {False: "the GPU was still clocking up or heating",
               True: "the host was still warming up (its CPU raising its clock, caches filling) "
                     "or another program took CPU time meanwhile"}


def how_to_read(host_timer: bool) -> str:
    """The page's "How to read this" (markdown): runs, RSD, stable, CI95, short kernels and
    drift, whose usual cause follows what timed the runs (``host_timer``: the host's wall
    clock, cpu backend; a cpu job's read "the GPU was still clocking up", issue 37)."""
    return ("Each annotation × config was run several times (**runs**). **RSD** is the "
            "standard deviation as a % of the mean; nsight-python calls a measurement "
            "**stable** when RSD < 2 % (one run is never stable: it shows no spread). "
            f"**CI95**: {intervals.CI_METHOD} (from the worker's aggregated table; "
            f"{intervals.SEED_CI_NOTE}). Kernels shorter than ~10 µs are dominated by launch and "
            "timer jitter, so their RSD says more about the clock than about the kernel. The "
            "per-run chart keeps the run order: a slope (**drift**) usually means "
            f"{DRIFT_CAUSE[host_timer]}; a flat cloud inside the band is what you want.")


def short_kernels_text(summary: pd.DataFrame, duration_metric: str) -> tuple[str, bool] | None:
    """The page's note on the pairs of :func:`stability_frame` that ran shorter than 10 µs,
    said from their own RSD (launch overhead named only for a timer of whole regions), and
    whether all of them are stable; None when there is none. Labels are plain text; above
    :data:`SHORT_NAMED` pairs, counted, and the table's rows where ShortKernel is True named
    in their place."""
    short = summary[summary[F.SHORT_KERNEL].astype(bool)]
    if short.empty:
        return None
    rsd = short[C.RSD].astype(float)
    pairs = (", ".join(f"{a} {c}" for a, c in zip(short[C.ANNOTATION], short[F.CONFIG_LABEL]))
             if len(short) <= SHORT_NAMED else
             f"the table's rows with {header(F.SHORT_KERNEL)} True, and its CSV")
    low, high = f"{rsd.min():.2g}", f"{rsd.max():.2g}"
    spread = low if low == high else f"{low}–{high}"  # "RSD 3.9–3.9 %" read as a range
    said = "1 pair runs" if len(short) == 1 else f"{len(short):,} pairs run"
    text = (f"{said} shorter than 10 µs ({pairs}; RSD {spread} %): at this length a variation "
            "of a few hundred ns is several % of the time"
            + ("; the measured time includes launch overhead"
               if duration_metric in _REGION_TIMERS else "") + ".")
    return text, bool(short[C.STABLE].astype(bool).all())


def stable_text(bundle: Bundle, summary: pd.DataFrame, badges: pd.DataFrame) -> str:
    """The page's and the report's count of stable pairs of :func:`stability_frame` (``summary``,
    of ``bundle``), and how it relates to the run audit (``badges``: the job's
    :func:`~app.core.views.run_audit.badge_frame`, which the page has cached: computed here on
    every script run, it was most of a 1,000-config sweep's Stability page): the RSD is over
    every recorded run, passed or not (the audit drops none: a pair whose runs all failed would
    have nothing left), so a stable pair whose runs failed the audit is named with its failed
    checks, as its badge says. Plain text, e.g. ``"15 of 15 annotation × config pairs are
    stable (RSD < 2 %), over every recorded run; 5 of them have runs that failed the run audit:
    bf16 n=4096: 0/10 runs passed (clock 10: ...); ..."``, the pairs past
    :data:`~app.core.views.run_audit.NOTE_CHARS` named without their evidence."""
    stable = summary[summary[C.STABLE].astype(bool)]
    said = (f"{len(stable)} of {len(summary)} annotation × config pairs are stable "
            f"(RSD < {C.STABLE_RSD_PCT:g} %), over every recorded run")
    failed = failed_rows(badges).merge(stable[[C.ANNOTATION, C.CONFIG]],
                                       on=[C.ANNOTATION, C.CONFIG])
    if failed.empty:
        return said + "."
    return (f"{said}; {len(failed)} of them have runs that failed the run audit, so stable "
            f"there means repeatable, not valid: "
            f"{failed_pairs_text(bundle, failed, NOTE_CHARS)}.")  # bounded as a chart's note


#: The page's own columns, shown right after a row's identity (issue 37: RSD, stable and CI95
#: were off screen right at 1400 px): :func:`app.core.table_text.page_columns_first`.
OWN_COLUMNS = (C.RSD, C.STABLE, C.CI95_HALF_PCT, F.NOTE)
#: The same for the per-run table of one config.
RUN_COLUMNS = (C.RUN, C.VALUE)
STAT_COLUMNS = (C.AVG, C.STD, C.MIN, C.MAX, C.MEDIAN, C.CI95_LOWER, C.CI95_UPPER)


@dataclass(frozen=True)
class StabilityOptions:
    """Attributes:
        metric: metric to judge (None = the job's duration metric).
        time_unit: ``ns``, ``µs`` or ``ms`` for duration metrics.
        config: Config index for the per-run chart (None = every config).
    """

    metric: str | None = None
    time_unit: str = derived.DEFAULT_TIME_UNIT
    config: int | None = None


def metric_choices(bundle: Bundle) -> list[str]:
    """The page's Metric box: the job's metrics in first-seen order (its duration metric where
    it records none); the first is the page's default."""
    return available_metrics(bundle) or [bundle.duration_metric]


def opening_options(bundle: Bundle) -> StabilityOptions:
    """The options the page opens with: the first of :func:`metric_choices`, the default time
    unit and every config."""
    return StabilityOptions(metric=metric_choices(bundle)[0])


def runs_label(manifest: dict[str, Any], metric: str) -> str:
    """The per-run chart's name for ``metric``'s values: "Duration" for a time metric without
    a role of its own, else its words (:func:`app.core.metric_roles.words`)."""
    if derived.is_time(metric) and metric not in metric_roles.roles(manifest):
        return "Duration"
    return metric_roles.words(manifest, metric)


def _metric(bundle: Bundle, options: StabilityOptions) -> str:
    return options.metric or bundle.duration_metric


def _scale(bundle: Bundle, options: StabilityOptions, frame: pd.DataFrame
           ) -> tuple[float, str | None]:
    """Divisor and unit for the values of ``frame`` (rows of the metric): durations go to
    ``time_unit``, others to the unit a person reads (:func:`app.core.derived.shown_scale`:
    Hz -> MHz, as the run audit's caption on the same page); else unchanged (None)."""
    if derived.is_time(_metric(bundle, options)):
        return derived.TIME_UNITS[options.time_unit], options.time_unit
    return derived.shown_scale(frame[C.UNIT].unique() if C.UNIT in frame else [None])


def _units(frame: pd.DataFrame) -> list[str]:
    """The rows' own units as text, "" where the table has none (an imported derived metric:
    a missing Unit cell drew "compute_tflops (None)" and a number-formatted Unit column)."""
    if C.UNIT not in frame:
        return [""] * len(frame)
    return [metric_roles.unit_text(u) for u in frame[C.UNIT]]


def stability_frame(bundle: Bundle, options: StabilityOptions) -> pd.DataFrame:
    """Spread per annotation x config for one metric, from the aggregated table.

    Returns:
        Annotation, Config, <params>, ConfigLabel, Metric, Unit, NumRuns, AvgValue, StdDev,
        MinValue, MaxValue, MedianValue, CI95_Lower, CI95_Upper (``intervals.CI_METHOD``, from the
        worker),
        RelativeStdDevPct, StableMeasurement (RSD < 2 %; StdDev, CI95 and RSD NaN for one run),
        ShortKernel (mean < 10 µs, duration metrics only), DriftPctOverRuns (least-squares slope
        over the run index x (runs - 1) as a % of the mean; NaN without per-run rows), Note.
        Durations in ``time_unit``.

    Raises:
        MissingData: the job has no rows for the metric.
    """
    metric = _metric(bundle, options)
    frame = _scaled_aggregate(bundle, options)
    agg = bundle.table(C.TABLE_AGGREGATED)
    ns_mean = agg.loc[agg[C.METRIC] == metric, C.AVG].astype(float)  # before the unit's scale
    is_time = metric in C.DURATION_METRICS
    frame[F.SHORT_KERNEL] = (ns_mean < SHORT_KERNEL_NS).to_numpy() if is_time else False
    drift = _drift(bundle, metric)
    frame = frame.merge(drift, on=[C.ANNOTATION, C.CONFIG], how="left")
    frame[F.NOTE] = [_note(r) for r in frame.to_dict("records")]  # dicts: no Series per row
    keep = [*keys_of(bundle, frame), C.METRIC, C.UNIT, C.NUM_RUNS, *STAT_COLUMNS, C.RSD, C.STABLE,
            C.CI95_HALF_PCT, F.SHORT_KERNEL, F.DRIFT_PCT_OVER_RUNS, F.NOTE]
    return with_labels(frame[[c for c in keep if c in frame]].reset_index(drop=True),
                       bundle.parameters)


def _scaled_aggregate(bundle: Bundle, options: StabilityOptions) -> pd.DataFrame:
    """The aggregated table's rows of the metric (a copy, its index kept), the statistics in
    the options' unit, with their Unit.

    Raises:
        MissingData: the job has no rows for the metric.
    """
    metric = _metric(bundle, options)
    agg = bundle.table(C.TABLE_AGGREGATED)
    if agg.empty or C.METRIC not in agg or not (agg[C.METRIC] == metric).any():
        raise MissingData(f"This job has no {metric} values.",
                          "Pick another metric, or a job that finished.")
    frame = agg[agg[C.METRIC] == metric].copy()
    scale, unit = _scale(bundle, options, frame)
    for col in STAT_COLUMNS:
        if col in frame:
            frame[col] = frame[col].astype(float) / scale
    frame[C.UNIT] = unit if unit else _units(frame)
    return frame


def _note(row: Mapping[Hashable, Any]) -> str:
    notes = []
    if row.get(C.NUM_RUNS, intervals.MIN_RUNS) < intervals.MIN_RUNS:
        notes.append(f"{intervals.ONE_RUN_NOTE}: not stable")
    elif not row.get(C.STABLE, True):
        notes.append(_unstable(row.get(C.RSD)))
    if row.get(F.SHORT_KERNEL, False):
        notes.append(SHORT_NOTE)
    drift = row.get(F.DRIFT_PCT_OVER_RUNS)
    if drift is not None and drift == drift and abs(drift) >= C.STABLE_RSD_PCT:
        notes.append(f"drifts {drift:+.1f} % over the runs")
    return "; ".join(notes)


def _unstable(rsd: float | None) -> str:
    """Why a row of 2+ runs is not stable: its RSD, or that the job gives none."""
    if rsd is None or pd.isna(rsd):
        return "no relative std dev in this job (no std dev): not stable"
    return f"RSD {rsd:.2f} % ≥ {C.STABLE_RSD_PCT:g} %: not stable"


def _drift(bundle: Bundle, metric: str) -> pd.DataFrame:
    """Linear trend of the value over the run index, as % of the mean across all runs: the
    least-squares slope x (last run - first run) / |mean|, for a pair of 3+ runs over 2+ run
    indices and a mean other than 0 (else NaN)."""
    runs = bundle.table(C.TABLE_RUNS)
    cols = [C.ANNOTATION, C.CONFIG, F.DRIFT_PCT_OVER_RUNS]
    if runs.empty or C.METRIC not in runs:
        return pd.DataFrame(columns=cols)
    mine = runs[runs[C.METRIC] == metric]
    if mine.empty:
        return pd.DataFrame(columns=cols)
    # every pair at once (a fit per pair in a loop was most of a 1,000-config sweep's page);
    # sums by bincount, so a NaN value gives its pair NaN as the fit did
    groups = mine.groupby([C.ANNOTATION, C.CONFIG], sort=False, observed=True)
    code = groups.ngroup().to_numpy()
    keyed = code >= 0  # a row without an annotation or config is in no pair (-1)
    code = code[keyed]
    x, y = (mine[col].to_numpy(float)[keyed] for col in (C.RUN, C.VALUE))
    n = np.bincount(code)
    x_mean, y_mean = np.bincount(code, x) / n, np.bincount(code, y) / n
    dx = x - x_mean[code]
    span = (groups[C.RUN].max() - groups[C.RUN].min()).to_numpy(float)
    with np.errstate(divide="ignore", invalid="ignore"):  # one run index, a zero mean: NaN
        slope = np.bincount(code, dx * (y - y_mean[code])) / np.bincount(code, dx * dx)
        pct = np.where((n >= 3) & (span > 0) & (y_mean != 0),
                       100.0 * slope * span / np.abs(y_mean), np.nan)
    keys = groups.size().index
    return pd.DataFrame({C.ANNOTATION: keys.get_level_values(0).tolist(),
                         C.CONFIG: keys.get_level_values(1).tolist(),
                         F.DRIFT_PCT_OVER_RUNS: pct}, columns=cols)


def stability_runs_frame(bundle: Bundle, options: StabilityOptions) -> pd.DataFrame:
    """Every run's value with its annotation x config mean and CI95 (for the scatter and drift).

    Returns:
        Annotation, Config, <params>, ConfigLabel, Run, Value, Unit, AvgValue, CI95_Lower,
        CI95_Upper, in the unit of the summary; only ``options.config`` when it is set. Empty
        when the job has no per-run rows.
    """
    metric = _metric(bundle, options)
    runs = bundle.table(C.TABLE_RUNS)
    if runs.empty or C.METRIC not in runs:
        return pd.DataFrame()
    frame = runs[runs[C.METRIC] == metric].copy()
    if options.config is not None:
        frame = frame[frame[C.CONFIG] == options.config]
    scale, unit = _scale(bundle, options, frame)
    frame[C.VALUE] = frame[C.VALUE].astype(float) / scale
    frame[C.UNIT] = unit if unit else _units(frame)
    # the summary's mean and CI95 without the rest of stability_frame (its drift of every
    # pair): the page has that frame already, for every config
    summary = _scaled_aggregate(bundle, options)[[C.ANNOTATION, C.CONFIG, C.AVG, C.CI95_LOWER,
                                                  C.CI95_UPPER]]
    frame = frame.merge(summary, on=[C.ANNOTATION, C.CONFIG], how="left")
    keep = [*keys_of(bundle, frame), C.RUN, C.VALUE, C.UNIT, C.AVG, C.CI95_LOWER, C.CI95_UPPER]
    return with_labels(frame[keep].reset_index(drop=True), bundle.parameters)
