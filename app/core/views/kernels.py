"""Per-kernel breakdown from the launches table: every launch with its metrics, kernel counts per
annotation x config (and whether they vary between runs), and the combine rule of each metric."""

from __future__ import annotations

import pandas as pd

from profiling_worker.bundle.schema import columns as C, kernel_filter

from profiling_worker.bundle.loader import Bundle
from app.core.metrics import MissingData, in_job_order, with_labels
from app.core.views.run_audit import with_outcome
from app.core import frame_columns as F


def _launches(bundle: Bundle) -> pd.DataFrame:
    launches = bundle.table(C.TABLE_LAUNCHES)
    if launches.empty or C.KERNEL not in launches:
        raise MissingData("This job has no per-launch table.",
                          "Per-launch rows come from the .ncu-rep (ncu backend) or CUPTI records;"
                          " plain nsight-python CSVs have none.")
    return launches


def launches_frame(bundle: Bundle) -> pd.DataFrame:
    """One row per launch, one column per metric.

    Returns:
        Annotation, Config, <params>, ConfigLabel, Run, Launch, Kernel, Grid, Block, then one
        column per collected metric (its unit in the name, e.g. ``gpu__time_duration.sum [ns]``).
    """
    launches = _launches(bundle)
    keys = [c for c in (C.ANNOTATION, C.CONFIG, *bundle.parameters, C.RUN, C.LAUNCH, C.KERNEL,
                        C.GRID, C.BLOCK) if c in launches]
    named = launches.assign(_m=launches[C.METRIC] + " [" + launches[C.UNIT].fillna("") + "]")
    order = list(dict.fromkeys(named["_m"]))
    wide = (named.drop_duplicates(keys + ["_m"]).set_index(keys + ["_m"])[C.VALUE]
            .unstack("_m"))
    wide = wide[order].reset_index()
    wide.columns.name = None
    wide = in_job_order(wide, bundle, (C.CONFIG, C.RUN, C.LAUNCH, C.ANNOTATION))
    return with_labels(wide, bundle.parameters)


def _sorted_names(kernels: pd.Series) -> tuple[str, ...]:
    """The kernel names a run launched, sorted (its launch order aside, to compare runs)."""
    return tuple(sorted(kernels))


def kernel_counts_frame(bundle: Bundle) -> pd.DataFrame:
    """Kernel launches per run of each annotation x config.

    Returns:
        Annotation, Config, <params>, ConfigLabel, KernelsPerRun (min launches over runs),
        MaxPerRun (max launches over runs), VariesBetweenRuns (True when the number of launches
        or the kernel names launched differ between runs), Kernels (distinct names, ' + '
        joined). The mean time of each kernel name is in :func:`kernel_time_frame`.

    Raises:
        MissingData: the job has no per-launch table.
    """
    launches = _launches(bundle)
    keys = [c for c in (C.ANNOTATION, C.CONFIG, *bundle.parameters) if c in launches]
    per_run = (launches.drop_duplicates(keys + [C.RUN, C.LAUNCH])
               .groupby(keys + [C.RUN], sort=False)[C.KERNEL]
               .agg(["size", _sorted_names]).reset_index())
    per_run.columns = [*keys, C.RUN, "_count", "_names"]
    counts = per_run.groupby(keys, sort=False).agg(
        **{F.KERNELS_PER_RUN: ("_count", "min"), F.MAX_PER_RUN: ("_count", "max"),
           "_kinds": ("_names", "nunique")}).reset_index()
    counts[F.VARIES_BETWEEN_RUNS] = ((counts[F.KERNELS_PER_RUN] != counts[F.MAX_PER_RUN])
                                     | (counts.pop("_kinds") > 1))
    names = (launches.groupby(keys, sort=False)[C.KERNEL]
             .agg(lambda s: " + ".join(dict.fromkeys(s))).rename(F.KERNEL_NAMES).reset_index())
    return with_labels(in_job_order(counts.merge(names, on=keys), bundle, (C.CONFIG, C.ANNOTATION)),
                       bundle.parameters)


