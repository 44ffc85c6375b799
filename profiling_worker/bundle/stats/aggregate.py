"""Combine kernel launches into runs, and runs into statistics (pure pandas, no I/O).

The pipeline is ``launches -> runs -> aggregated`` (table layouts in
:mod:`profiling_worker.bundle.schema.columns`):

``launches``   one row per kernel launch x metric (Annotation, Config, <params>, Run, Launch,
               Kernel, Grid, Block, Metric, Value, Unit): the ground truth, read from the .ncu-rep.
``runs``       :func:`launches_to_runs` folds the launches of one annotation-run per metric with
               the rule :func:`combine_rule` picks (sum or duration-weighted mean).
``aggregated`` :func:`aggregate_runs` gives mean, sample std, min/max/median and a Student-t
               95 % confidence interval per annotation x config x metric.

Why not nsight-python's own extraction (docs/design-notes.md, "Where this project departs";
the H200 cases in docs/measurements-h200.md, "Numbers the analyses rest on"):

* it requires the same number of kernels in every run of every config and raises
  ``Expect same number of kernels per run`` otherwise (cuBLAS fp32 matmul on an H200 launches two
  kernels at n=512 and one at n>=1024), and when the total happens to divide evenly it silently
  attributes kernels to the wrong config. Here every row is keyed by its ``Config`` index, never by
  position, so a config with more launches cannot shift values into another config;
* ``combine_kernel_metrics`` applies one function to every metric, so ``lambda a, b: a + b`` sums
  percentages of peak. Here each metric is combined by the rule its Nsight Compute name implies
  (:mod:`profiling_worker.bundle.stats.combine_rules`); launch counts per run are checked in
  :mod:`profiling_worker.bundle.stats.kernel_counts`.

Units: durations in ns, bytes in byte, percentages in % (0-100), as Nsight Compute reports them;
nothing here converts units.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from profiling_worker.bundle.stats.combine_rules import (RULE_MEAN_UNWEIGHTED, RULE_SINGLE,
                                                         RULE_SUM, RULE_WEIGHTED, combine_rule)
from profiling_worker.bundle.stats import group_reduce
from profiling_worker.bundle.stats.kernel_counts import infer_param_names, require_columns
from profiling_worker.bundle.schema import columns as C, intervals

# --- launches -> runs ------------------------------------------------------------------------

def _first_valid(column: "pd.Series[Any]", codes: np.ndarray) -> "pd.Series[Any]":
    """The first non-missing value of each group of ``column`` (``codes``: each row's group,
    numbered in first-seen order), None where there is none (GroupBy.first skips missing
    values; a per-group Python function took 18 of 21 s on a 19 MB details-page import of 28k
    groups). A column with no missing value gives each group's first row, without a groupby
    (issue 40: a warm job's units)."""
    if not _missing(column).any():
        return pd.Series(column.to_numpy(dtype=object)[_first_rows(codes)], dtype=object)
    first: pd.Series[Any] = column.groupby(codes, sort=False).first().astype(object)
    return first.where(first.notna(), None)


def _missing(column: "pd.Series[Any]") -> np.ndarray:
    """``column.isna().to_numpy()``: found in its array as Series.isna finds them (an object
    column by the same isnaobj, an extension array by its own ``isna``), without a Series of
    the answer (issue 40: 0.1 ms of a warm job's units)."""
    if column.dtype == object:
        return np.asarray(pd.isna(column.to_numpy()))
    if isinstance(column.dtype, pd.api.extensions.ExtensionDtype):
        return np.asarray(column.array.isna())
    return column.isna().to_numpy()


def _read_columns(frame: pd.DataFrame, names: Sequence[str],
                  optional: Sequence[str] = ()) -> dict[str, "pd.Series[Any]"]:
    """``frame``'s columns ``names`` (name -> Series), each read once; an ``optional`` one it
    lacks is a Series of None (object) on its index.

    Raises:
        KeyError: ``frame`` lacks a column of ``names`` that is not optional.
    """
    have = set(frame.columns.tolist())
    return {name: frame[name] if name in have or name not in optional
            else pd.Series(None, index=frame.index, dtype=object)
            for name in dict.fromkeys(names)}


def _floats(column: "pd.Series[Any]") -> np.ndarray:
    """``pd.to_numeric(column, errors="coerce").astype("float64").to_numpy()``: one float64
    value per row (a float64 column's own values, copied, without pandas' conversion calls)."""
    if column.dtype == np.float64:
        return column.to_numpy(copy=True)
    out: np.ndarray = pd.to_numeric(column, errors="coerce").astype("float64").to_numpy()
    return out


#: A table made here: its columns in order (name -> values, each of the dtype a frame of them
#: gives it: :func:`as_frame`), or the frame itself where pandas had to make it (no rows, or
#: keys pandas sorts). The writer converts the columns to Arrow without a frame (issue 40).
Table = dict[str, Any] | pd.DataFrame


def as_frame(table: Table) -> pd.DataFrame:
    """``table``'s frame (:data:`Table`: made of its columns, or the frame it is)."""
    return table if isinstance(table, pd.DataFrame) else pd.DataFrame(table)


def launches_to_runs(launches: pd.DataFrame, param_names: Sequence[str] | None = None
                     ) -> pd.DataFrame:
    """The runs table of ``launches`` (:func:`runs_columns`' columns as a frame)."""
    return as_frame(runs_columns(launches, param_names))


def runs_columns(launches: pd.DataFrame, param_names: Sequence[str] | None = None) -> Table:
    """Combine the kernel launches of each annotation-run into one value per metric.

    For every (Annotation, Config, Run, Metric) the launch values are combined with
    :func:`combine_rule`:

    * ``sum``: the plain sum (ns, byte, counts).
    * duration-weighted mean: ``sum(v_i * d_i) / sum(d_i)`` where ``d_i`` is the same launch's
      ``gpu__time_duration.sum`` (or ``host__time_duration.sum`` if no GPU time was collected).
      Two kernels at 90 % and 80 % of DRAM peak lasting 30 us and 10 us give 87.5 %, not 170 %.
      If a launch of the group has no positive duration, the plain mean is used and the rule
      reads ``"mean (no duration to weight)"``.
    * a single launch: its value, rule ``"single"``.

    A NaN launch value (a failed replay) makes that run's value NaN: a partial sum or mean
    would look like a valid measurement.

    Rows are keyed by the ``Config`` index and never by position, so configs with different
    kernel counts (2 launches at n=512, 1 at n=1024) keep their own values.

    Args:
        launches: columns Annotation, Config, <params>, Run, Launch, Kernel, Grid, Block,
            Metric, Value, Unit (Kernel/Grid/Block/Unit may be absent; Value numeric).
        param_names: config parameter columns; None infers them.

    Returns:
        The runs table (:data:`Table`): Annotation, Config, <params>, Run, Metric, Value, Unit,
        Kernels, CombineRule; ``Kernels`` = distinct launches of that annotation-run (over all
        metrics). Sorted by Config, then Annotation and Metric in first-seen order, then Run.

    Raises:
        KeyError: a required column is missing.
    """
    require_columns(launches, (C.ANNOTATION, C.CONFIG, C.RUN, C.LAUNCH, C.METRIC, C.VALUE),
             "launches table")
    params = list(infer_param_names(launches) if param_names is None else param_names)
    out_cols = [C.ANNOTATION, C.CONFIG, *params, C.RUN, C.METRIC, C.VALUE, C.UNIT, C.KERNELS,
                C.COMBINE_RULE]
    if launches.empty:
        return pd.DataFrame({c: pd.Series(dtype=_dtype_of(launches, c)) for c in out_cols})

    # each column read once (issue 40: a frame's column access costs ~10 µs on a 40-row table)
    df = _read_columns(launches, [C.ANNOTATION, C.CONFIG, *params, C.RUN, C.LAUNCH, C.METRIC,
                                  C.VALUE, C.UNIT], optional=[C.UNIT])
    v = _floats(df[C.VALUE])
    unit = df[C.UNIT]

    # Per row: its launch's duration (GPU time when collected, else host time) and its run's
    # launch count, as arrays (a merge on the object key columns, then pandas transforms,
    # took most of this function's time on a warm job).
    # Groups by one integer code each (group_codes): a groupby on the key columns themselves
    # built a MultiIndex per groupby, most of this function's time on 40 rows.
    # Each key list extends the one before it (Annotation, Config; + Run; + Launch or Metric),
    # so its codes extend those of its prefix: each column is factorized once (issue 40).
    config_codes = group_codes(df, [C.ANNOTATION, C.CONFIG])
    run_codes = group_codes(df, [C.RUN], config_codes)
    w = np.full(len(v), np.nan)
    names = df[C.METRIC].tolist()  # Python values: a Series comparison per name cost more
    for dname in C.DURATION_METRICS:
        is_duration = np.array([isinstance(m, str) and m == dname for m in names], dtype=bool)
        if is_duration.any():
            # each launch's duration on every row of it: the group sum, NaN where it has none
            launch_codes = group_codes(df, [C.LAUNCH], run_codes)
            total, counts = group_reduce.sums(np.where(is_duration, v, np.nan), launch_codes)
            w = np.where(counts > 0, total, np.nan)[launch_codes]
            break
    # each run's launch count (distinct launches, missing ones left out), on every row of it
    launches_in_run = group_reduce.distinct(df[C.LAUNCH], run_codes)
    codes = group_codes(df, [C.METRIC], run_codes)  # Annotation, Config, Run, Metric
    # each group's sums as pandas' groupby gives them (group_reduce: a groupby per sum cost
    # most of this function on a warm job's 40 rows)
    v_sum, v_valid = group_reduce.sums(v, codes)
    first = _first_rows(codes)
    units = _first_valid(unit, codes)
    keys = _take_keys(df, first, [C.RUN, C.METRIC])
    n = np.bincount(codes)
    w_sum = group_reduce.sums(w, codes)[0]

    rule_of: dict[tuple[str, str | None], str] = {}
    rules = [rule_of.setdefault((m, u), combine_rule(m, u))
             for m, u in zip(keys[C.METRIC].tolist(), units.tolist())]
    is_sum = np.array([r.startswith(RULE_SUM) for r in rules], dtype=bool)
    # NaN or <= 0: a launch that cannot be weighted
    unweighted = (np.bincount(codes, weights=~(w > 0)) > 0) | ~(w_sum > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        weighted = group_reduce.sums(v * w, codes)[0] / w_sum
    values = np.where(n == 1, v_sum,
                      np.where(is_sum, v_sum,
                               np.where(unweighted, group_reduce.means(v_sum, v_valid),
                                        weighted)))
    values = np.where(v_valid < n, np.nan, values).astype("float64")
    applied = [
        RULE_SINGLE if k == 1 else
        rule if s else
        RULE_MEAN_UNWEIGHTED + rule[len(RULE_WEIGHTED):] if uw else rule
        for k, s, uw, rule in zip(n, is_sum, unweighted, rules)
    ]
    columns = {**_config_columns(df, config_codes, config_codes[first], params), **keys,
               C.VALUE: values, C.UNIT: units, C.KERNELS: launches_in_run[run_codes[first]],
               C.COMBINE_RULE: applied}
    return _sorted_table({c: columns[c] for c in out_cols}, with_run=True)


def group_codes(frame: pd.DataFrame | Mapping[str, "pd.Series[Any]"],
                keys: Sequence[str], prefix: np.ndarray | None = None) -> np.ndarray:
    """Each row's group of ``keys`` numbered in first-seen order, missing values forming one
    group per column: ``frame.groupby(keys, sort=False, dropna=False).ngroup()``'s numbers.
    ``frame``: a frame, or its columns read once (name -> Series, :func:`_read_columns`).

    Built from one factorization per column (:func:`group_reduce.factorize`), combined
    pairwise: a groupby on several columns builds a MultiIndex, which took 4-6 ms of 40 rows on
    the 2-core machine (a warm job's tables), against well under 1 ms for this; one integer key
    then groups cheaply.

    Args:
        prefix: ``group_codes(frame, first)``: the codes returned are then those of
            ``first + keys``, the same numbers, without factorizing ``first`` again.

    Returns:
        int64 array of ``len(frame)``.
    """
    # len(frame) of a mapping would count its columns: the rows are its first key column's
    rows = len(frame[keys[0]]) if keys else len(frame)
    codes = np.zeros(rows, dtype="int64") if prefix is None else prefix
    for key in keys:
        column, width = group_reduce.factorize(frame[key])
        codes = group_reduce.first_seen(codes * width + column)
    return codes


def _first_rows(codes: np.ndarray) -> np.ndarray:
    """Row position of each group's first row (codes numbered in first-seen order)."""
    first: np.ndarray = np.unique(codes, return_index=True)[1]
    return first


def _config_columns(df: Mapping[str, "pd.Series[Any]"], config_codes: np.ndarray,
                    group_config: np.ndarray, params: Sequence[str]) -> dict[str, Any]:
    """The Annotation, Config and parameter columns of groups whose (Annotation, Config) is
    ``group_config`` (numbered as ``config_codes`` of ``df``, in first-seen order), taken from
    each config's first row of ``df``: what a merge with ``kernel_counts.config_params(df)`` on
    the object key columns gave, in a fraction of its time. Each column keeps its dtype, as the
    merge did (:func:`_take`: a numpy array would have its dtype inferred anew)."""
    rows = _first_rows(config_codes)[group_config]  # row of config number i
    return {col: _take(df[col], rows) for col in (C.ANNOTATION, C.CONFIG, *params)}


def _take_keys(df: Mapping[str, "pd.Series[Any]"], rows: np.ndarray,
               cols: Sequence[str]) -> dict[str, Any]:
    """The key columns ``cols`` of groups whose first rows of ``df`` are ``rows``, with the
    dtype a groupby on the column gave its key (the column's; an object column's keys are
    inferred anew, as an Index of them is: strings become ``str``)."""
    out: dict[str, Any] = {}
    for col in cols:
        column = df[col]
        out[col] = (pd.Index(column.to_numpy()[rows]) if column.dtype == object
                    else _take(column, rows))
    return out


def _dtype_of(frame: pd.DataFrame, col: str) -> Any:
    if col in frame.columns:
        return frame[col].dtype
    return {C.VALUE: "float64", C.KERNELS: "int64", C.RUN: "int64", C.CONFIG: "int64"}.get(
        col, "object")


def _sorted_table(columns: dict[str, Any], with_run: bool) -> Table:
    """``columns`` (name -> one value per group, in order) with their rows sorted by Config,
    Annotation and Metric (first-seen order), then Run. Where every key is an integer (the
    usual table) each column is put in order and the columns are returned, a frame made of
    them once where one is needed (:func:`as_frame`): setting each column into a frame, or
    sorting a made frame, cost more than the statistics on a warm job's 40 rows (pandas 3's
    column labels are arrow strings, rebuilt at every insert); else pandas sorts the frame,
    which is returned."""
    keys = {"c": columns[C.CONFIG],
            "a": group_reduce.factorize(columns[C.ANNOTATION], na_sentinel=True)[0],
            "m": group_reduce.factorize(columns[C.METRIC], na_sentinel=True)[0],
            **({"r": columns[C.RUN]} if with_run else {})}
    ordered = [np.asarray(k) for k in keys.values()]
    if all(k.dtype.kind in "iu" for k in ordered):  # np.lexsort: the same stable order, on
        order = np.lexsort(ordered[::-1])  # integers, without pandas' per-key Categorical
        # groups are numbered in first-seen order, which the usual table's launches already
        # are in: then every column is in order as it is (the frame copies them)
        kept = None if np.array_equal(order, np.arange(len(order))) else order
        return {name: _take(values, kept) for name, values in columns.items()}
    frame = pd.DataFrame(columns)
    by = pd.DataFrame({**keys, "c": frame[C.CONFIG].array,
                       **({"r": frame[C.RUN].array} if with_run else {})})
    order = by.sort_values(list(keys), kind="stable").index.to_numpy()
    return frame.iloc[order].reset_index(drop=True)


def _take(values: Any, order: np.ndarray | None) -> Any:
    """``values`` (a Series, an Index, an array, pandas' or numpy's, or a list) at positions
    ``order`` (None: all, in order, not copied), of the dtype a frame gives the Series' column
    (a Series as its array: no index to align, as Series.take and reset_index gave; an object
    one stays a Series, whose strings a frame would infer as str)."""
    if isinstance(values, pd.Series):
        taken = values.array if order is None else values.array.take(order)
        return pd.Series(taken, dtype=object) if values.dtype == object else taken
    if order is None:
        return values
    if isinstance(values, (pd.Index, np.ndarray, pd.api.extensions.ExtensionArray)):
        return values.take(order)
    return [values[i] for i in order]


# --- runs -> aggregated ----------------------------------------------------------------------

def t_ci95_halfwidth(std: float, n: int) -> float:
    """Half-width of the two-sided 95 % Student-t interval of a mean.

    Args:
        std: sample standard deviation (ddof=1).
        n: number of samples.

    Returns:
        ``t(0.975, n-1) * std / sqrt(n)`` (:func:`intervals.ci95_half_width`); NaN for n <= 1
        or a NaN std (no spread can be estimated).
    """
    return float(intervals.ci95_half_width(std, n))


def aggregate_runs(runs: pd.DataFrame, param_names: Sequence[str] | None = None) -> pd.DataFrame:
    """The aggregated table of ``runs`` (:func:`aggregated_columns`' columns as a frame)."""
    return as_frame(aggregated_columns(runs, param_names))


def aggregated_columns(runs: pd.DataFrame, param_names: Sequence[str] | None = None) -> Table:
    """Statistics over the runs of each annotation x config x metric.

    NaN run values (failed runs) are left out; ``NumRuns`` counts the values used.

    * ``AvgValue`` mean; ``StdDev`` sample standard deviation (ddof=1), NaN for one run
      (n - 1 = 0: undefined, as nsight-python leaves it);
      ``MinValue``/``MaxValue``/``MedianValue``; all in the metric's unit (ns, byte, %).
    * ``CI95_Lower``/``CI95_Upper`` = mean -/+ ``t(0.975, n-1) * std / sqrt(n)`` (Student's
      t with n-1 degrees of freedom), the lower bound cut at 0 when no run is negative
      (:data:`profiling_worker.bundle.schema.intervals.CI_METHOD`). nsight-python uses the normal
      approximation ``1.96 * std / sqrt(n)``, which is too narrow for the usual 3-10 runs
      (t = 4.30 for 3 runs, 12.71 for 2, 2.26 for 10). For one run both bounds are NaN: there
      is no interval (:data:`~profiling_worker.bundle.schema.intervals.ONE_RUN_NOTE`).
    * ``RelativeStdDevPct`` = ``100 * std / |mean|`` (%); 0.0 when std and mean are both 0,
      ``inf`` when only the mean is 0, NaN for one run.
    * ``StableMeasurement`` True iff at least 2 runs and RSD < ``columns.STABLE_RSD_PCT`` (2 %);
      one run cannot show stability, so it is False (nsight-python 0.9.x also gives False there).
    * ``Kernels`` median launches per run (from the runs table's Kernels); ``KernelsVary`` True
      when that count differs between the runs of this annotation x config x metric.

    A group with no valid value at all keeps NumRuns 0 and NaN statistics.

    Args:
        runs: the runs table (Annotation, Config, <params>, Run, Metric, Value, Unit, Kernels,
            CombineRule); Unit and Kernels may be absent.
        param_names: config parameter columns; None infers them.

    Returns:
        The aggregated table (:data:`Table`): Annotation, Config, <params>, Metric, Unit,
        NumRuns, AvgValue, StdDev, MinValue, MaxValue, MedianValue, CI95_Lower, CI95_Upper,
        RelativeStdDevPct, StableMeasurement, Kernels, KernelsVary; sorted by Config, then
        Annotation and Metric in first-seen order.

    Raises:
        KeyError: a required column is missing.
    """
    require_columns(runs, (C.ANNOTATION, C.CONFIG, C.METRIC, C.VALUE), "runs table")
    params = list(infer_param_names(runs) if param_names is None else param_names)
    out_cols = [C.ANNOTATION, C.CONFIG, *params, C.METRIC, C.UNIT, C.NUM_RUNS, C.AVG, C.STD,
                C.MIN, C.MAX, C.MEDIAN, C.CI95_LOWER, C.CI95_UPPER, C.RSD, C.STABLE, C.KERNELS,
                C.KERNELS_VARY]
    if runs.empty:
        dtypes = {C.NUM_RUNS: "int64", C.STABLE: "bool", C.KERNELS_VARY: "bool",
                  C.CONFIG: "int64", C.UNIT: "object", C.ANNOTATION: "object",
                  C.METRIC: "object"}
        return pd.DataFrame({c: pd.Series(dtype=runs[c].dtype if c in runs.columns and c in
                                          params else dtypes.get(c, "float64"))
                             for c in out_cols})

    # each column read once (its key columns are read, never written)
    df = _read_columns(runs, [C.ANNOTATION, C.CONFIG, *params, C.METRIC, C.VALUE, C.UNIT],
                       optional=[C.UNIT])
    config_codes = group_codes(df, [C.ANNOTATION, C.CONFIG])
    codes = group_codes(df, [C.METRIC], config_codes)
    # each group's statistics as pandas' groupby gives them (group_reduce: a groupby per
    # statistic cost most of this function on a warm job's 40 runs)
    value = _floats(df[C.VALUE])
    total, counts = group_reduce.sums(value, codes)
    kernels = (runs[C.KERNELS] if C.KERNELS in runs.columns
               else pd.Series(np.nan, index=runs.index))
    # a numpy column's values cast by numpy, as Series.astype casts them (issue 40: pandas'
    # astype cost 0.1-0.2 ms of a warm job's 40 runs); another dtype is left to pandas
    kernel_values = (kernels.to_numpy().astype("float64")
                     if isinstance(kernels.dtype, np.dtype) and kernels.dtype.kind in "iuf"
                     else kernels.astype("float64").to_numpy())
    std = group_reduce.stds(value, codes)
    low, high = group_reduce.extremes(value, codes)
    first = _first_rows(codes)
    group_config = config_codes[first]
    mean = group_reduce.means(total, counts)
    ci_lower, ci_upper = intervals.ci95_bounds(mean, std, counts, low,
                                               df[C.METRIC].to_numpy(dtype=object)[first])
    rsd = intervals.rsd_pct(mean, std)
    columns = {
        **_config_columns(df, config_codes, group_config, params),
        **_take_keys(df, first, [C.METRIC]),
        C.UNIT: _first_valid(df[C.UNIT], codes),
        C.NUM_RUNS: counts, C.AVG: mean, C.STD: std, C.MIN: low, C.MAX: high,
        C.MEDIAN: group_reduce.medians(value, codes), C.CI95_LOWER: ci_lower,
        C.CI95_UPPER: ci_upper, C.RSD: rsd, C.STABLE: intervals.stable(counts, rsd),
        C.KERNELS: group_reduce.medians(kernel_values, codes),
        C.KERNELS_VARY: group_reduce.distinct(kernels, codes) > 1}
    return _sorted_table({c: columns[c] for c in out_cols}, with_run=False)


__all__ = ["launches_to_runs", "aggregate_runs", "t_ci95_halfwidth", "runs_columns",
           "aggregated_columns", "as_frame", "Table"]
