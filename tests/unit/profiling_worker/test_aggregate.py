"""launches -> runs -> aggregated: combine rules, config keying, Student-t statistics."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from profiling_worker.bundle.stats.aggregate import (aggregate_runs, launches_to_runs,
                                                     t_ci95_halfwidth)
from profiling_worker.bundle.stats.combine_rules import (RULE_MEAN_UNWEIGHTED, RULE_SINGLE,
                                                         RULE_SUM, RULE_WEIGHTED, UNKNOWN_KIND_NOTE,
                                                         combine_rule)
from profiling_worker.bundle.stats.kernel_counts import (configs_with_varying_kernels,
                                                         kernel_counts, kernels_per_config)
from profiling_worker.bundle.writer import table_columns
from profiling_worker.bundle.schema import columns as C

DRAM = "dram__throughput.avg.pct_of_peak_sustained_elapsed"
SM = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
BYTES = "dram__bytes_read.sum"
T = C.GPU_TIME
UNITS = {T: "ns", DRAM: "%", SM: "%", BYTES: "byte", C.HOST_TIME: "ns"}


# --- combine_rule ----------------------------------------------------------------------------

@pytest.mark.parametrize("metric, rule", [
    ("gpu__time_duration.sum", RULE_SUM),
    ("gpu__time_duration.avg", RULE_SUM),
    ("host__time_duration.sum", RULE_SUM),
    ("dram__bytes_read.sum", RULE_SUM),
    ("dram__bytes_write.sum", RULE_SUM),
    ("smsp__inst_executed.sum", RULE_SUM),
    ("sm__cycles_elapsed.avg", RULE_SUM),  # cycles per SM: a count, launches in sequence add
    ("sm__cycles_elapsed.max", RULE_SUM),
    ("dram__throughput.avg.pct_of_peak_sustained_elapsed", RULE_WEIGHTED),
    ("sm__throughput.avg.pct_of_peak_sustained_elapsed", RULE_WEIGHTED),
    ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", RULE_WEIGHTED),
    ("dram__bytes.sum.per_second", RULE_WEIGHTED),  # a rate, although it has .sum
    ("gpc__cycles_elapsed.avg.per_second", RULE_WEIGHTED),
    ("smsp__inst_executed.sum.per_cycle_active", RULE_WEIGHTED),
    ("sm__warps_active.avg.per_cycle_active", RULE_WEIGHTED),
    ("smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio", RULE_WEIGHTED),
    ("sm__inst_executed_pipe_tensor.avg.pct", RULE_WEIGHTED),
    ("dram__bytes.sum.peak_sustained", RULE_WEIGHTED),
    ("breakdown:sm__throughput.avg.pct_of_peak_sustained_elapsed", RULE_WEIGHTED),
    ("launch__grid_size", RULE_WEIGHTED),
    ("launch__registers_per_thread", RULE_WEIGHTED),
])
def test_combine_rule_by_nsight_compute_naming(metric, rule):
    assert combine_rule(metric) == rule


@pytest.mark.parametrize("unit, rule", [
    ("%", RULE_WEIGHTED + UNKNOWN_KIND_NOTE),
    ("byte/second", RULE_WEIGHTED + UNKNOWN_KIND_NOTE),
    ("TFLOP/s", RULE_WEIGHTED + UNKNOWN_KIND_NOTE),
    ("ns", RULE_SUM + UNKNOWN_KIND_NOTE),
    ("byte", RULE_SUM + UNKNOWN_KIND_NOTE),
    ("cycle", RULE_SUM + UNKNOWN_KIND_NOTE),
    (None, RULE_WEIGHTED + UNKNOWN_KIND_NOTE),
    ("", RULE_WEIGHTED + UNKNOWN_KIND_NOTE),
])
def test_combine_rule_unknown_names_use_the_unit_and_say_so(unit, rule):
    assert combine_rule("tflops", unit) == rule
    assert combine_rule("<lambda>", unit) == rule


def test_known_names_ignore_a_contradicting_unit():
    assert combine_rule(BYTES, "%") == RULE_SUM
    assert combine_rule(DRAM, "ns") == RULE_WEIGHTED


# --- launches -> runs ------------------------------------------------------------------------

def launches_frame(spec):
    """spec: list of (config, n, run, [(duration_ns, {metric: value}) per launch])."""
    rows = []
    for cfg, n, run, launches in spec:
        for li, (dur, metrics) in enumerate(launches):
            all_metrics = {T: dur, **metrics} if dur is not None else dict(metrics)
            for metric, value in all_metrics.items():
                rows.append({C.ANNOTATION: "fp32", C.CONFIG: cfg, "n": n, C.RUN: run,
                             C.LAUNCH: li, C.KERNEL: f"sm80_xmma_gemm_f32f32_{li}",
                             C.GRID: "(8, 8, 1)", C.BLOCK: "(128, 1, 1)", C.METRIC: metric,
                             C.VALUE: float(value), C.UNIT: UNITS.get(metric, "")})
    return pd.DataFrame(rows, columns=table_columns(C.TABLE_LAUNCHES, ["n"]))


def h200_matmul_sweep(runs=3):
    """fp32 a @ b on the H200: two kernels per run at n=512 (split-K), one at n>=1024."""
    spec = []
    for r in range(runs):
        spec.append((0, 512, r, [(30_000 + r, {DRAM: 90.0, SM: 40.0, BYTES: 3e6}),
                                 (10_000, {DRAM: 80.0, SM: 20.0, BYTES: 1e6})]))
        spec.append((1, 1024, r, [(61_344 + 64 * r, {DRAM: 2.87, SM: 65.7, BYTES: 1.3e7})]))
        spec.append((2, 4096, r, [(2_681_557 + r, {DRAM: 3.07, SM: 86.8, BYTES: 2.0e8})]))
    return launches_frame(spec)


def value(frame, cfg, metric, run=0):
    sel = frame[(frame[C.CONFIG] == cfg) & (frame[C.METRIC] == metric) & (frame[C.RUN] == run)]
    assert len(sel) == 1, sel
    return sel.iloc[0]


def test_weighted_percentage_is_87_5_not_170():
    runs = launches_to_runs(h200_matmul_sweep(runs=1), ["n"])
    row = value(runs, 0, DRAM)
    # 90 % for 30 us and 80 % for 10 us -> (90*30 + 80*10) / 40 = 87.5 %
    assert row[C.VALUE] == pytest.approx(87.5)
    assert row[C.COMBINE_RULE] == RULE_WEIGHTED
    assert value(runs, 0, SM)[C.VALUE] == pytest.approx((40 * 30 + 20 * 10) / 40)


def test_durations_and_bytes_add():
    runs = launches_to_runs(h200_matmul_sweep(runs=1), ["n"])
    assert value(runs, 0, T)[C.VALUE] == 40_000
    assert value(runs, 0, T)[C.COMBINE_RULE] == RULE_SUM
    assert value(runs, 0, BYTES)[C.VALUE] == 4e6
    assert value(runs, 0, BYTES)[C.COMBINE_RULE] == RULE_SUM


def test_kernel_counts_differing_between_configs_keep_values_in_their_config():
    launches = h200_matmul_sweep(runs=3)
    runs = launches_to_runs(launches, ["n"])
    assert list(runs.columns) == table_columns(C.TABLE_RUNS, ["n"])
    for r in range(3):
        one = value(runs, 1, T, r)
        assert one[C.VALUE] == 61_344 + 64 * r and one["n"] == 1024
        assert one[C.KERNELS] == 1 and one[C.COMBINE_RULE] == RULE_SINGLE
        assert value(runs, 1, DRAM, r)[C.VALUE] == 2.87
        assert value(runs, 2, T, r)[C.VALUE] == 2_681_557 + r
        assert value(runs, 2, SM, r)[C.VALUE] == 86.8
        assert value(runs, 0, T, r)[C.VALUE] == 40_000 + r
        assert value(runs, 0, T, r)[C.KERNELS] == 2
    # every config keeps its own parameter value
    assert dict(zip(runs[C.CONFIG], runs["n"])) == {0: 512, 1: 1024, 2: 4096}
    agg = aggregate_runs(runs, ["n"])
    kernels = dict(zip(agg[C.CONFIG], agg[C.KERNELS]))
    assert kernels == {0: 2, 1: 1, 2: 1}
    assert not agg[C.KERNELS_VARY].any()


def test_row_order_of_the_launches_does_not_matter():
    launches = h200_matmul_sweep(runs=3)
    shuffled = launches.sample(frac=1.0, random_state=7).reset_index(drop=True)
    a = launches_to_runs(launches, ["n"])
    b = launches_to_runs(shuffled, ["n"])
    key = [C.CONFIG, C.RUN, C.METRIC]
    a = a.sort_values(key).reset_index(drop=True)
    b = b.sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b, check_like=True)


def test_percentages_never_exceed_100_after_combining():
    runs = launches_to_runs(h200_matmul_sweep(runs=3), ["n"])
    pct = runs[runs[C.UNIT] == "%"]
    assert (pct[C.VALUE] <= 100).all() and (pct[C.VALUE] >= 0).all()


def test_no_duration_gives_plain_mean_and_says_so():
    launches = launches_frame([(0, 512, 0, [(None, {DRAM: 90.0}), (None, {DRAM: 80.0})])])
    runs = launches_to_runs(launches, ["n"])
    row = value(runs, 0, DRAM)
    assert row[C.VALUE] == pytest.approx(85.0)
    assert row[C.COMBINE_RULE] == RULE_MEAN_UNWEIGHTED


def test_host_duration_weights_when_no_gpu_time():
    rows = []
    for li, (d, pct) in enumerate([(3.0, 90.0), (1.0, 80.0)]):
        for metric, v in ((C.HOST_TIME, d), (DRAM, pct)):
            rows.append({C.ANNOTATION: "a", C.CONFIG: 0, C.RUN: 0, C.LAUNCH: li,
                         C.METRIC: metric, C.VALUE: v})
    runs = launches_to_runs(pd.DataFrame(rows), [])
    assert value(runs, 0, DRAM)[C.VALUE] == pytest.approx(87.5)
    assert value(runs, 0, C.HOST_TIME)[C.VALUE] == 4.0


def test_single_launch_is_marked_single():
    launches = launches_frame([(0, 1024, 0, [(61_344, {DRAM: 2.87})])])
    runs = launches_to_runs(launches, ["n"])
    assert set(runs[C.COMBINE_RULE]) == {RULE_SINGLE}


def test_a_failed_launch_value_makes_the_run_nan():
    launches = launches_frame([(0, 512, 0, [(30_000, {BYTES: 1.0}), (10_000, {BYTES: np.nan})])])
    runs = launches_to_runs(launches, ["n"])
    assert math.isnan(value(runs, 0, BYTES)[C.VALUE])
    assert value(runs, 0, T)[C.VALUE] == 40_000


def test_unknown_metric_rule_is_visible_in_the_table():
    launches = launches_frame([(0, 8, 0, [(3.0, {"tflops": 10.0}), (1.0, {"tflops": 20.0})])])
    runs = launches_to_runs(launches, ["n"])
    row = value(runs, 0, "tflops")
    assert row[C.COMBINE_RULE] == RULE_WEIGHTED + UNKNOWN_KIND_NOTE
    assert row[C.VALUE] == pytest.approx(12.5)


def test_kernel_counts_and_varying_runs():
    spec = [(0, 512, 0, [(1, {}), (1, {})]), (0, 512, 1, [(1, {})]), (0, 512, 2, [(1, {}), (1, {})]),
            (1, 1024, 0, [(2, {})]), (1, 1024, 1, [(2, {})])]
    launches = launches_frame(spec)
    counts = kernel_counts(launches, ["n"])
    assert list(counts.columns) == [C.ANNOTATION, C.CONFIG, "n", C.RUN, C.KERNELS]
    assert counts[C.KERNELS].tolist() == [2, 1, 2, 1, 1]
    varying = configs_with_varying_kernels(counts)
    assert set(varying[C.CONFIG]) == {0} and len(varying) == 3
    per_cfg = kernels_per_config(counts)
    assert per_cfg[C.KERNELS_VARY].tolist() == [True, False]
    assert per_cfg[C.KERNELS].tolist() == [2, 1]
    agg = aggregate_runs(launches_to_runs(launches, ["n"]), ["n"])
    assert agg.set_index(C.CONFIG)[C.KERNELS_VARY].to_dict() == {0: True, 1: False}


def test_kernel_counts_infers_parameters():
    counts = kernel_counts(h200_matmul_sweep(runs=1))
    assert "n" in counts.columns


def test_empty_launches_give_empty_tables_with_the_layout():
    empty = launches_frame([])
    runs = launches_to_runs(empty, ["n"])
    assert runs.empty and list(runs.columns) == table_columns(C.TABLE_RUNS, ["n"])
    agg = aggregate_runs(runs, ["n"])
    assert agg.empty and list(agg.columns) == table_columns(C.TABLE_AGGREGATED, ["n"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(1.0, 1e9), st.floats(0.0, 100.0)), min_size=1, max_size=6))
def test_weighted_mean_stays_between_the_launches(launches):
    frame = launches_frame([(0, 64, 0, [(d, {DRAM: p}) for d, p in launches])])
    got = value(launches_to_runs(frame, ["n"]), 0, DRAM)[C.VALUE]
    ps = [p for _, p in launches]
    assert min(ps) - 1e-9 <= got <= max(ps) + 1e-9
    assert got <= 100 + 1e-9


# --- runs -> aggregated ----------------------------------------------------------------------

def runs_frame(values_by_config, metric=T):
    rows = []
    for cfg, (n, values) in enumerate(values_by_config):
        for r, v in enumerate(values):
            rows.append({C.ANNOTATION: "mm", C.CONFIG: cfg, "n": n, C.RUN: r, C.METRIC: metric,
                         C.VALUE: v, C.UNIT: "ns", C.KERNELS: 1, C.COMBINE_RULE: RULE_SINGLE})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("values", [
    [61344.0, 61472.0, 61504.0],
    [2682112.0, 2681216.0, 2681344.0, 2681500.0, 2690000.0],
    list(np.random.default_rng(3).normal(100.0, 5.0, size=10)),
    [1.0, 2.0],
])
def test_student_t_ci_matches_scipy(values):
    agg = aggregate_runs(runs_frame([(1024, values)]), ["n"])
    row = agg.iloc[0]
    n = len(values)
    mean = float(np.mean(values))
    lo, hi = stats.t.interval(0.95, n - 1, loc=mean, scale=stats.sem(values))
    assert row[C.NUM_RUNS] == n
    assert row[C.AVG] == pytest.approx(mean, rel=1e-12)
    assert row[C.STD] == pytest.approx(np.std(values, ddof=1), rel=1e-12)
    assert row[C.CI95_LOWER] == pytest.approx(max(lo, 0.0), rel=1e-12, abs=1e-12)  # cut at 0
    assert row[C.CI95_UPPER] == pytest.approx(hi, rel=1e-12)
    assert row[C.MEDIAN] == pytest.approx(np.median(values))
    assert row[C.MIN] == min(values) and row[C.MAX] == max(values)
    assert row[C.RSD] == pytest.approx(100 * np.std(values, ddof=1) / abs(mean))
    assert row[C.STABLE] == (row[C.RSD] < C.STABLE_RSD_PCT)
    # wider than nsight-python's normal approximation for few runs
    normal_half = 1.96 * np.std(values, ddof=1) / math.sqrt(n)
    assert hi - mean > normal_half
    assert t_ci95_halfwidth(np.std(values, ddof=1), n) == pytest.approx(hi - mean)


def test_ci_of_a_positive_quantity_never_goes_below_zero():
    """Issue 11, case 5: a spread-out positive time (a cpu job showed CI95 from -365.8 µs)."""
    agg = aggregate_runs(runs_frame([(1024, [120e3, 2.1e6, 95e3])]), ["n"])
    lo, hi = stats.t.interval(0.95, 2, loc=np.mean([120e3, 2.1e6, 95e3]),
                              scale=stats.sem([120e3, 2.1e6, 95e3]))
    assert lo < 0  # the plain symmetric interval would cross zero
    assert agg.iloc[0][C.CI95_LOWER] == 0.0
    assert agg.iloc[0][C.CI95_UPPER] == pytest.approx(hi, rel=1e-12)


def test_ci_of_a_signed_quantity_is_not_cut():
    """A quantity with a negative run, and no duration, may be negative: its interval is the
    plain one."""
    agg = aggregate_runs(runs_frame([(1024, [-3.0, 1.0, 2.0])], metric="user__skew"), ["n"])
    assert agg.iloc[0][C.CI95_LOWER] < -3.0


def test_ci_of_a_duration_is_cut_whatever_its_runs():
    """A duration cannot be negative: a faulty negative run (the plausibility check names it)
    does not turn it into a signed quantity, and an interval wholly below 0 is none at all."""
    agg = aggregate_runs(runs_frame([(1024, [-3.0, 1.0, 2.0]), (2048, [-5.0, -4.0, -6.0])]),
                         ["n"])
    assert agg.iloc[0][C.CI95_LOWER] == 0.0 and agg.iloc[0][C.CI95_UPPER] > 0
    assert np.isnan(agg.iloc[1][C.CI95_LOWER]) and np.isnan(agg.iloc[1][C.CI95_UPPER])


def test_one_run_has_no_spread_and_is_not_called_stable():
    """n - 1 = 0: StdDev, CI95 and RSD are undefined (NaN, as nsight-python leaves them), never
    0 and a zero-width interval."""
    agg = aggregate_runs(runs_frame([(1024, [61344.0])]), ["n"])
    row = agg.iloc[0]
    assert (row[C.NUM_RUNS], row[C.AVG], row[C.MIN], row[C.MAX]) == (1, 61344.0, 61344.0, 61344.0)
    assert agg[[C.STD, C.CI95_LOWER, C.CI95_UPPER, C.RSD]].isna().all().all()
    assert not row[C.STABLE]
    assert math.isnan(t_ci95_halfwidth(float("nan"), 1))


def test_two_runs_use_t_with_one_degree_of_freedom():
    values = [61344.0, 61472.0]
    row = aggregate_runs(runs_frame([(1024, values)]), ["n"]).iloc[0]
    lo, hi = stats.t.interval(0.95, 1, loc=np.mean(values), scale=stats.sem(values))
    assert row[C.STD] == pytest.approx(np.std(values, ddof=1))
    assert (row[C.CI95_LOWER], row[C.CI95_UPPER]) == pytest.approx((lo, hi), rel=1e-12)
    assert row[C.RSD] == pytest.approx(100 * np.std(values, ddof=1) / np.mean(values))
    assert row[C.STABLE]  # 0.15 %


def test_unstable_measurement_flagged():
    agg = aggregate_runs(runs_frame([(64, [100.0, 110.0, 90.0])]), ["n"])
    assert agg.iloc[0][C.RSD] == pytest.approx(10.0)
    assert not agg.iloc[0][C.STABLE]


def test_nan_runs_are_left_out_of_the_statistics():
    agg = aggregate_runs(runs_frame([(64, [100.0, np.nan, 102.0])]), ["n"])
    assert agg.iloc[0][C.NUM_RUNS] == 2
    assert agg.iloc[0][C.AVG] == 101.0


def test_aggregate_layout_and_config_keying():
    runs = runs_frame([(512, [40_000.0, 40_001.0]), (1024, [61_344.0, 61_472.0, 61_504.0])])
    runs = runs.iloc[::-1].reset_index(drop=True)  # reversed rows: keyed by Config, not position
    agg = aggregate_runs(runs, ["n"])
    assert list(agg.columns) == table_columns(C.TABLE_AGGREGATED, ["n"])
    assert agg[C.CONFIG].tolist() == [0, 1]
    assert agg["n"].tolist() == [512, 1024]
    assert agg[C.NUM_RUNS].tolist() == [2, 3]
    assert agg[C.AVG].tolist() == pytest.approx([40_000.5, 61_440.0])


def test_zero_mean():
    agg = aggregate_runs(runs_frame([(1, [0.0, 0.0]), (2, [-1.0, 1.0])]), ["n"])
    assert agg[C.RSD].tolist()[0] == 0.0
    assert math.isinf(agg[C.RSD].tolist()[1])
    assert not agg[C.STABLE].tolist()[1]


def test_restate_turns_an_older_one_run_row_into_missing_spread():
    """Bundles written before wrote StdDev 0, CI95 [v, v] and RSD 0 for one run: the loader's
    restatement shows them as missing; rows of 2+ runs keep their stored values."""
    from profiling_worker.bundle.schema import intervals

    agg = aggregate_runs(runs_frame([(512, [5.0]), (1024, [61344.0, 61472.0])]), ["n"])
    old = agg.copy()
    old.loc[0, [C.STD, C.RSD]] = 0.0
    old.loc[0, [C.CI95_LOWER, C.CI95_UPPER]] = 5.0
    restated = intervals.restate(old)
    assert restated.loc[0, [C.STD, C.CI95_LOWER, C.CI95_UPPER, C.RSD]].isna().all()
    pd.testing.assert_frame_equal(restated, agg)


# --- grouping by one integer code (issue 40) -------------------------------------------------

def _recorded_launches() -> list[pd.DataFrame]:
    from tests.scenarios import SCENARIOS

    return [pd.read_parquet(p) for p in sorted(SCENARIOS.glob("*/tables/launches.parquet"))]


def test_group_codes_number_groups_as_groupby_ngroup_does() -> None:
    """On every recorded launches table, as read and with object key columns holding None and
    NaN: one group for the missing values of a column, groups in first-seen order."""
    from profiling_worker.bundle.stats.aggregate import group_codes

    tables = _recorded_launches()
    assert len(tables) >= 20
    for launches in tables:
        holes = launches.astype({C.ANNOTATION: object, C.METRIC: object})
        holes.loc[holes.index[1::7], C.ANNOTATION] = None
        holes.loc[holes.index[2::5], C.METRIC] = np.nan
        for frame in (launches, holes):
            for keys in ([C.ANNOTATION, C.CONFIG], [C.ANNOTATION, C.CONFIG, C.RUN, C.METRIC]):
                want = frame.groupby(keys, sort=False, dropna=False).ngroup().to_numpy()
                np.testing.assert_array_equal(group_codes(frame, keys), want)
                # extending the codes of a prefix of the keys gives the same numbers
                prefix = group_codes(frame, keys[:1])
                np.testing.assert_array_equal(group_codes(frame, keys[1:], prefix), want)


def test_key_columns_keep_the_dtype_a_groupby_gave_them() -> None:
    """Object key columns come back as a groupby's keys did (``str``, missing as NaN), typed
    columns as they were."""
    launches = _recorded_launches()[0]
    as_object = launches.astype({C.METRIC: object})
    as_object.loc[as_object.index[0], C.METRIC] = None
    for frame in (launches, as_object):
        runs = launches_to_runs(frame)
        assert runs[C.METRIC].dtype == launches[C.METRIC].dtype
        assert runs[C.RUN].dtype == launches[C.RUN].dtype
        assert aggregate_runs(runs)[C.METRIC].dtype == launches[C.METRIC].dtype
