"""Derived quantities on synthetic frames (exact arithmetic) and on a real bundle."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from app.core import derived
from profiling_worker.bundle.loader import load_bundle
from profiling_worker.bundle.schema import columns as C
from tests.fieller_reference import fieller_of_runs
from tests.scenarios import SCENARIOS

GPU = C.GPU_TIME


def _runs(rows: list[tuple[str, int, int, float]]) -> pd.DataFrame:
    return pd.DataFrame([{C.ANNOTATION: a, C.CONFIG: c, "n": 1024 * (c + 1), C.RUN: r,
                          C.METRIC: GPU, C.VALUE: v, C.UNIT: "ns"} for a, c, r, v in rows])


WORK = pd.DataFrame({C.ANNOTATION: ["base", "fast"], C.CONFIG: [0, 0],
                     C.FLOPS: [2e12, 2e12], C.BYTES: [4e9, 4e9]})


def test_time_units() -> None:
    runs = _runs([("base", 0, 0, 2_000_000.0)])
    for unit, expected in (("ns", 2e6), ("µs", 2e3), ("ms", 2.0)):
        out = derived.per_run_quantity(runs, WORK, GPU, derived.TIME, unit)
        assert out[C.VALUE].tolist() == [expected] and out[C.UNIT].tolist() == [unit]


def test_throughput_and_bandwidth() -> None:
    runs = _runs([("base", 0, 0, 1e9)])  # one second
    tflops = derived.per_run_quantity(runs, WORK, GPU, derived.TFLOPS)
    gbps = derived.per_run_quantity(runs, WORK, GPU, derived.GBPS)
    assert tflops[C.VALUE].tolist() == pytest.approx([2.0]) and tflops[C.UNIT][0] == "TFLOP/s"
    assert gbps[C.VALUE].tolist() == pytest.approx([4.0]) and gbps[C.UNIT][0] == "GB/s"


def test_other_metrics_are_ignored() -> None:
    runs = _runs([("base", 0, 0, 10.0)])
    other = runs.assign(**{C.METRIC: "dram__bytes_read.sum", C.VALUE: 99.0})
    out = derived.per_run_quantity(pd.concat([runs, other]), WORK, GPU, derived.TIME, "ns")
    assert out[C.VALUE].tolist() == [10.0]


def test_missing_work_is_an_error() -> None:
    runs = _runs([("other", 0, 0, 10.0)])
    with pytest.raises(derived.MissingWork, match="other"):
        derived.per_run_quantity(runs, WORK, GPU, derived.TFLOPS)


def test_normalise_per_run_then_aggregate() -> None:
    runs = _runs([("base", 0, 0, 100.0), ("base", 0, 1, 300.0),
                  ("fast", 0, 0, 50.0), ("fast", 0, 1, 150.0)])
    per_run = derived.per_run_quantity(runs, WORK, GPU, derived.TIME, "ns")
    ratio = derived.normalise(per_run, "base")
    assert ratio[C.UNIT].unique().tolist() == ["× base"]
    agg = derived.aggregate(ratio, [C.ANNOTATION, C.CONFIG]).set_index(C.ANNOTATION)
    assert agg.loc["base", C.AVG] == pytest.approx(1.0)
    assert agg.loc["fast", C.AVG] == pytest.approx(0.5)
    # spread of the ratio itself: runs 0.25 and 0.75 -> sample std 0.3536
    assert agg.loc["fast", C.STD] == pytest.approx(np.std([0.25, 0.75], ddof=1))
    with pytest.raises(ValueError, match="nope"):
        derived.normalise(per_run, "nope")


def test_normalised_ci_takes_the_baselines_spread_too(tmp_path: Path) -> None:
    """A tester's find: "Normalise to" drew the ratio's CI95 from the annotation's own runs
    only, as if the baseline's mean were exact (triton / torch at n=67108864 in the per-run
    file of case 04: [0.7982, 0.8185] shown; wider with both sides' spread, now the Welch
    interval of the difference over the baseline's mean; issue 34: Fieller's interval of the
    ratio, as the regression gate's)."""
    from profiling_worker.importing import import_nsight_output

    src = Path(__file__).resolve().parents[2] / "fixtures" / "import_cases" / "04-normalized"
    bundle = load_bundle(import_nsight_output([src / "profiled_data-bench-0.csv"], tmp_path, "j"))
    per_run = derived.per_run_quantity(bundle.table(C.TABLE_RUNS), bundle.table(C.TABLE_WORK),
                                       bundle.duration_metric, derived.TIME, "ns")
    keys = [C.ANNOTATION, C.CONFIG, "n"]
    out = derived.aggregate_normalised(per_run, keys, "torch").set_index([C.ANNOTATION, "n"])
    for n, group in per_run.groupby("n"):  # independent: Fieller's quadratic, scipy's t
        side = {a: g[C.VALUE].to_numpy() for a, g in group.groupby(C.ANNOTATION)}
        ratio = side["triton"].mean() / side["torch"].mean()
        row = out.loc[("triton", n)]
        assert row[C.AVG] == pytest.approx(ratio, rel=1e-12)
        assert (row[C.CI95_LOWER], row[C.CI95_UPPER]) == pytest.approx(
            fieller_of_runs(side["torch"], side["triton"]), rel=1e-9)
        own = derived.aggregate(derived.normalise(per_run, "torch"), keys).set_index(
            [C.ANNOTATION, "n"]).loc[("triton", n)]
        assert row[C.CI95_UPPER] - row[C.CI95_LOWER] > own[C.CI95_UPPER] - own[C.CI95_LOWER]
    base = out.loc["torch"]  # the baseline: ratio 1 by definition, no interval of itself
    assert base[C.AVG].tolist() == pytest.approx([1.0] * len(base))
    assert base[C.CI95_LOWER].isna().all() and base[C.CI95_UPPER].isna().all()


