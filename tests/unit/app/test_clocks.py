"""Clocks and thermal view on the H200 bundles: NVML trace, throttle reasons, kernel clocks,
collectors sampled before each run, correlation, thermal_mode comparison."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
from bundled import bundled

from app.core.metrics import MissingData
from app.core.views.clocks import (BEFORE_RUN, NO_COLLECTORS, NVML_INSTEAD, PEARSON, THROTTLE,
                                   ClocksOptions, collector_runs_frame, correlation_frame, decode_throttle,
                                   kernel_clock_frame, thermal_compare_frame,
                                   thermal_mean_difference_pct, throttle_frame, trace_frame)
from profiling_worker.bundle.loader import load_bundle
from profiling_worker.bundle.schema import columns as C
from tests.scenarios import scenario_dir


@pytest.mark.parametrize(("mask", "names"), [
    (0, []),
    (0x1, ["GPU idle"]),
    (0x4 | 0x8, ["SW power cap", "HW slowdown"]),
    (0x10, ["sync boost"]),
    (0x20 | 0x40, ["SW thermal slowdown", "HW thermal slowdown"]),
    (0x80, ["HW power brake slowdown"]),
    (0x100, ["display clock setting"]),
    (0x1 | 0x1000, ["GPU idle", "bit 0x1000"]),
])
def test_nvml_clocks_event_reason_bits(mask: int, names: list[str]) -> None:
    assert decode_throttle(mask) == names


def test_trace_of_the_stability_job() -> None:
    trace = trace_frame(bundled("h200-cupti-stability"))
    assert len(trace) == 60 and trace[C.TIME_S].is_monotonic_increasing
    assert trace[C.SM_CLOCK_MHZ].min() == 345 and trace[C.SM_CLOCK_MHZ].max() == 1980
    assert set(trace[THROTTLE]) == {"GPU idle", ""}
    reasons = throttle_frame(trace)
    assert reasons["Reason"].tolist() == ["GPU idle"] and reasons["Bit"].iloc[0] == "0x1"
    assert reasons["Samples"].iloc[0] == (trace[C.THROTTLE_REASONS] == 1).sum()


def test_trace_missing_and_mask_column_absent(cpu_bundle) -> None:
    from profiling_worker.bundle.loader import load_bundle

    bundle = load_bundle(cpu_bundle)
    if bundle.table(C.TABLE_NVML).empty:
        with pytest.raises(MissingData, match="NVML"):
            trace_frame(bundle)
    no_mask = bundled("h200-cupti-stability").table(C.TABLE_NVML).drop(
        columns=[C.THROTTLE_REASONS])
    fake = bundled("h200-cupti-stability")
    tables = dict(fake.tables, **{C.TABLE_NVML: no_mask})
    from dataclasses import replace

    assert set(trace_frame(replace(fake, tables=tables))[THROTTLE]) == {""}


def test_kernel_clock_from_gpc_cycles() -> None:
    frame = kernel_clock_frame(bundled("h200-ncu-matmul-sweep"))
    assert len(frame) == 15 and set(frame["MaxSmClockMHz"]) == {1980.0}
    fp32 = frame[(frame[C.ANNOTATION] == "fp32") & (frame["n"] == 512)].iloc[0]
    assert 1938 < fp32["SmClockMHz"] < 1946 and fp32["MinMHz"] <= fp32["SmClockMHz"]
    assert fp32["PctOfMax"] == pytest.approx(100 * fp32["SmClockMHz"] / 1980)
    with pytest.raises(MissingData, match="gpc__cycles_elapsed"):
        kernel_clock_frame(bundled("h200-cupti-stability"))


def test_collectors_sampled_before_each_run() -> None:
    bundle = bundled("h200-cupti-stability")
    frame = collector_runs_frame(bundle, ClocksOptions())
    assert len(frame) == 270 and set(frame["Sampled"]) == {BEFORE_RUN}
    assert set(frame[C.COLLECTOR]) == {"sm_clock", "temperature", "power"}
    first = frame[(frame[C.CONFIG] == 0) & (frame[C.RUN] == 0)]
    assert first["KernelTime"].iloc[0] == pytest.approx(3.072)  # 3,072 ns, in µs
    one = collector_runs_frame(bundle, ClocksOptions(time_unit="ns", config=2))
    assert set(one["n"]) == {8192} and one[C.UNIT].iloc[0] == "ns"


def test_no_collectors_points_to_the_nvml_trace_where_there_is_one(tmp_path) -> None:
    with pytest.raises(MissingData) as info:
        collector_runs_frame(bundled("h200-ncu-matmul-sweep"), ClocksOptions())
    assert str(info.value) == f"{NO_COLLECTORS} {NVML_INSTEAD}" and "0.9" in NO_COLLECTORS
    # without a trace (a cpu job samples no GPU) the page does not point to one above it
    copy = shutil.copytree(scenario_dir("h200-ncu-matmul-sweep"), tmp_path / "no-trace")
    for table in (copy / "tables").glob(f"{C.TABLE_NVML}.*"):
        table.unlink()
    with pytest.raises(MissingData) as info:
        collector_runs_frame(load_bundle(copy), ClocksOptions())
    assert str(info.value) == NO_COLLECTORS


def test_pearson_correlation_per_config() -> None:
    corr = correlation_frame(collector_runs_frame(bundled("h200-cupti-stability"),
                                                  ClocksOptions()))
    assert len(corr) == 9 and set(corr["Sampled"]) == {BEFORE_RUN}
    power = corr[(corr[C.COLLECTOR] == "power") & (corr["n"] == 256)].iloc[0]
    assert power[PEARSON] == pytest.approx(-0.0817, abs=1e-3) and power["Runs"] == 30
    constant = corr[corr[C.COLLECTOR] == "sm_clock"]
    assert constant[PEARSON].isna().all()
    assert constant["Note"].str.contains("constant").all()


def test_correlation_sign_on_a_synthetic_drift() -> None:
    runs = pd.DataFrame({C.ANNOTATION: "a", C.CONFIG: 0, C.RUN: range(6),
                         "KernelTime": [1.0, 1.1, 1.2, 1.3, 1.4, 1.5], C.UNIT: "µs",
                         C.COLLECTOR: "temperature",
                         "CollectorValue": [40.0, 42, 44, 46, 48, 50], "CollectorUnit": "C",
                         "Sampled": BEFORE_RUN, "ConfigLabel": "config 0"})
    corr = correlation_frame(runs)
    assert corr[PEARSON].iloc[0] == pytest.approx(1.0)
    assert correlation_frame(runs.head(2))["Note"].iloc[0].startswith("fewer than 3")


def test_thermal_mode_comparison() -> None:
    auto, off = bundled("h200-cupti-stability"), bundled("h200-cupti-stability-thermal-off")
    frame = thermal_compare_frame(auto, off)
    assert len(frame) == 6
    walls = frame.drop_duplicates("Job").set_index("Job")
    assert walls.loc["h200-cupti-stability", "WallS"] == pytest.approx(4.257)
    assert walls.loc["h200-cupti-stability-thermal-off", "ThermalMode"] == "off"
    assert walls.loc["h200-cupti-stability", "ThermalMode"] == "auto"
    big = frame[frame["n"] == 8192].set_index("Job")[C.RSD]
    assert big["h200-cupti-stability"] == pytest.approx(0.4144, abs=1e-3)
    # the largest gap is at n=8192: 1428.54 µs (auto) vs 1435.51 µs (off)
    assert thermal_mean_difference_pct(frame) == pytest.approx(
        abs(100 * (1428.5387 / 1435.5136 - 1)), abs=0.01)


def test_pearson_matches_scipy() -> None:
    import numpy as np
    from scipy import stats

    from app.core.views.clocks import pearson

    rng = np.random.default_rng(7)
    x = rng.normal(size=12)
    y = 0.4 * x + rng.normal(size=12)
    r, p = pearson(x, y)
    ref = stats.pearsonr(x, y)
    assert r == pytest.approx(ref[0], rel=1e-12) and p == pytest.approx(ref[1], rel=1e-9)


def test_clock_sources_say_what_each_measures() -> None:
    """Issue 11, case 8: NVML is not 'the clock the kernels ran at'; the counter is."""
    from app.core.views.clocks import clock_sources

    frame = clock_sources(50).set_index("Source")
    nvml = frame.loc["NVML trace (the worker's sampler)"]
    assert "every 50 ms" in nvml["When"] and "shorter than 50 ms" in nvml["Misses"]
    assert "ran at" not in nvml["Measures"]
    counter = frame.loc["Nsight Compute gpc__cycles_elapsed.avg.per_second"]
    assert "the clock the kernel ran at" in counter["Measures"]
    assert "before each run" in frame.loc["nsight-python info collectors (RUN scope)"]["When"]


def test_thermal_comparison_of_a_job_without_parameters(tmp_path) -> None:
    """A job without config parameters is one config: labelled ``config 0``, no KeyError."""
    from profiling_worker.bundle.loader import load_bundle
    from profiling_worker.importing import import_nsight_output

    source = Path(__file__).resolve().parents[2] / "fixtures" / "import_findings" / "1x_ns"
    raw = pd.read_csv(source / "profiled_data-mm-0.csv")
    one = raw[raw["n"] == 1024].drop(columns="n")
    one.to_csv(tmp_path / "profiled_data-mm-0.csv", index=False)
    bundle = load_bundle(import_nsight_output([tmp_path / "profiled_data-mm-0.csv"],
                                              tmp_path / "store", "no-params"))
    frame = thermal_compare_frame(bundle)
    assert frame["ConfigLabel"].tolist() == ["config 0"]
    assert frame["NumRuns"].tolist() == [3] and C.CONFIG not in frame
    assert frame["AvgUs"].iloc[0] == pytest.approx(one["Value"].mean() / 1e3, rel=1e-12)