def kernel_time_frame(bundle: Bundle) -> pd.DataFrame:
    """Mean duration of each kernel name per annotation x config (for the stacked chart).

    A kernel absent from a run counts 0 ns for that run, so the mean is over every run of the
    region and the kernels' means add up to the region's mean run time (runs table).

    Returns:
        Annotation, Config, <params>, ConfigLabel, Kernel, MeanTimeNs (ns: the kernel's summed
        launch durations per run, averaged over all runs of the region), Share (% of the
        region's mean run time), and ``Run audit``, the region x config's run audit badge
        as on the Size sweep (:func:`app.core.views.run_audit.with_outcome`; absent for a job
        without an audit).

    Raises:
        MissingData: the job has no per-launch table.
    """
    launches = _launches(bundle)
    timed = launches[launches[C.METRIC] == bundle.duration_metric]
    keys = [c for c in (C.ANNOTATION, C.CONFIG, *bundle.parameters) if c in timed]
    runs = timed.groupby(keys, sort=False)[C.RUN].nunique().rename("_runs").reset_index()
    total = timed.groupby(keys + [C.KERNEL], sort=False)[C.VALUE].sum().reset_index()
    mean = total.merge(runs, on=keys)
    mean[F.MEAN_TIME_NS] = mean.pop(C.VALUE) / mean.pop("_runs")
    mean[F.SHARE] = 100 * mean[F.MEAN_TIME_NS] / mean.groupby(keys)[F.MEAN_TIME_NS].transform("sum")
    return with_outcome(with_labels(in_job_order(mean, bundle, (C.CONFIG, C.ANNOTATION)),
                                    bundle.parameters), bundle)


def unattributed_frame(bundle: Bundle) -> pd.DataFrame:
    """Launches that belong to no config or no annotation (table ``unattributed``), counted.

    Returns:
        Annotation ("" = outside every annotation), Config (-1 = unknown), Kernel, Reason,
        Launches, TotalNs (summed duration where the duration metric was read); empty when
        the job has none (or is older than the table).
    """
    table = bundle.table(C.TABLE_UNATTRIBUTED)
    cols = [C.ANNOTATION, C.CONFIG, C.KERNEL, C.REASON, F.LAUNCHES, F.TOTAL_NS]
    if table.empty or C.KERNEL not in table:
        return pd.DataFrame(columns=cols)
    metrics = table[C.METRIC].dropna()
    metric = bundle.duration_metric if (metrics == bundle.duration_metric).any() else \
        (metrics.iloc[0] if len(metrics) else None)
    rows = table[table[C.METRIC] == metric]
    keys = [C.ANNOTATION, C.CONFIG, C.KERNEL, C.REASON]
    out = rows.groupby(keys, sort=False, dropna=False)[C.VALUE].agg(["size", "sum"]).reset_index()
    out = out.rename(columns={"size": F.LAUNCHES, "sum": F.TOTAL_NS})
    if metric != bundle.duration_metric:
        out[F.TOTAL_NS] = float("nan")
    return out[cols]


def split_ignored(outside: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(not attributed, ignored): the rows of :func:`unattributed_frame` whose launches the
    job's ``ignore_kernels`` left out (Reason :data:`kernel_filter.IGNORED_REASON`), apart."""
    ignored = outside[C.REASON] == kernel_filter.IGNORED_REASON
    return outside[~ignored].reset_index(drop=True), outside[ignored].reset_index(drop=True)


def combine_rules_frame(bundle: Bundle) -> pd.DataFrame:
    """Which rule combined several launches into one value, per metric (runs table).

    Returns:
        Metric, Unit, CombineRule (``sum``, ``duration-weighted mean`` or ``single``; several
        joined when they differ between regions), Regions (annotation x config pairs).
    """
    runs = bundle.table(C.TABLE_RUNS)
    if runs.empty or C.COMBINE_RULE not in runs:
        return pd.DataFrame(columns=[C.METRIC, C.UNIT, C.COMBINE_RULE, F.REGIONS])
    grouped = runs.groupby([C.METRIC, C.UNIT], sort=False)
    out = grouped[C.COMBINE_RULE].agg(lambda s: " / ".join(sorted(set(s)))).reset_index()
    regions = runs.drop_duplicates([C.METRIC, C.UNIT, C.ANNOTATION, C.CONFIG])
    out[F.REGIONS] = regions.groupby([C.METRIC, C.UNIT], sort=False).size().to_numpy()
    return out