def test_aggregate_single_run_has_no_spread() -> None:
    """n - 1 = 0: StdDev, CI95 and RSD are undefined (NaN, as nsight-python leaves them)."""
    per_run = derived.per_run_quantity(_runs([("base", 0, 0, 7.0)]), WORK, GPU, derived.TIME, "ns")
    row = derived.aggregate(per_run, [C.ANNOTATION, C.CONFIG]).iloc[0]
    assert (row[C.NUM_RUNS], row[C.AVG]) == (1, 7.0)
    assert row[[C.STD, C.CI95_LOWER, C.CI95_UPPER, C.RSD]].isna().all()
    assert not row[C.STABLE]


def test_aggregate_two_runs_use_t_with_one_degree_of_freedom() -> None:
    per_run = derived.per_run_quantity(_runs([("base", 0, 0, 7.0), ("base", 0, 1, 9.0)]), WORK,
                                       GPU, derived.TIME, "ns")
    row = derived.aggregate(per_run, [C.ANNOTATION, C.CONFIG]).iloc[0]
    lo, hi = stats.t.interval(0.95, 1, loc=8.0, scale=stats.sem([7.0, 9.0]))
    assert row[C.STD] == pytest.approx(np.std([7.0, 9.0], ddof=1))
    assert (row[C.CI95_LOWER], row[C.CI95_UPPER]) == pytest.approx((max(lo, 0.0), hi))
    assert row[C.RSD] == pytest.approx(100 * np.std([7.0, 9.0], ddof=1) / 8.0)


def test_aggregate_matches_the_workers_table(cpu_bundle: Path) -> None:
    bundle = load_bundle(cpu_bundle)
    per_run = derived.per_run_quantity(bundle.table(C.TABLE_RUNS), bundle.table(C.TABLE_WORK),
                                       bundle.duration_metric, derived.TIME, "ns")
    mine = derived.aggregate(per_run, [C.ANNOTATION, C.CONFIG]).set_index([C.ANNOTATION, C.CONFIG])
    theirs = bundle.table(C.TABLE_AGGREGATED).set_index([C.ANNOTATION, C.CONFIG])
    for col in (C.AVG, C.STD, C.CI95_LOWER, C.CI95_UPPER, C.MEDIAN):
        pd.testing.assert_series_equal(mine[col], theirs.loc[mine.index, col], check_names=False,
                                       rtol=1e-9)


def test_log2_labels_keep_one_notation_per_axis() -> None:
    """Powers of two read 2^k only where every size is one; a sweep with any other size reads
    every size as a number (session 25: "2^4, 2^5, 48, 2^6" on one axis)."""
    assert derived.log2_labels([1, 32, 1024]) == ["2^0", "2^5", "2^10"]
    assert derived.log2_labels([16, 32, 48, 64, 1.5, 1_000_000]) == [
        "16", "32", "48", "64", "1.5", "1,000,000"]
    assert derived.log2_labels([]) == []


@pytest.mark.parametrize("runs_kept", [1, 2, 10])
def test_app_and_worker_statistics_agree(runs_kept: int) -> None:
    """Issue 11, cases 4 and 5: the sweep's statistics (derived.aggregate) and the worker's
    aggregated table use one method: same CI95, same StableMeasurement, also for 1-run configs."""
    from profiling_worker.bundle.stats.aggregate import aggregate_runs

    bundle = load_bundle(SCENARIOS / "h200-cupti-matmul-sweep")
    runs = bundle.table(C.TABLE_RUNS)
    runs = runs[runs[C.RUN] < runs_kept]
    worker = aggregate_runs(runs, ["n"]).sort_values([C.ANNOTATION, C.CONFIG])
    per_run = derived.per_run_quantity(runs, bundle.table(C.TABLE_WORK), GPU, derived.TIME, "ns")
    app = derived.aggregate(per_run, [C.ANNOTATION, C.CONFIG]).sort_values([C.ANNOTATION, C.CONFIG])
    for col in (C.NUM_RUNS, C.CI95_LOWER, C.CI95_UPPER, C.STABLE):
        assert app[col].tolist() == pytest.approx(worker[col].tolist(), rel=1e-12, nan_ok=True), col
    if runs_kept == 1:
        assert not app[C.STABLE].any()  # one run cannot show stability
        assert app[[C.STD, C.CI95_LOWER, C.CI95_UPPER, C.RSD]].isna().all().all()


