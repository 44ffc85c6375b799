"""Per-kernel mean times when the kernels change between runs: a kernel absent from a run counts
0 ns there, so the kernels' means add up to the region's mean run time of the runs table."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from bundled import (LINEAR_BACKWARD as JOB, bundled, extra, in_region,
                     launches_variant, renamed)

from profiling_worker.bundle.loader import Bundle, load_bundle
from app.core.metrics import MissingData
from app.core.views.kernels import kernel_counts_frame, kernel_time_frame
from profiling_worker.bundle.schema import columns as C
from tests.scenarios import scenario_dir, scenario_names

def variant(tmp_path: Path, name: str, edit) -> Bundle:
    """A loaded copy of the bundled linear-backward job whose launches ``edit`` changed."""
    return load_bundle(launches_variant(tmp_path, name, edit))


def region_means(bundle: Bundle) -> pd.Series:
    """Mean run time (ns) of each annotation x config from the runs table."""
    runs = bundle.table(C.TABLE_RUNS)
    runs = runs[runs[C.METRIC] == bundle.duration_metric]
    return runs.groupby([C.ANNOTATION, C.CONFIG])[C.VALUE].mean()


def assert_adds_up(bundle: Bundle, added: dict | None = None) -> pd.DataFrame:
    """The kernels' mean times of each region add up to its runs-table mean (+ ``added`` ns)."""
    times = kernel_time_frame(bundle)
    sums = times.groupby([C.ANNOTATION, C.CONFIG])["MeanTimeNs"].sum()
    expected = region_means(bundle).loc[sums.index]
    for key, ns in (added or {}).items():
        expected[key] += ns
    assert sums.to_numpy() == pytest.approx(expected.to_numpy(), rel=1e-9), bundle.job_id
    assert times.groupby([C.ANNOTATION, C.CONFIG])["Share"].sum().to_numpy() == pytest.approx(100)
    return times


@pytest.mark.parametrize("job", [name for name in scenario_names()
                                 if (scenario_dir(name) / "tables" / "launches.parquet").is_file()])
def test_means_add_up_to_runs_table_on_every_bundle(job: str) -> None:
    try:
        assert_adds_up(bundled(job))
    except MissingData:
        pytest.skip(f"{job} has no per-launch table")


def test_renamed_kernel_counts_zero_in_other_runs(tmp_path: Path) -> None:
    bundle = variant(tmp_path, "kv-rename", renamed)
    times = assert_adds_up(bundle).set_index([C.ANNOTATION, C.CONFIG, C.KERNEL])
    original = bundled(JOB).table(C.TABLE_LAUNCHES)
    timed = original[in_region(original) & (original[C.KERNEL] == "Kernel2")
                     & (original[C.METRIC] == "gpu__time_duration.sum")]
    per_run = timed.groupby(C.RUN)[C.VALUE].sum()
    kernel2 = times.loc[("backward", 0, "Kernel2")]
    renamed_ns = times.loc[("backward", 0, "Kernel2_renamed")]
    assert kernel2["MeanTimeNs"] == pytest.approx((per_run[0] + per_run[1]) / 3)  # 233,973 ns
    assert renamed_ns["MeanTimeNs"] == pytest.approx(per_run[2] / 3)  # 116,597 ns
    region = region_means(bundle)[("backward", 0)]  # 392.8 µs
    assert kernel2["Share"] == pytest.approx(100 * kernel2["MeanTimeNs"] / region)
    counts = kernel_counts_frame(bundle).set_index([C.ANNOTATION, C.CONFIG])
    assert counts.loc[("backward", 0), "VariesBetweenRuns"]  # same count, other names
    assert not counts.loc[("backward", 1), "VariesBetweenRuns"]


def test_extra_launch_in_one_run_is_averaged_over_all_runs(tmp_path: Path) -> None:
    bundle = variant(tmp_path, "kv-extra", extra)
    times = assert_adds_up(bundle, {("backward", 0): 100_000 / 3})
    row = times.set_index(C.KERNEL).loc["extra_kernel"]
    assert row["MeanTimeNs"] == pytest.approx(100_000 / 3)
    assert row["Share"] == pytest.approx(100 * (100_000 / 3)
                                         / (region_means(bundle)[("backward", 0)] + 100_000 / 3))
    counts = kernel_counts_frame(bundle).set_index([C.ANNOTATION, C.CONFIG]).loc[("backward", 0)]
    assert (counts["KernelsPerRun"], counts["MaxPerRun"], counts["VariesBetweenRuns"]) == (7, 8, True)
