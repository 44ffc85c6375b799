"""Baselines (issue 28): the comparison of two launches' section metrics, on deep dives of reports
Nsight Compute wrote on the H200: the full-set fp16 matmul (3 runs, tests/fixtures/bundles) and
the default-set import (torch.randn kernels: 3 launches of one region, 1 of another). Expected
figures are recomputed here from the raw section rows, with Python's statistics module and
scipy.stats' own Welch test."""

from __future__ import annotations

import gzip
import json
import math
import statistics
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from app.core import metric_direction as MD
from app.core.views import baselines as B
from profiling_worker.extract.ncu_sections import deep_dive
from profiling_worker.bundle.schema import intervals
from tests.scenarios import scenario_dir

ROOT = Path(__file__).resolve().parents[3]
FULL = scenario_dir("h200-ncu-deepdive-fp16-4096") / "nsight"
DEFAULT_SET = ROOT / "tests" / "fixtures" / "h200_import" / "ncu_plain" / "default_set.ncu-rep"
DURATION = "gpu__time_duration.sum"


@pytest.fixture(scope="module")
def full() -> dict:
    return json.loads(gzip.decompress((FULL / "deep_dive.json.gz").read_bytes()))


@pytest.fixture(scope="module")
def imported() -> dict:
    return deep_dive(DEFAULT_SET)


def _runs(data: dict, launches: set[int], metric: str, section: str) -> list[float]:
    return [r["value"] for r in data["sections"] if r["launch_id"] in launches
            and r["metric"] == metric and r["section_name"] == section]


def _row(frame, metric: str, section: str):  # type: ignore[no-untyped-def]
    rows = frame[(frame[B.METRIC] == metric) & (frame[B.SECTION] == section)]
    assert len(rows) == 1, (metric, section)
    return rows.iloc[0]


def test_a_launch_carries_its_runs_spread(full: dict) -> None:
    section = next(r["section_name"] for r in full["sections"] if r["metric"] == DURATION)
    values = _runs(full, {0, 1, 2}, DURATION, section)
    row = _row(B.launch_metrics(full, 1), DURATION, section)
    assert row[B.VALUE] == values[1] and row[B.RUNS] == 3
    assert row[B.MEAN] == pytest.approx(statistics.mean(values))
    assert row[B.STD] == pytest.approx(statistics.stdev(values))


@pytest.mark.filterwarnings("ignore:Precision loss")  # scipy on the randn launches' close values
def test_an_imported_report_against_a_full_set_job(full: dict, imported: dict) -> None:
    """Across jobs and section sets: the randn kernel (3 launches of its region) as the baseline
    of the matmul (3 runs); the decision is scipy's Welch CI95 of the difference of means."""
    frame = B.compare(B.launch_metrics(imported, 0), B.launch_metrics(full, 0))
    section = next(r["section_name"] for r in imported["sections"] if r["metric"] == DURATION)
    base, this = _runs(imported, {0, 1, 2}, DURATION, section), _runs(full, {0, 1, 2}, DURATION,
                                                                      section)
    welch = stats.ttest_ind(this, base, equal_var=False).confidence_interval(0.95)
    row = _row(frame, DURATION, section)
    assert row[B.BASELINE] == base[0] and row[B.THIS] == this[0]
    assert row[B.DIFF] == pytest.approx(this[0] - base[0])
    assert row[B.MEAN_DIFF] == pytest.approx((welch.high + welch.low) / 2)
    assert row[B.CI95] == pytest.approx((welch.high - welch.low) / 2)
    assert row[B.TOLD] == (B.YES if welch.low > 0 or welch.high < 0 else B.NO) == B.YES
    assert row[B.HIGHER_IS] == "worse" and row[B.CHANGE] == B.WORSE  # 183 µs against a fill
    sections = {r["section_name"] for r in full["sections"]} - {
        r["section_name"] for r in imported["sections"]}
    only = frame[frame[B.SECTION].isin(sections)]
    assert len(only) and set(only[B.CHANGE]) == {B.ONLY_THIS} and set(only[B.TOLD]) == {B.ONE_SIDE}


