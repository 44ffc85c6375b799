"""Combine kernel launches into runs, and runs into statistics (pure pandas, no I/O).

The pipeline is ``launches -> runs -> aggregated`` (table layouts in
:mod:`profiling_worker.schema.columns`):

``launches``   one row per kernel launch x metric (Annotation, Config, <params>, Run, Launch,
               Kernel, Grid, Block, Metric, Value, Unit): the ground truth, read from the .ncu-rep.
``runs``       :func:`launches_to_runs` folds the launches of one annotation-run per metric with
               the rule :func:`combine_rule` picks (sum or duration-weighted mean).
``aggregated`` :func:`aggregate_runs` gives mean, sample std, min/max/median and a Student-t
               95 % confidence interval per annotation x config x metric.

Why not nsight-python's own extraction (ARCHITECTURE.md, "Metrics done right";
research/nsight-python.md §0.4, §0.9, §3.5):

* it requires the same number of kernels in every run of every config and raises
  ``Expect same number of kernels per run`` otherwise (cuBLAS fp32 matmul on an H200 launches two
  kernels at n=512 and one at n>=1024), and when the total happens to divide evenly it silently
  attributes kernels to the wrong config. Here every row is keyed by its ``Config`` index, never by
  position, so a config with more launches cannot shift values into another config;
* ``combine_kernel_metrics`` applies one function to every metric, so ``lambda a, b: a + b`` sums
  percentages of peak (176 % of DRAM peak was seen on an H200). Here each metric is combined by
  the rule its Nsight Compute name implies.

Units: durations in ns, bytes in byte, percentages in % (0-100), as Nsight Compute reports them;
nothing here converts units.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from profiling_worker.schema import columns as C, intervals

# --- combine rules ---------------------------------------------------------------------------

RULE_SUM = "sum"
RULE_WEIGHTED = "duration-weighted mean"
RULE_MEAN_UNWEIGHTED = "mean (no duration to weight)"
RULE_SINGLE = "single"
#: Suffix added to the rule when the metric name was not recognised and the unit (or the
#: default) decided; shown in the CombineRule column so a reader can tell a guess from a rule.
UNKNOWN_KIND_NOTE = " (unknown metric kind)"

_ROLLUPS = frozenset({"sum", "avg", "min", "max"})
# Sub-metrics that express a rate, a ratio or a fraction of a peak: intensive quantities.
# A duration-weighted mean of "counter / elapsed time" over launches run one after the other is
# exactly "total counter / total time", which is what the combined region achieved.
_RATE_SUBMETRIC = re.compile(
    r"^(per_second|per_cycle_\w+|per_\w+|pct(_of_\w+)?|ratio|max_rate|peak_\w+)$"
)
# Units that are rates, ratios or fractions (intensive) vs amounts (extensive); used only for
# names that do not follow the Nsight Compute structure.
_INTENSIVE_UNIT = re.compile(r"(%|/|\bper\b|hz$|ratio|second$)", re.IGNORECASE)
_EXTENSIVE_UNIT = re.compile(
    r"^([kmgtp]?(byte|bytes|b)|[mun]?s(econd)?|[mun]?sec|ns|usecond|msecond|nsecond|cycle|cycles|"
    r"inst|instructions?|warp|warps|sector|sectors|request|requests|thread|threads|block|blocks|"
    r"count|flop|flops|op|ops)$",
    re.IGNORECASE,
)


def combine_rule(metric: str, unit: str | None = None) -> str:
    """How the values of one metric from several launches of one run are combined.

    Decided by Nsight Compute's metric naming ``<unit>__<counter>.<rollup>[.<sub-metric>]``
    (rollups ``sum``/``avg``/``min``/``max``; sub-metrics such as ``per_second``,
    ``pct_of_peak_sustained_elapsed``, ``ratio``) -- see ARCHITECTURE.md "Metrics done right":
    durations, counts and bytes add; percentages of peak, rates and averages are
    duration-weighted means.

    Rules, first match wins:

    1. ``gpu__time_duration.*`` and ``host__time_duration.*`` (ns): ``"sum"``.
    2. A rate / ratio / percentage sub-metric after the rollup (``.per_second``,
       ``.per_cycle_active``, ``.pct_of_peak_sustained_elapsed``, ``.pct``, ``.ratio``,
       ``.max_rate``, ``.peak_sustained``), or a name ending in ``.pct``/``.ratio``:
       ``"duration-weighted mean"``. E.g. ``dram__throughput.avg.pct_of_peak_sustained_elapsed``
       (%), ``dram__bytes.sum.per_second`` (byte/s), ``gpc__cycles_elapsed.avg.per_second`` (Hz).
    3. Rollup ``.sum`` with no sub-metric (``dram__bytes_read.sum``, byte;
       ``smsp__inst_executed.sum``, inst): ``"sum"``.
    4. Rollup ``.avg``/``.min``/``.max`` with no sub-metric: these are still *counter values*
       (``sm__cycles_elapsed.avg`` = cycles per SM instance, averaged over the SMs), and kernels
       run one after another, so their per-unit counts add: ``"sum"``. (For ``.min``/``.max``
       the sum of per-launch extremes bounds the extreme of the sum; exact for one launch.)
    5. ``launch__*`` and ``device__*`` attributes (grid size, registers, device limits) are
       properties of a launch, not accumulated quantities: ``"duration-weighted mean"``.
    6. Anything else (derived metrics, user names) is decided by ``unit`` when given: an amount
       (ns, byte, cycle, inst, ...) -> ``"sum (unknown metric kind)"``, a rate or fraction
       (%, x/second, Hz, ratio) -> ``"duration-weighted mean (unknown metric kind)"``; without a
       unit -> ``"duration-weighted mean (unknown metric kind)"``, because a mean of k values of a
       count is off by the factor k but stays inside the range of the launches, while a sum of
       percentages produces impossible values. The suffix makes the guess visible.

    Args:
        metric: an Nsight Compute metric name, e.g. ``"dram__bytes_read.sum"``.
        unit: the metric's unit if known (``"ns"``, ``"%"``, ``"byte"``, ``"byte/second"``);
            only consulted for names rule 1-5 do not recognise.

    Returns:
        ``"sum"`` or ``"duration-weighted mean"``, each possibly followed by
        ``" (unknown metric kind)"``. (:func:`launches_to_runs` reports ``"single"`` for one
        launch and ``"mean (no duration to weight)"`` when no duration was collected.)
    """
    name = str(metric).strip()
    base = name.split(":")[-1]  # "breakdown:sm__throughput.avg.pct..." -> the metric itself
    if base.startswith(("gpu__time_duration", "host__time_duration")):
        return RULE_SUM
    parts = base.split(".")
    if "__" in parts[0] and len(parts) >= 2:
        # Find the rollup; everything after it is the sub-metric chain.
        rollup_at = next((i for i, p in enumerate(parts[1:], 1) if p in _ROLLUPS), None)
        tail = parts[rollup_at + 1:] if rollup_at is not None else parts[1:]
        if any(_RATE_SUBMETRIC.match(p) for p in tail):
            return RULE_WEIGHTED
        if rollup_at is not None and not tail:
            return RULE_SUM
    if base.startswith(("launch__", "device__")):
        return RULE_WEIGHTED
    if unit is not None and isinstance(unit, str) and unit.strip():
        u = unit.strip()
        if _INTENSIVE_UNIT.search(u):
            return RULE_WEIGHTED + UNKNOWN_KIND_NOTE
        if _EXTENSIVE_UNIT.match(u):
            return RULE_SUM + UNKNOWN_KIND_NOTE
    return RULE_WEIGHTED + UNKNOWN_KIND_NOTE


# --- launches -> runs ------------------------------------------------------------------------

#: Columns of a launches table that are not config parameters.
LAUNCH_FIXED = (C.ANNOTATION, C.CONFIG, C.RUN, C.LAUNCH, C.KERNEL, C.GRID, C.BLOCK, C.METRIC,
                C.VALUE, C.UNIT)


def infer_param_names(frame: pd.DataFrame) -> list[str]:
    """Config parameter columns of a long table: every column that is not a schema column.

    Args:
        frame: a launches, runs or aggregated table.

    Returns:
        The parameter names in column order.
    """
    return [c for c in frame.columns if c not in C.RESERVED]


def _require(frame: pd.DataFrame, needed: Iterable[str], what: str) -> None:
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise KeyError(f"{what} lacks column(s) {', '.join(missing)}; has {list(frame.columns)}")


def _config_params(frame: pd.DataFrame, param_names: Sequence[str]) -> pd.DataFrame:
    """One row per (Annotation, Config) with the parameter values of that config."""
    keys = [C.ANNOTATION, C.CONFIG]
    return frame.drop_duplicates(keys)[keys + list(param_names)].reset_index(drop=True)


def kernel_counts(launches: pd.DataFrame, param_names: Sequence[str] | None = None) -> pd.DataFrame:
    """Number of kernel launches per annotation x config x run.

    Args:
        launches: the launches table (see module docstring).
        param_names: config parameter columns; None infers them (columns not in the schema).

    Returns:
        Columns Annotation, Config, <params>, Run, Kernels (distinct Launch indices of that
        annotation-run, over all metrics), sorted by Config, Annotation (first-seen), Run.

    Raises:
        KeyError: a required column is missing.
    """
    _require(launches, (C.ANNOTATION, C.CONFIG, C.RUN, C.LAUNCH), "launches table")
    params = list(infer_param_names(launches) if param_names is None else param_names)
    keys = [C.ANNOTATION, C.CONFIG, C.RUN]
    counts = (launches.groupby(keys, sort=False, dropna=False)[C.LAUNCH].nunique()
              .rename(C.KERNELS).reset_index())
    out = counts.merge(_config_params(launches, params), on=[C.ANNOTATION, C.CONFIG], how="left")
    out = out[[C.ANNOTATION, C.CONFIG, *params, C.RUN, C.KERNELS]]
    return out.sort_values([C.CONFIG, C.RUN], kind="stable").reset_index(drop=True)


def configs_with_varying_kernels(counts: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`kernel_counts` whose annotation x config has different counts per run.

    A count that differs between *configs* is normal (cuBLAS picks split-K at one size) and is
    not listed; a count that differs between *runs* of one config (autotuning, a one-time
    kernel inside the range) makes the runs incomparable and deserves a warning.

    Args:
        counts: output of :func:`kernel_counts`.

    Returns:
        The same columns, only the rows of annotation x config pairs with more than one distinct
        Kernels value (empty when every config is consistent).
    """
    n = counts.groupby([C.ANNOTATION, C.CONFIG], sort=False, dropna=False)[C.KERNELS] \
        .transform("nunique")
    return counts[n > 1].reset_index(drop=True)


