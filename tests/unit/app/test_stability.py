"""Stability view and figures on the H200 bundles."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from bundled import bundled

from app.core.figures.stability import build_runs_figure, build_stability_figure
from app.core.metrics import MissingData
from app.core.table_text import header
from app.core import frame_columns as F
from app.core.views import stability as stability_view
from app.core.views.stability import (StabilityOptions, metric_choices, opening_options,
                                      stability_frame, stability_runs_frame)
from profiling_worker.bundle import number_text
from profiling_worker.bundle.schema import columns as C


def test_matmul_sweep_stability_in_microseconds() -> None:
    frame = stability_frame(bundled("h200-ncu-matmul-sweep"), StabilityOptions())
    assert len(frame) == 15 and set(frame[C.UNIT]) == {"µs"}
    row = frame[(frame[C.ANNOTATION] == "fp32") & (frame["n"] == 512)].iloc[0]
    assert row[C.AVG] == pytest.approx(16.768)  # 16,768 ns recorded on the H200
    assert row[C.CI95_LOWER] < row[C.AVG] < row[C.CI95_UPPER]
    assert row[C.NUM_RUNS] == 10 and row[C.STABLE]
    assert row["ConfigLabel"] == "n=512"
    # fp16 n=512 ran 4.9 µs: flagged as short; fp32 n=8192 (21 ms) is not.
    assert frame[(frame[C.ANNOTATION] == "fp16") & (frame["n"] == 512)]["ShortKernel"].item()
    assert not frame[(frame[C.ANNOTATION] == "fp32") & (frame["n"] == 8192)]["ShortKernel"].item()
    assert "shorter than 10 µs" in frame.loc[frame["ShortKernel"], "Note"].iloc[0]


def test_unstable_cupti_pairs_are_explained() -> None:
    frame = stability_frame(bundled("h200-cupti-elementwise"), StabilityOptions())
    unstable = frame[~frame[C.STABLE]]
    assert len(unstable) > 0
    assert (unstable[C.RSD] >= C.STABLE_RSD_PCT).all()
    assert unstable["Note"].str.contains("not stable").all()


def test_runs_frame_and_drift() -> None:
    bundle = bundled("h200-ncu-matmul-sweep")
    runs = stability_runs_frame(bundle, StabilityOptions(config=0))
    assert set(runs["n"]) == {512} and len(runs) == 30  # 3 annotations x 10 runs
    assert runs[C.RUN].tolist()[:10] == list(range(10))
    frame = stability_frame(bundle, StabilityOptions())
    assert frame["DriftPctOverRuns"].notna().all()
    assert frame["DriftPctOverRuns"].abs().max() < 5  # a calm H200


def test_other_metric_keeps_its_unit_in_the_unit_a_person_reads() -> None:
    """A clock in Hz reads in MHz (session 23: 1,942,203,821 Hz in the table beside a caption's
    1,979 MHz), its values divided, not rounded; its RSD, a ratio, unchanged."""
    bundle = bundled("h200-ncu-matmul-sweep")
    metric = "gpc__cycles_elapsed.avg.per_second"
    frame = stability_frame(bundle, StabilityOptions(metric=metric))
    unit, divisor = number_text.shown_unit("Hz")
    assert set(frame[C.UNIT]) == {unit} != {"Hz"} and not frame["ShortKernel"].any()
    agg = bundle.table(C.TABLE_AGGREGATED)
    raw = agg[agg[C.METRIC] == metric]
    assert sorted(frame[C.AVG]) == pytest.approx(sorted(raw[C.AVG] / divisor))
    assert sorted(frame[C.RSD]) == pytest.approx(sorted(raw[C.RSD]))
    runs = stability_runs_frame(bundle, StabilityOptions(metric=metric, config=0))
    assert set(runs[C.UNIT]) == {unit} and runs[C.VALUE].between(100, 5000).all()


def test_missing_metric_says_so() -> None:
    with pytest.raises(MissingData):
        stability_frame(bundled("h200-cupti-j1-fp16"), StabilityOptions(metric="dram__bytes_read.sum"))


def test_figures() -> None:
    bundle = bundled("h200-ncu-matmul-sweep")
    fig = build_stability_figure(stability_frame(bundle, StabilityOptions()))
    assert [t.name for t in fig.data] == ["fp32", "fp16", "bf16"]
    assert fig.layout.yaxis.title.text == "Relative standard deviation (%)"
    assert fig.layout.paper_bgcolor == "rgba(0,0,0,0)"
    # the 2 % line is named in the legend: a label beside it covered the last config's bars
    assert [(s.y0, s.name, s.showlegend) for s in fig.layout.shapes] == [
        (2.0, "stable below 2 %", True)]
    assert not fig.layout.annotations
    runs = build_runs_figure(stability_runs_frame(bundle, StabilityOptions(config=4)), "Duration")
    assert runs.layout.yaxis.title.text == "Duration (µs)"
    assert "run index" in runs.layout.xaxis.title.text
    assert "host wall-clock" not in runs.layout.title.text
    assert "host wall-clock, not GPU" in build_runs_figure(
        stability_runs_frame(bundle, StabilityOptions(config=4)), "Duration",
        host_timer=True).layout.title.text.replace("<br>", " ")


def test_the_ci_half_width_sits_beside_the_stable_flag() -> None:
    """Issue 34: bf16 n=1024 of the recorded rules job is "stable" (RSD 1.2 %, 3 runs) with a
    CI95 of +-3.0 %, while the timeline's n=8192 is "not stable" (RSD 6.1 %, 100 runs) at
    +-1.2 %: the stability table shows the half-width next to the flag."""
    from tests.scenarios import scenario

    def row(name: str, annotation: str, config: int) -> pd.Series:
        frame = stability_frame(scenario(name), StabilityOptions())
        cols = list(frame.columns)
        assert cols.index(C.CI95_HALF_PCT) == cols.index(C.STABLE) + 1
        return frame[(frame[C.ANNOTATION] == annotation) & (frame[C.CONFIG] == config)].iloc[0]

    stable = row("h200-ncu-matmul-rules", "bf16", 1)
    steady = row("h200-cupti-timeline", "fp16", 1)
    assert stable[C.STABLE] and not steady[C.STABLE]
    assert f"{stable[C.CI95_HALF_PCT]:.1f} {steady[C.CI95_HALF_PCT]:.1f}" == "3.0 1.2"
    assert stable[C.CI95_HALF_PCT] == pytest.approx(
        100 * (stable[C.CI95_UPPER] - stable[C.AVG]) / stable[C.AVG])


def test_the_page_opens_on_its_first_metric() -> None:
    """app/ui/prefetch computes the page's opening through :func:`opening_options`."""
    bundle = bundled("h200-ncu-matmul-sweep")
    assert metric_choices(bundle)[0] == "gpu__time_duration.sum"
    assert opening_options(bundle) == StabilityOptions(metric="gpu__time_duration.sum",
                                                       time_unit="µs")