def test_one_launch_a_side_has_no_spread(full: dict, imported: dict) -> None:
    frame = B.compare(B.launch_metrics(imported, 3), B.launch_metrics(full, 0))  # (Half): 1 run
    shared = frame[~frame[B.CHANGE].isin([B.ONLY_BASE, B.ONLY_THIS])]
    assert len(shared) and set(shared[B.TOLD]) == {B.NO_SPREAD}
    assert shared[B.MEAN_DIFF].isna().all() and (shared[B.BASE_RUNS] == 1).all()


def test_runs_of_one_point_cannot_be_told_from_each_other(full: dict) -> None:
    """A new user's find: two runs of one point were "not told apart" on all 274 metrics,
    comparing the same three runs with themselves; now said as "same runs"."""
    assert B.run_group(full, 0) == B.run_group(full, 1) and len(B.run_group(full, 0)) == 3
    assert B.same_runs("j", full, 0, "j", full, 1)
    assert not B.same_runs("other", full, 0, "j", full, 1)  # another job: other runs
    frame = B.compare(B.launch_metrics(full, 0), B.launch_metrics(full, 1), one_measurement=True)
    assert set(frame[B.TOLD]) == {B.SAME_RUNS}
    assert frame[B.MEAN_DIFF].isna().all() and frame[B.CI95].isna().all()
    rows0 = {(r["section_name"], r["metric"]): r["value"] for r in full["sections"]
             if r["launch_id"] == 0 and isinstance(r["value"], (int, float))}
    rows1 = {(r["section_name"], r["metric"]): r["value"] for r in full["sections"]
             if r["launch_id"] == 1 and isinstance(r["value"], (int, float))}
    for _, row in frame.sample(20, random_state=0).iterrows():
        key = (row[B.SECTION], row[B.METRIC])
        assert row[B.DIFF] == pytest.approx(rows1[key] - rows0[key])


def test_rules_side_by_side_hold_both_launches_rules(full: dict, imported: dict) -> None:
    table = B.rules_side_by_side(imported, 0, full, 0)
    rules = lambda d: {(r["rule"], r["section"]) for r in d["rules"] if r["launch_id"] == 0}  # noqa: E731
    assert set(zip(table["Rule"], table[B.SECTION])) == rules(imported) | rules(full)
    for rule, section, base in zip(table["Rule"], table[B.SECTION], table[B.BASELINE]):
        assert (base == "—") == ((rule, section) not in rules(imported))


def test_direction_follows_nsight_computes_reading() -> None:
    assert MD.better(DURATION, "ns") == MD.LOWER
    assert MD.better("gpc__cycles_elapsed.max", "cycle") == MD.LOWER
    assert MD.better("smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio") == MD.LOWER
    assert MD.better("sm__throughput.avg.pct_of_peak_sustained_elapsed", "%") == MD.HIGHER
    assert MD.better("lts__t_sector_hit_rate.pct", "%") == MD.HIGHER
    assert MD.better("sm__warps_active.avg.pct_of_peak_sustained_active", "%") == MD.HIGHER
    for unknown in ("dram__bytes_read.sum", "launch__grid_size", "gpc__cycles_elapsed.avg.per_second",
                    "launch__registers_per_thread"):
        assert MD.better(unknown) is None, unknown


def test_unknown_direction_is_coloured_by_sign_only(full: dict, imported: dict) -> None:
    frame = B.compare(B.launch_metrics(imported, 0), B.launch_metrics(full, 0))
    unknown = frame[(frame[B.HIGHER_IS] == "unknown") & frame[B.DIFF].notna()]
    assert len(unknown)
    expected = np.where(unknown[B.DIFF] > 0, B.HIGHER, np.where(unknown[B.DIFF] < 0, B.LOWER,
                                                                 B.SAME))
    assert list(unknown[B.CHANGE]) == list(expected)


def test_welch_half_width_needs_two_runs_a_side() -> None:
    half, df = intervals.welch_ci95_half_width([1.0], [1], [1.0], [3])
    assert math.isnan(half[0]) and math.isnan(df[0])
    half, _ = intervals.welch_ci95_half_width([0.0], [3], [0.0], [3])
    assert half[0] == 0.0  # no spread: any difference is told apart, none is not


def test_pins_round_trip() -> None:
    assert B.parse_pin(B.pin("h200-ncu-deepdive-fp16-4096", 2)) == ("h200-ncu-deepdive-fp16-4096", 2)
    assert B.parse_pin("no-launch") is None and B.parse_pin("job:x") is None