def test_intervals_of_positive_quantities_stay_above_zero() -> None:
    """A spread-out host time (a cpu job showed a CI95 from -365.8 µs) and its GB/s."""
    runs = _runs([("base", 0, 0, 120e3), ("base", 0, 1, 2.1e6), ("base", 0, 2, 95e3)])
    for quantity in (derived.TIME, derived.GBPS):
        per_run = derived.per_run_quantity(runs, WORK, GPU, quantity)
        agg = derived.aggregate(per_run, [C.ANNOTATION, C.CONFIG])
        assert agg[C.CI95_LOWER].iloc[0] == 0.0
        assert agg[C.CI95_UPPER].iloc[0] > agg[C.AVG].iloc[0]


def test_normalised_ratio_far_from_one_scales_the_baselines_variance() -> None:
    """Issue 34: fp32 normalised to fp16 at n=8192 on the recorded CUPTI sweep read 14.801
    [14.798, 14.804] (the Welch interval of the difference over the baseline mean: ten times
    narrower than fp16's own interval); Fieller's interval is [14.774, 14.828]."""
    bundle = load_bundle(SCENARIOS / "h200-cupti-matmul-sweep")
    per_run = derived.per_run_quantity(bundle.table(C.TABLE_RUNS), bundle.table(C.TABLE_WORK),
                                       bundle.duration_metric, derived.TIME, "ns")
    out = derived.aggregate_normalised(per_run, [C.ANNOTATION, C.CONFIG, "n"], "fp16")
    row = out[(out[C.ANNOTATION] == "fp32") & (out["n"] == 8192)].iloc[0]
    assert f"{row[C.AVG]:.3f} [{row[C.CI95_LOWER]:.3f}, {row[C.CI95_UPPER]:.3f}]" == \
        "14.801 [14.774, 14.828]"


def test_fitting_rate_unit_writes_all_rows_in_the_unit_of_the_median() -> None:
    """One unit for all rows (one axis), chosen by the median AvgValue; ratios stay."""
    frame = pd.DataFrame({C.AVG: [2e-4, 9e-5, 3e-6], C.STD: [1e-5, 1e-6, 1e-7],
                          C.CI95_LOWER: [1e-4, 8e-5, 2e-6], C.CI95_UPPER: [3e-4, np.inf, 4e-6],
                          C.RSD: [5.0, 1.1, 3.3], C.UNIT: "TFLOP/s"})
    out = derived.fitting_rate_unit(frame)
    assert set(out[C.UNIT]) == {"MFLOP/s"}  # median 9e-5 TFLOP/s = 90 MFLOP/s
    assert out[C.AVG].tolist() == pytest.approx([200.0, 90.0, 3.0])
    assert out[C.CI95_UPPER].iloc[1] == np.inf and out[C.RSD].tolist() == [5.0, 1.1, 3.3]
    gpu = frame.assign(**{C.AVG: [16.0, 754.0, np.nan]})
    assert set(derived.fitting_rate_unit(gpu)[C.UNIT]) == {"TFLOP/s"}
    assert derived.fitting_rate_unit(gpu)[C.AVG].iloc[1] == 754.0
    bandwidth = frame.assign(**{C.UNIT: "GB/s", C.AVG: [0.385, 0.18, 0.13]})
    assert set(derived.fitting_rate_unit(bandwidth)[C.UNIT]) == {"MB/s"}


@pytest.mark.parametrize("quantity", [derived.TFLOPS, derived.GBPS])
def test_rate_unit_is_the_unit_aggregate_quantity_writes(cpu_bundle: Path, quantity: str) -> None:
    """The Size sweep's Quantity control names the unit of its chart from rate_unit, without
    the throughput's frame (issue 37): the same unit, MFLOP/s-range for a host-timed cpu job;
    the catalog's without work."""
    units = []
    for path in (cpu_bundle, SCENARIOS / "h200-ncu-matmul-sweep"):
        bundle = load_bundle(path)
        runs, work = bundle.table(C.TABLE_RUNS), bundle.table(C.TABLE_WORK)
        drawn = derived.aggregate_quantity(runs, work, bundle.duration_metric, quantity,
                                           [C.ANNOTATION, C.CONFIG])
        unit = derived.rate_unit(runs, work, bundle.duration_metric, quantity)
        assert unit == drawn[C.UNIT].iloc[0], path.name
        units.append(unit)
    assert units[1] == derived.quantity_unit(quantity) != units[0]  # a GPU job: TFLOP/s, GB/s
    assert derived.rate_unit(runs, work.iloc[1:], bundle.duration_metric,
                             quantity) == derived.quantity_unit(quantity)  # a pair without work
