"""Baselines, as in Nsight Compute: every section metric of one launch against a pinned launch
(of this job, another job or an imported report), with the difference, which way is better
(:mod:`app.core.metric_direction`) and whether the runs can tell the two apart. Pure: pandas.

**Told apart.** A launch's *runs* are the launches of its deep dive with the same region
(annotation), config, launch index within the run and kernel. When both sides have at least
two, the means over their runs are compared: the difference of means ``m_this - m_base`` is
told apart when it lies outside its Welch CI95 ``-/+ t(0.975, v) SE``
(:func:`profiling_worker.bundle.schema.intervals.welch_ci95_half_width`, the regression gate's
formula), "no" when inside. With one launch on a side no spread is known, and the table says
so instead of judging. Two launches of one job's same region x config x launch index x kernel
are runs of one measurement: both sides' runs are the same launches, so the table says "same
runs" instead of comparing a set of runs with itself (:func:`same_runs`). The value columns
are the two launches' own values (as Nsight Compute shows them); the means and the CI95 are the
runs'.

Text-valued metrics (device name, kernel name) are left out: they have no difference.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from profiling_worker.bundle.schema import intervals

from app.core import metric_direction

SECTION, METRIC, LABEL, UNIT = "Section", "Metric", "Label", "Unit"
VALUE, RUNS, MEAN, STD = "Value", "Runs", "Mean", "StdDev"
BASELINE, THIS = "Baseline", "This launch"
DIFF, DIFF_PCT = "Difference", "Difference %"
HIGHER_IS, CHANGE, TOLD = "Higher is", "Change", "Told apart"
MEAN_DIFF, CI95 = "Mean difference", "CI95 ±"
BASE_RUNS, THIS_RUNS = "Baseline runs", "This launch's runs"
#: ``Told apart`` values.
YES, NO, NO_SPREAD, SAME_RUNS = "yes", "no", "no spread known", "same runs"
#: ``Change`` values; "higher"/"lower" where the direction is unknown.
BETTER, WORSE, SAME, HIGHER, LOWER = "better", "worse", "same", "higher", "lower"
ONLY_BASE, ONLY_THIS = "only in baseline", "only in this launch"
ONE_SIDE = "one side only"  # Told apart of a metric only one launch has
KEY = [SECTION, METRIC]


def pin(job_id: str, launch_id: int) -> str:
    """The text of a pinned baseline (session state and ``?baseline=``): ``<job>:<launch id>``."""
    return f"{job_id}:{launch_id}"


def parse_pin(text: str) -> tuple[str, int] | None:
    """(job id, launch id) of a pin's text, None when it is not ``<job>:<digits>``."""
    job, _, launch = str(text).rpartition(":")
    return (job, int(launch)) if job and launch.isdigit() else None


