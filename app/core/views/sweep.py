"""Size sweep view: one row per Annotation x Config, x = the parameter that varies (pure pandas).

With several parameters, x is the one the user picks among those that vary (default: the first
numeric one that varies, else the first that varies); the other varying parameters split each
annotation into series (``Series`` column, e.g. ``torch · block_size=128``). Non-numeric
parameters (str kinds, imported ``shape``/``dtype`` configs) are categorical: the frame keeps
them as text in config order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from profiling_worker.bundle.schema import columns as C

from app.core import derived, metric_roles
from profiling_worker.bundle.loader import Bundle
from app.core.metrics import available_metrics
from app.core.views.run_audit import with_outcome
from app.core import frame_columns as F


@dataclass(frozen=True)
class SweepOptions:
    """What the sweep page lets the user choose.

    Attributes:
        quantity: ``time``, ``tflops`` or ``gbps`` (see :mod:`app.core.derived`).
        time_unit: ``ns``, ``µs`` or ``ms`` (time only).
        baseline: annotation to normalise to per config, or None for absolute values.
        x: the x-axis parameter (None: :func:`sweep_x`'s default).
        metric: the job's metric on the y axis, in its own unit (a duration metric in
            ``time_unit``); None or the job's duration metric: ``quantity`` from the durations.
    """

    quantity: str = derived.TIME
    time_unit: str = "µs"
    baseline: str | None = None
    x: str | None = None
    metric: str | None = None




def _values(bundle: Bundle, name: str) -> list[Any]:
    return [cfg.get(name) for cfg in (bundle.spec.configs if bundle.spec else ())]


def _all_numeric(values: list[Any]) -> bool:
    return bool(values) and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                for v in values)


def _varies(values: list[Any]) -> bool:
    return len({repr(v) for v in values}) > 1


def is_numeric(bundle: Bundle, name: str) -> bool:
    """True when every config gives ``name`` an int or float (bools and text are categories)."""
    return _all_numeric(_values(bundle, name))


def varying_parameters(bundle: Bundle) -> list[str]:
    """Config parameters with more than one value across the configs, in spec order."""
    return [p for p in bundle.parameters if _varies(_values(bundle, p))]


def x_choices(bundle: Bundle) -> list[str]:
    """Parameters the x axis may take: those that vary (numeric first), else the first one."""
    # each parameter's values read once: three passes over every config each (10,000 configs:
    # 4.5 ms a call, three calls a run of the Size sweep; issue 37)
    values = {p: _values(bundle, p) for p in bundle.parameters}
    varying = [p for p, of_p in values.items() if _varies(of_p)]
    numeric = [p for p in varying if _all_numeric(values[p])]
    return numeric + [p for p in varying if p not in numeric] or list(bundle.parameters[:1])


def sweep_x(bundle: Bundle, choice: str | None = None) -> str:
    """The x-axis parameter: ``choice`` when it is one of :func:`x_choices`, else the first of
    them (``Config`` for a bundle without parameters)."""
    choices = x_choices(bundle)
    if choice in choices:
        return str(choice)
    return choices[0] if choices else C.CONFIG


def metric_choices(bundle: Bundle) -> list[str]:
    """Metrics the y axis may take: the job's duration metric first when it has values (the
    Quantity choice then derives time, TFLOP/s or GB/s from it), then every other metric of the
    job in first-seen order (ncu counters; an imported derived metric such as nsight-python's
    ``compute_tflops``, the only values of such a file)."""
    found = available_metrics(bundle)
    first = [bundle.duration_metric] if bundle.duration_metric in found else []
    return first + [m for m in found if m != bundle.duration_metric]


def rate_units(bundle: Bundle) -> dict[str, str]:
    """Each throughput quantity -> the unit the chart draws it in without a baseline
    (``TFLOP/s`` and ``GB/s`` on a GPU, ``MFLOP/s`` and ``MB/s`` for a host-timed cpu job:
    :func:`app.core.derived.rate_unit`, the unit of :func:`sweep_frame`'s rows), for the labels
    of the Quantity control; the catalog's units where the job has no durations."""
    runs = bundle.table(C.TABLE_RUNS) if bundle.duration_metric in metric_choices(bundle) \
        else pd.DataFrame()
    return {q: derived.rate_unit(runs, bundle.table(C.TABLE_WORK), bundle.duration_metric, q)
            for q in (derived.TFLOPS, derived.GBPS)}


def sweep_metric(bundle: Bundle, choice: str | None = None) -> str:
    """The y-axis metric: ``choice`` when it is one of :func:`metric_choices`, else the first of
    them (the duration metric; a job without durations: its first other metric); the duration
    metric for a job without any."""
    choices = metric_choices(bundle)
    if choice in choices:
        return str(choice)
    return choices[0] if choices else bundle.duration_metric


def default_options(bundle: Bundle) -> SweepOptions:
    """The options the Size sweep opens with, every control at its default: the first metric
    of :func:`metric_choices` (the durations, as Time, where the job has them), absolute
    values, the time unit µs and the first x of :func:`x_choices`. The page draws its controls
    with these defaults, and the work begun with the server (:mod:`app.ui.prewarm`) computes
    the page's frame and chart with them, so that the page's first run finds them."""
    metric = sweep_metric(bundle)
    return SweepOptions(x=sweep_x(bundle),
                        metric=None if metric == bundle.duration_metric else metric)


def chart_label(bundle: Bundle, options: SweepOptions) -> str:
    """The y quantity in words for the chart: the quantity's name (``Time``, ``Throughput``)
    where it is derived from the durations, else the metric's words
    (:func:`app.core.metric_roles.words`: ``SM clock rate``, ``compute_tflops
    (derived)``); ``... relative to <baseline>`` when normalised."""
    if uses_quantity(bundle, options):
        label = derived.QUANTITY_LABELS[options.quantity].split(" (")[0]
    else:
        label = metric_roles.words(bundle.manifest, str(options.metric))
    return f"{label} relative to {options.baseline}" if options.baseline else label


def uses_quantity(bundle: Bundle, options: SweepOptions) -> bool:
    """True when the y axis is ``options.quantity`` derived from the durations (time, TFLOP/s,
    GB/s); False when it is another metric of the job, drawn as the tables hold it."""
    return options.metric in (None, bundle.duration_metric)


def annotations_of(bundle: Bundle) -> list[str]:
    """Annotations that have duration rows, in first-seen order."""
    for name in (C.TABLE_RUNS, C.TABLE_AGGREGATED):
        table = bundle.table(name)
        if not table.empty and C.ANNOTATION in table:
            return table[C.ANNOTATION].unique().tolist()  # first-seen order, no per-row loop
    return []


def sweep_frame(bundle: Bundle, options: SweepOptions) -> pd.DataFrame:
    """The sweep of ``bundle`` in the chosen quantity and unit, or of the chosen metric.

    Returns:
        Columns Annotation, Config, <config parameters> (e.g. ``n``), Series (the annotation
        plus the other varying parameters), Unit, NumRuns, AvgValue, StdDev, MinValue,
        MaxValue, MedianValue, CI95_Lower, CI95_Upper, RelativeStdDevPct, StableMeasurement,
        all in the unit of the ``Unit`` column (e.g. ``µs``, ``TFLOP/s``, ``× fp32``), and
        ``Run audit``, each annotation x config's run audit badge as Stability and Results show
        it (:func:`app.core.views.run_audit.with_outcome`; absent for a job without an
        audit), sorted by
        series then x (numeric x by value, categorical x in config order; categorical values as
        text). Empty when the bundle has no values of the duration metric (or of
        ``options.metric``, when that is another metric).

    Raises:
        derived.MissingWork: a throughput was asked for and the ``work`` table lacks rows.
        ValueError: the baseline is not an annotation of the bundle.
    """
    x = sweep_x(bundle, options.x)
    runs = bundle.table(C.TABLE_RUNS)
    metric = bundle.duration_metric if uses_quantity(bundle, options) else str(options.metric)
    plain = not uses_quantity(bundle, options) or options.quantity == derived.TIME
    if runs.empty and plain and options.baseline is None:
        return _finish(_from_aggregated(bundle, options, metric), bundle, x)
    if uses_quantity(bundle, options):
        per_run = derived.per_run_quantity(runs, bundle.table(C.TABLE_WORK), metric,
                                           options.quantity, options.time_unit)
    else:
        per_run = derived.per_run_metric(runs, metric, options.time_unit)
    if per_run.empty:
        return per_run
    keys = [C.ANNOTATION, C.CONFIG] + [p for p in bundle.parameters if p in per_run]
    if not plain:  # a throughput: work / mean time (app.core.derived)
        return _finish(derived.aggregate_quantity(
            runs, bundle.table(C.TABLE_WORK), metric, options.quantity, keys,
            options.time_unit, options.baseline), bundle, x)
    # a time (or the job's metric): aggregated from the per-run values above, as
    # aggregate_quantity would do after computing them a second time
    if options.baseline:
        return _finish(derived.aggregate_normalised(per_run, keys, options.baseline), bundle, x)
    return _finish(derived.aggregate(per_run, keys), bundle, x)


def _finish(frame: pd.DataFrame, bundle: Bundle, x: str) -> pd.DataFrame:
    """Add the Series column, make categorical parameters text, sort by series then x."""
    if frame.empty:
        return frame
    frame = frame.copy()
    others = [p for p in varying_parameters(bundle) if p != x and p in frame]
    for p in bundle.parameters:
        if p in frame and not is_numeric(bundle, p):
            frame[p] = frame[p].astype(str)
    # column by column, not frame.iterrows(): a 30,000-row frame took 1.3-3.9 s, now 0.8-2.1
    # (10,000 configs, load 12; docs/performance.md, issue 37)
    frame.insert(list(frame.columns).index(C.ANNOTATION) + 1, F.SERIES, [
        " · ".join([str(a), *(f"{p}={v}" for p, v in zip(others, values))])
        for a, *values in zip(frame[C.ANNOTATION], *(frame[p] for p in others))])
    rank = {a: i for i, a in enumerate(annotations_of(bundle))}  # first-seen (catalog) order
    by_x = x if x in frame and is_numeric(bundle, x) else C.CONFIG
    return with_outcome(frame.assign(_rank=frame[C.ANNOTATION].map(rank))
                        .sort_values(["_rank", F.SERIES, by_x], kind="stable")
                        .drop(columns="_rank").reset_index(drop=True), bundle)


def _from_aggregated(bundle: Bundle, options: SweepOptions, metric: str) -> pd.DataFrame:
    """``metric`` from the aggregated table (plain nsight output without per-run rows): a
    duration in ``time_unit``, another metric in its own unit ("" when it has none)."""
    agg = bundle.table(C.TABLE_AGGREGATED)
    if agg.empty or C.METRIC not in agg:
        return pd.DataFrame()
    frame = agg[agg[C.METRIC] == metric].copy()
    if frame.empty:
        return pd.DataFrame()
    units = frame.get(C.UNIT, pd.Series([None] * len(frame), index=frame.index))
    scale, shown = ((derived.TIME_UNITS[options.time_unit], options.time_unit)
                    if derived.is_time(metric) else derived.shown_scale(units.unique()))
    for col in (C.AVG, C.STD, C.MIN, C.MAX, C.MEDIAN, C.CI95_LOWER, C.CI95_UPPER):
        if col in frame:
            frame[col] = frame[col].astype(float) / scale
    frame[C.UNIT] = shown or [metric_roles.unit_text(u) for u in units]
    keep = [c for c in (C.ANNOTATION, C.CONFIG, *bundle.parameters, C.UNIT, C.NUM_RUNS, C.AVG,
                        C.STD, C.MIN, C.MAX, C.MEDIAN, C.CI95_LOWER, C.CI95_UPPER, C.RSD,
                        C.STABLE, C.CI95_HALF_PCT) if c in frame]
    return frame[list(dict.fromkeys(keep))]