def kernels_per_config(counts: pd.DataFrame) -> pd.DataFrame:
    """Median launches per run for each annotation x config (for the per-config count table).

    Args:
        counts: output of :func:`kernel_counts`.

    Returns:
        Columns Annotation, Config, <params>, Kernels (median over runs), KernelsVary.
    """
    params = infer_param_names(counts)
    g = counts.groupby([C.ANNOTATION, C.CONFIG], sort=False, dropna=False)[C.KERNELS]
    out = pd.DataFrame({C.KERNELS: g.median(), C.KERNELS_VARY: g.nunique() > 1}).reset_index()
    out = out.merge(_config_params(counts, params), on=[C.ANNOTATION, C.CONFIG], how="left")
    return out[[C.ANNOTATION, C.CONFIG, *params, C.KERNELS, C.KERNELS_VARY]]


def _first_valid(s: pd.Series) -> Any:
    v = s.dropna()
    return v.iloc[0] if len(v) else None


def launches_to_runs(launches: pd.DataFrame, param_names: Sequence[str] | None = None) -> pd.DataFrame:
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
        The runs table: Annotation, Config, <params>, Run, Metric, Value, Unit, Kernels,
        CombineRule; ``Kernels`` = distinct launches of that annotation-run (over all metrics).
        Sorted by Config, then Annotation and Metric in first-seen order, then Run.

    Raises:
        KeyError: a required column is missing.
    """
    _require(launches, (C.ANNOTATION, C.CONFIG, C.RUN, C.LAUNCH, C.METRIC, C.VALUE),
             "launches table")
    params = list(infer_param_names(launches) if param_names is None else param_names)
    out_cols = [C.ANNOTATION, C.CONFIG, *params, C.RUN, C.METRIC, C.VALUE, C.UNIT, C.KERNELS,
                C.COMBINE_RULE]
    if launches.empty:
        return pd.DataFrame({c: pd.Series(dtype=_dtype_of(launches, c)) for c in out_cols})

    df = launches.copy()
    df[C.VALUE] = pd.to_numeric(df[C.VALUE], errors="coerce").astype("float64")
    if C.UNIT not in df.columns:
        df[C.UNIT] = None
    run_keys = [C.ANNOTATION, C.CONFIG, C.RUN]
    launch_keys = run_keys + [C.LAUNCH]

    # Duration of each launch: GPU time when collected, else host time.
    duration = pd.Series(dtype="float64")
    for dname in C.DURATION_METRICS:
        d = df[df[C.METRIC] == dname]
        if not d.empty:
            duration = d.groupby(launch_keys, sort=False, dropna=False)[C.VALUE].sum(min_count=1)
            break
    if duration.empty:
        df["_w"] = np.nan
    else:
        df = df.merge(duration.rename("_w").reset_index(), on=launch_keys, how="left")

    kernels = (df.groupby(run_keys, sort=False, dropna=False)[C.LAUNCH].nunique()
               .rename(C.KERNELS).reset_index())

    group_keys = run_keys + [C.METRIC]
    df["_vw"] = df[C.VALUE] * df["_w"]
    df["_wbad"] = ~(df["_w"] > 0)  # NaN or <= 0: this launch cannot be weighted
    g = df.groupby(group_keys, sort=False, dropna=False)
    res = pd.DataFrame({
        "_n": g[C.VALUE].size(),
        "_valid": g[C.VALUE].count(),
        "_sum": g[C.VALUE].sum(),
        "_mean": g[C.VALUE].mean(),
        "_wsum": g["_w"].sum(),
        "_wbad": g["_wbad"].any(),
        "_vwsum": g["_vw"].sum(),
        C.UNIT: g[C.UNIT].agg(_first_valid),
    }).reset_index()

    rule_of: dict[tuple[str, str | None], str] = {}
    rules = [rule_of.setdefault((m, u), combine_rule(m, u))
             for m, u in zip(res[C.METRIC], res[C.UNIT])]
    n = res["_n"].to_numpy()
    is_sum = np.array([r.startswith(RULE_SUM) for r in rules], dtype=bool)
    unweighted = res["_wbad"].to_numpy(dtype=bool) | ~(res["_wsum"].to_numpy() > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        weighted = res["_vwsum"].to_numpy() / res["_wsum"].to_numpy()
    values = np.where(n == 1, res["_sum"].to_numpy(),
                      np.where(is_sum, res["_sum"].to_numpy(),
                               np.where(unweighted, res["_mean"].to_numpy(), weighted)))
    values = np.where(res["_valid"].to_numpy() < n, np.nan, values).astype("float64")
    applied = [
        RULE_SINGLE if k == 1 else
        rule if s else
        RULE_MEAN_UNWEIGHTED + rule[len(RULE_WEIGHTED):] if uw else rule
        for k, s, uw, rule in zip(n, is_sum, unweighted, rules)
    ]
    res[C.VALUE] = values
    res[C.COMBINE_RULE] = applied
    res = res.merge(kernels, on=run_keys, how="left")
    res = res.merge(_config_params(df, params), on=[C.ANNOTATION, C.CONFIG], how="left")
    res = _sort_first_seen(res[out_cols], with_run=True)
    return res


def _dtype_of(frame: pd.DataFrame, col: str) -> Any:
    if col in frame.columns:
        return frame[col].dtype
    return {C.VALUE: "float64", C.KERNELS: "int64", C.RUN: "int64", C.CONFIG: "int64"}.get(
        col, "object")


def _sort_first_seen(frame: pd.DataFrame, with_run: bool) -> pd.DataFrame:
    """Sort by Config, Annotation and Metric (first-seen order), then Run."""
    f = frame.copy()
    f["_a"] = pd.factorize(f[C.ANNOTATION])[0]
    f["_m"] = pd.factorize(f[C.METRIC])[0]
    keys = [C.CONFIG, "_a", "_m"] + ([C.RUN] if with_run else [])
    return f.sort_values(keys, kind="stable").drop(columns=["_a", "_m"]).reset_index(drop=True)


# --- runs -> aggregated ----------------------------------------------------------------------

def t_ci95_halfwidth(std: float, n: int) -> float:
    """Half-width of the two-sided 95 % Student-t interval of a mean.

    Args:
        std: sample standard deviation (ddof=1).
        n: number of samples.

    Returns:
        ``t(0.975, n-1) * std / sqrt(n)`` (:func:`intervals.ci95_half_width`); 0.0 for n <= 1
        (no spread can be estimated).
    """
    if n <= 1 or not np.isfinite(std):
        return 0.0
    return float(intervals.ci95_half_width(std, n))


def aggregate_runs(runs: pd.DataFrame, param_names: Sequence[str] | None = None) -> pd.DataFrame:
    """Statistics over the runs of each annotation x config x metric.

    NaN run values (failed runs) are left out; ``NumRuns`` counts the values used.

    * ``AvgValue`` mean; ``StdDev`` sample standard deviation (ddof=1), 0.0 for one run;
      ``MinValue``/``MaxValue``/``MedianValue``; all in the metric's unit (ns, byte, %).
    * ``CI95_Lower``/``CI95_Upper`` = mean -/+ ``t(0.975, n-1) * std / sqrt(n)`` (Student's
      t with n-1 degrees of freedom), the lower bound cut at 0 when no run is negative
      (:data:`profiling_worker.schema.intervals.CI_METHOD`). nsight-python uses the normal
      approximation ``1.96 * std / sqrt(n)``, which is too narrow for the usual 3-10 runs
      (t = 4.30 for 3 runs, 2.26 for 10). For one run the interval collapses to the value itself
      (lower = upper = value): it carries no information about spread, and NumRuns says so.
    * ``RelativeStdDevPct`` = ``100 * std / |mean|`` (%); 0.0 when std and mean are both 0,
      ``inf`` when only the mean is 0.
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
        Annotation, Config, <params>, Metric, Unit, NumRuns, AvgValue, StdDev, MinValue,
        MaxValue, MedianValue, CI95_Lower, CI95_Upper, RelativeStdDevPct, StableMeasurement,
        Kernels, KernelsVary; sorted by Config, then Annotation and Metric in first-seen order.

    Raises:
        KeyError: a required column is missing.
    """
    _require(runs, (C.ANNOTATION, C.CONFIG, C.METRIC, C.VALUE), "runs table")
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

    df = runs.copy()
    df[C.VALUE] = pd.to_numeric(df[C.VALUE], errors="coerce").astype("float64")
    if C.UNIT not in df.columns:
        df[C.UNIT] = None
    if C.KERNELS not in df.columns:
        df[C.KERNELS] = np.nan
    keys = [C.ANNOTATION, C.CONFIG, C.METRIC]
    g = df.groupby(keys, sort=False, dropna=False)
    v = g[C.VALUE]
    out = pd.DataFrame({
        C.UNIT: g[C.UNIT].agg(_first_valid),
        C.NUM_RUNS: v.count().astype("int64"),
        C.AVG: v.mean(),
        C.STD: v.std(ddof=1),
        C.MIN: v.min(),
        C.MAX: v.max(),
        C.MEDIAN: v.median(),
        C.KERNELS: g[C.KERNELS].median(),
        C.KERNELS_VARY: g[C.KERNELS].nunique() > 1,
    }).reset_index()
    n = out[C.NUM_RUNS].to_numpy()
    std = out[C.STD].to_numpy(dtype="float64").copy()
    std[n == 1] = 0.0
    out[C.STD] = std
    mean = out[C.AVG].to_numpy(dtype="float64")
    out[C.CI95_LOWER], out[C.CI95_UPPER] = intervals.ci95_bounds(mean, std, n, out[C.MIN])
    out[C.RSD] = rsd = intervals.rsd_pct(mean, std)
    out[C.STABLE] = intervals.stable(n, rsd)
    out = out.merge(_config_params(df, params), on=[C.ANNOTATION, C.CONFIG], how="left")
    return _sort_first_seen(out[out_cols], with_run=False)


__all__ = [
    "combine_rule", "launches_to_runs", "aggregate_runs", "kernel_counts",
    "configs_with_varying_kernels", "kernels_per_config", "infer_param_names",
    "t_ci95_halfwidth", "RULE_SUM", "RULE_WEIGHTED", "RULE_MEAN_UNWEIGHTED", "RULE_SINGLE",
    "UNKNOWN_KIND_NOTE",
]