def _polyfit_drift(runs: pd.DataFrame) -> dict[tuple[str, int], float]:
    """The drift as the view computed it before issue 37's 1,000-config sweep: a least-squares
    fit per pair, the slope x (last - first run index) as a % of |mean|."""
    out = {}
    for (annotation, config), group in runs.groupby([C.ANNOTATION, C.CONFIG], sort=False):
        x, y = group[C.RUN].to_numpy(float), group[C.VALUE].to_numpy(float)
        pct = np.nan
        if len(x) >= 3 and np.ptp(x) > 0 and y.mean() != 0:
            pct = 100.0 * np.polyfit(x, y, 1)[0] * np.ptp(x) / abs(y.mean())
        out[(annotation, config)] = pct
    return out


@pytest.mark.parametrize("job", ["h200-ncu-matmul-sweep", "h200-cupti-stability",
                                 "h200-cupti-elementwise", "h200-cupti-timeline"])
def test_the_drift_is_each_pairs_least_squares_slope(job: str) -> None:
    """The drift of every pair at once (issue 37) is what a fit per pair gives, on recorded
    runs and on added pairs of 2 runs, of one run index and of a zero mean (NaN, as the fit's)."""
    bundle = bundled(job)
    metric = metric_choices(bundle)[0]
    runs = bundle.table(C.TABLE_RUNS)
    runs = runs[runs[C.METRIC] == metric]
    edited = pd.concat([runs, runs.iloc[:2].assign(**{C.CONFIG: -1}),
                        runs.iloc[:4].assign(**{C.CONFIG: -2, C.RUN: 3}),
                        runs.iloc[:3].assign(**{C.CONFIG: -3, C.VALUE: 0.0})], ignore_index=True)
    bundle = dataclasses.replace(bundle, tables={**bundle.tables, C.TABLE_RUNS: edited})
    got = stability_view._drift(bundle, metric).set_index([C.ANNOTATION, C.CONFIG])
    want = _polyfit_drift(edited)
    assert list(got.index) == list(want)
    np.testing.assert_allclose(got["DriftPctOverRuns"].to_numpy(float), list(want.values()),
                               rtol=1e-9, atol=1e-12)
    added = [(a, c) for a, c in want if c < 0]
    assert len(added) == 3 and got["DriftPctOverRuns"].loc[added].isna().all()
    assert got["DriftPctOverRuns"].drop(added).notna().any()


def test_the_summary_and_the_runs_frame_go_column_by_column(monkeypatch) -> None:
    """Issue 37: on a 1,000-config sweep the Stability page's first visit computed its summary
    row by row (a Series per row for each note and config label) and computed it all again,
    drift of every pair included, for the one config of its per-run chart."""
    bundle = bundled("h200-ncu-matmul-sweep")
    before = stability_frame(bundle, StabilityOptions())

    def refused(*_args, **_kwargs):
        raise AssertionError("a Series per row")

    monkeypatch.setattr(pd.DataFrame, "iterrows", refused)
    pd.testing.assert_frame_equal(stability_frame(bundle, StabilityOptions()), before)
    monkeypatch.setattr(stability_view, "_drift", refused)
    runs = stability_runs_frame(bundle, StabilityOptions(config=0))
    assert len(runs) == 30 and runs[C.AVG].notna().all()


@pytest.mark.parametrize("pairs", [stability_view.SHORT_NAMED, stability_view.SHORT_NAMED + 1,
                                   8000])
def test_a_big_jobs_short_pairs_are_counted_not_named(pairs: int) -> None:
    """Issue 37: the short-kernel note named every pair shorter than 10 µs (8,000 on a
    10,000-config sweep, 104,574 characters). Above SHORT_NAMED it counts them and points at
    the table's ShortKernel column, which has every one."""
    labels = [f"n={n}" for n in range(pairs)]
    summary = pd.DataFrame({C.ANNOTATION: "fp16", "ConfigLabel": labels, C.RSD: 1.0, C.STABLE: True, "ShortKernel": True})
    said = stability_view.short_kernels_text(summary, C.DURATION_METRICS[0])
    assert said is not None
    text = said[0]
    assert text.startswith(f"{pairs:,} pairs run shorter than 10 µs (")
    if pairs <= stability_view.SHORT_NAMED:
        assert f"fp16 n={pairs - 1}; RSD 1 %)" in text
    else:
        column = header(F.SHORT_KERNEL)  # as the table heads it (the CSV: ShortKernel)
        assert f"(the table's rows with {column} True, and its CSV; RSD 1 %)" in text
        assert "n=0" not in text and len(text) < 300