def _numeric(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def launch_metrics(data: Mapping[str, Any], launch_id: int) -> pd.DataFrame:
    """The launch's numeric section metrics with its runs' spread.

    Args:
        data: a deep-dive dict (``launches``, ``sections``: the worker's ``deepdive`` answer).
        launch_id: the launch.

    Returns:
        One row per (Section, Metric): Section (name), Metric, Label, Unit, Value (the launch's),
        Runs (launches of its region x config x launch index x kernel holding the metric),
        Mean and StdDev (ddof 1; NaN for one run) over those runs. Empty when the launch has
        no section metrics.
    """
    launches = {int(x["launch_id"]): x for x in data.get("launches") or ()}
    me = launches.get(launch_id)
    if me is None:
        return pd.DataFrame(columns=[*KEY, LABEL, UNIT, VALUE, RUNS, MEAN, STD])
    same = run_group(data, launch_id)
    rows = [r for r in data.get("sections") or ()
            if r.get("launch_id") in same and _numeric(r.get("value"))]
    frame = pd.DataFrame(rows, columns=["launch_id", "section_name", "metric", "label", "unit",
                                        "value"])
    frame = frame.rename(columns={"section_name": SECTION, "metric": METRIC, "label": LABEL,
                                  "unit": UNIT, "value": VALUE}).astype({VALUE: "float64"})
    frame = frame.drop_duplicates(["launch_id", *KEY])
    grouped = frame.groupby(KEY, sort=False)[VALUE]
    spread = pd.DataFrame({RUNS: grouped.count(), MEAN: grouped.mean(), STD: grouped.std()})
    own = frame[frame["launch_id"] == launch_id].drop(columns="launch_id")
    return own.merge(spread.reset_index(), on=KEY, how="left").reset_index(drop=True)


def run_group(data: Mapping[str, Any], launch_id: int) -> frozenset[int]:
    """The launch ids of ``launch_id``'s runs in deep dive ``data``: the launches of its region
    (annotation), config, launch index and kernel (empty when the launch is not there)."""
    launches = {int(x["launch_id"]): x for x in data.get("launches") or ()}
    me = launches.get(launch_id)
    if me is None:
        return frozenset()
    return frozenset(i for i, x in launches.items() if all(
        x.get(k) == me.get(k) for k in ("annotation", "config", "launch", "kernel")))


def same_runs(base_job: str, base_data: Mapping[str, Any], base_launch: int, job: str,
              data: Mapping[str, Any], launch_id: int) -> bool:
    """True when the baseline launch and this one are runs of the same measurement (one job,
    the same :func:`run_group`): their runs cannot tell them apart."""
    return base_job == job and run_group(base_data, base_launch) == run_group(data, launch_id)


def _change(diff: float, better: str | None) -> str:
    if diff == 0:
        return SAME
    if better is None:
        return HIGHER if diff > 0 else LOWER
    return BETTER if (diff > 0) == (better == metric_direction.HIGHER) else WORSE


def compare(baseline: pd.DataFrame, this: pd.DataFrame, one_measurement: bool = False
            ) -> pd.DataFrame:
    """This launch against the baseline, metric by metric (formulas: module docstring).

    Args:
        baseline, this: :func:`launch_metrics` frames of the two launches.
        one_measurement: the two are runs of the same measurement (:func:`same_runs`): Told
            apart is "same runs", with no mean difference or CI95.

    Returns:
        One row per (Section, Metric) of either side, those of both first, in this launch's
        order: Section, Label (the metric's name where ncu gives none), Baseline, This launch
        (values), Unit, Difference % (of the baseline; NaN when it is 0), Change
        ("better"/"worse", or "higher"/"lower" where the direction is unknown, "same", "only in
        baseline", "only in this launch"), Told apart ("yes", "no", "no spread known", "same
        runs", "one side only"), Difference (this - baseline, in Unit), Mean difference and
        CI95 ± (of the means over runs, in Unit; NaN without spread), Higher is ("better", "worse",
        "unknown"), Baseline runs, This launch's runs, Metric.
    """
    cols = [*KEY, LABEL, UNIT, VALUE, RUNS, MEAN, STD]
    both = this[cols].assign(_at=range(len(this))).merge(
        baseline[cols].assign(_bat=range(len(baseline))), on=KEY, how="outer",
        suffixes=("_t", "_b"), indicator=True)
    # metrics of both first, in this launch's order (the report's section order), then those
    # of one side only
    both = both.assign(_one=both["_merge"].astype(str) != "both").sort_values(
        ["_one", "_at", "_bat"], na_position="last", kind="stable", ignore_index=True)
    label = both[LABEL + "_t"].fillna(both[LABEL + "_b"])
    out = pd.DataFrame({SECTION: both[SECTION], METRIC: both[METRIC],
                        LABEL: label.where(label.astype(str) != "", both[METRIC]),
                        UNIT: both[UNIT + "_t"].fillna(both[UNIT + "_b"]),
                        BASELINE: both[VALUE + "_b"], THIS: both[VALUE + "_t"]})
    out[DIFF] = out[THIS] - out[BASELINE]
    with np.errstate(divide="ignore", invalid="ignore"):
        out[DIFF_PCT] = (100.0 * out[DIFF] / out[BASELINE].abs()).where(out[BASELINE] != 0)
    better = [metric_direction.better(m, u) for m, u in zip(out[METRIC], out[UNIT].astype(str))]
    out[HIGHER_IS] = [{metric_direction.HIGHER: "better", metric_direction.LOWER: "worse"}.get(
        b or "", "unknown") for b in better]
    half, _df = intervals.welch_ci95_half_width(both[STD + "_b"], both[RUNS + "_b"],
                                                both[STD + "_t"], both[RUNS + "_t"])
    out[MEAN_DIFF] = (both[MEAN + "_t"] - both[MEAN + "_b"]).where(~np.isnan(half))
    out[CI95] = half
    out[TOLD] = np.where(np.isnan(half), NO_SPREAD,
                         np.where(out[MEAN_DIFF].abs() > half, YES, NO))
    if one_measurement:
        out[TOLD], out[MEAN_DIFF], out[CI95] = SAME_RUNS, np.nan, np.nan
    side = both["_merge"].astype(str)
    out[CHANGE] = [ONLY_BASE if s == "right_only" else ONLY_THIS if s == "left_only"
                   else _change(d, b) for s, d, b in zip(side, out[DIFF], better)]
    out.loc[side != "both", TOLD] = ONE_SIDE
    out[BASE_RUNS] = both[RUNS + "_b"].fillna(0).astype(int)
    out[THIS_RUNS] = both[RUNS + "_t"].fillna(0).astype(int)
    order = [SECTION, LABEL, BASELINE, THIS, UNIT, DIFF_PCT, CHANGE, TOLD, DIFF, MEAN_DIFF, CI95,
             HIGHER_IS, BASE_RUNS, THIS_RUNS, METRIC]  # the long metric name last
    return out[order].reset_index(drop=True)


def rules_side_by_side(data_b: Mapping[str, Any], launch_b: int, data_t: Mapping[str, Any],
                       launch_t: int) -> pd.DataFrame:
    """The two launches' rule results by rule: Rule, Section, Baseline and This launch (the
    rule's title and type, ``"—"`` where that side has no result), Baseline saving % and This
    launch's saving % (the rule's estimated speed-up; NaN where it gives none)."""
    def side(data: Mapping[str, Any], launch: int) -> pd.DataFrame:
        rows = [r for r in data.get("rules") or () if r.get("launch_id") == launch]
        frame = pd.DataFrame(rows, columns=["rule", "section", "title", "type", "speedup"])
        frame = frame.drop_duplicates(["rule", "section"])
        return pd.DataFrame({"Rule": frame["rule"], SECTION: frame["section"],
                             "text": frame["title"].astype(str) + " (" + frame["type"].astype(str)
                             + ")", "saving": frame["speedup"].astype("float64")})

    both = side(data_t, launch_t).merge(side(data_b, launch_b), on=["Rule", SECTION], how="outer",
                                        suffixes=("_t", "_b"), sort=False)
    return pd.DataFrame({"Rule": both["Rule"], SECTION: both[SECTION],
                         BASELINE: both["text_b"].fillna("—"), THIS: both["text_t"].fillna("—"),
                         "Baseline saving %": both["saving_b"],
                         "This launch's saving %": both["saving_t"]})
