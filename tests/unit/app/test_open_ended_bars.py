"""A CI95 with no upper (or lower) end is drawn as an open-ended bar, not left out (a fresh
user's find: on the Size sweep of a cpu job, Analytic GB/s, a point whose table said
``CI95_Lower 17.6, CI95_Upper unbounded`` had no bar at all, and so did a Compare row
``DiffCI95UpperPct unbounded``: the least precise points looked the most precise). Every chart
that draws CI95 error bars (Size sweep, Compare, backends) runs the open side to the edge of the
plotted range, ends it in an arrow whose hover says unbounded, and names the points in the note
under the chart (common.open_end_note). Frames from the recorded H200 bundles, one bound set to
inf as an unbounded interval has it."""

from __future__ import annotations

import numpy as np
import pandas as pd
from bundled import bundled

from app.core import frame_columns as F
from app.core.figures import common
from app.core.figures.backends import build_backends_figure
from app.core.figures.compare import build_compare_figure
from app.core.figures.sweep import build_sweep_figure
from app.core.views.backends import backends_frame
from app.core.views.compare import CompareOptions, compare_frame
from profiling_worker.bundle.schema import columns as C


def _arrows(fig):  # type: ignore[no-untyped-def]
    return [t for t in fig.data if t.name == common.OPEN_END_NAME]


def _check_open_top(fig, trace, j: int) -> None:  # type: ignore[no-untyped-def]
    """Point ``j`` of ``trace``: a finite bar up to the arrow, above everything else drawn."""
    plus = np.asarray(trace.error_y.array, dtype=float)
    assert np.isfinite(plus).all() or np.isnan(plus).sum() < len(plus)
    top = float(trace.y[j]) + plus[j]
    assert np.isfinite(top)
    others = [float(t.y[i]) + float(t.error_y.array[i]) for t in fig.data
              if t.error_y is not None and t.error_y.array is not None
              for i in range(len(t.y)) if (t, i) != (trace, j)
              and np.isfinite(float(t.error_y.array[i]))]
    assert all(top > v for v in others), (top, max(others))
    arrows = _arrows(fig)
    assert arrows and arrows[0].marker.symbol == "triangle-up"
    assert top in [float(y) for y in arrows[0].y]
    assert all("CI95 unbounded above" in str(c[0]) for c in arrows[0].customdata)


def test_sweep_throughput_with_an_unbounded_upper_bound() -> None:
    frame = pd.DataFrame({C.ANNOTATION: ["copy"] * 3, "n": [1024, 4096, 16384], C.UNIT: "GB/s",
                          C.NUM_RUNS: 10, C.AVG: [20.0, 35.0, 40.0],
                          C.CI95_LOWER: [17.6, 30.0, 38.0],
                          C.CI95_UPPER: [np.inf, 41.0, 42.0]})
    fig = build_sweep_figure(frame, "n", host_timer=True, quantity_label="Analytic GB/s")
    line = fig.data[0]
    assert line.name == "copy"
    np.testing.assert_allclose(line.error_y.arrayminus, [2.4, 5.0, 2.0])
    np.testing.assert_allclose(line.error_y.array[1:], [6.0, 2.0])
    _check_open_top(fig, line, 0)
    assert line.customdata[0, 4] == "CI95 = [17.6, unbounded) GB/s (no upper end at 95 %)"
    note = common.open_end_note(fig)
    assert note.startswith("CI95 unbounded at copy at 1024: ") and "arrow" in note
    # a bounded sweep: no arrow, no note, the bars as they were
    bounded = build_sweep_figure(frame.assign(**{C.CI95_UPPER: [23.0, 41.0, 42.0]}), "n", True)
    assert not _arrows(bounded) and common.open_end_note(bounded) == ""


def test_sweep_nan_upper_beside_finite_lower_is_open_and_one_run_is_not() -> None:
    frame = pd.DataFrame({C.ANNOTATION: ["a"] * 3, "n": [1, 2, 4], C.UNIT: "µs", C.NUM_RUNS: 3,
                          C.AVG: [1.0, 2.0, 3.0], C.CI95_LOWER: [0.5, np.nan, 2.5],
                          C.CI95_UPPER: [np.nan, np.nan, 3.5]})
    fig = build_sweep_figure(frame, "n", host_timer=False)
    line = fig.data[0]
    assert np.isnan(line.error_y.array[1]) and np.isnan(line.error_y.arrayminus[1])
    _check_open_top(fig, line, 0)
    assert common.open_end_note(fig).startswith("CI95 unbounded at a at 1: ")


def test_sweep_log_axis_open_bar_and_lower_cut_together() -> None:
    frame = pd.DataFrame({C.ANNOTATION: ["a"] * 3, "n": [1, 2, 4], C.UNIT: "GB/s",
                          C.NUM_RUNS: 10, C.AVG: [2.0, 50.0, 900.0],
                          C.CI95_LOWER: [-1.0, 40.0, 800.0], C.CI95_UPPER: [np.inf, 60.0, 1000.0]})
    fig = build_sweep_figure(frame, "n", host_timer=False, log_y=True)
    line = fig.data[0]
    assert fig.layout.yaxis.type == "log"
    _check_open_top(fig, line, 0)
    assert float(line.y[0]) + float(line.error_y.array[0]) == 2 * 1000.0  # twice the top
    assert "lower CI95 ≤ 0" in line.customdata[0, 3]  # the log floor's cut, as before


def test_compare_unbounded_ratio_draws_open_bar() -> None:
    """DiffPct -87.43, DiffCI95LowerPct -100, DiffCI95UpperPct unbounded: the ratio's upper
    bound inf, its lower 0."""
    frame = compare_frame(bundled("h200-cupti-gate-base"), bundled("h200-cupti-gate-again"),
                          CompareOptions())
    frame = frame.copy()
    frame.loc[frame.index[0], [F.RATIO_CI95_LOWER, F.RATIO_CI95_UPPER]] = [0.0, np.inf]
    fig = build_compare_figure(frame)
    trace = next(t for t in fig.data if t.name == str(frame[C.ANNOTATION].iloc[0]))
    j = 0
    assert fig.layout.yaxis.type == "log"
    low = float(trace.y[j]) - float(trace.error_y.arrayminus[j])  # the 0 bound: cut at the
    assert 0 < low < min(float(v) for t in fig.data if t.name != common.OPEN_END_NAME  # bottom
                         for v in t.y)
    _check_open_top(fig, trace, j)
    assert str(trace.customdata[j][5]).startswith("CI95 = [0.0000, unbounded) (unbounded: ")
    note = common.open_end_note(fig)
    assert f"{frame[C.ANNOTATION].iloc[0]} at {frame[F.CONFIG_LABEL].iloc[0]}" in note
    assert common.open_end_note(build_compare_figure(compare_frame(
        bundled("h200-cupti-gate-base"), bundled("h200-cupti-gate-again"),
        CompareOptions()))) == ""


def test_backends_unbounded_ratio_draws_open_bar() -> None:
    frame = backends_frame(bundled("h200-ncu-j1-fp16"), bundled("h200-cupti-j1-fp16")).copy()
    frame.loc[frame.index[0], F.RATIO_CI95_UPPER] = np.inf
    fig = build_backends_figure(frame)
    trace = next(t for t in fig.data if t.name == str(frame[C.ANNOTATION].iloc[0]))
    _check_open_top(fig, trace, 0)
    assert common.open_end_note(fig).startswith(
        f"CI95 unbounded at {frame[C.ANNOTATION].iloc[0]} at {frame[F.CONFIG_LABEL].iloc[0]}")


def test_sweep_recorded_throughput_one_point_unbounded() -> None:
    """The recorded h200-cupti-matmul-sweep's analytic GB/s, one point's CI95_Upper set to inf
    (as a throughput's is where its time interval reaches 0): its bar runs to the top, the other
    points keep their own bars, and the note names it; log and linear axes alike."""
    from app.core.views.sweep import SweepOptions, sweep_frame

    frame = sweep_frame(bundled("h200-cupti-matmul-sweep"), SweepOptions(quantity="gbps"))
    frame = frame.reset_index(drop=True)
    row = frame.iloc[1]
    frame.loc[1, C.CI95_UPPER] = np.inf
    for log_y in (False, True):
        fig = build_sweep_figure(frame, "n", host_timer=False, quantity_label="Analytic GB/s",
                                 log_y=log_y)
        trace = next(t for t in fig.data if t.name == row[C.ANNOTATION])
        j = int(np.flatnonzero(np.asarray(trace.x, dtype=float) == float(row["n"]))[0])
        _check_open_top(fig, trace, j)
        others = [i for i in range(len(trace.y)) if i != j]
        group = frame[frame[C.ANNOTATION] == row[C.ANNOTATION]].reset_index(drop=True)
        np.testing.assert_allclose(np.asarray(trace.error_y.array, dtype=float)[others],
                                   (group[C.CI95_UPPER] - group[C.AVG]).to_numpy(float)[others])
        assert str(trace.customdata[j][4]).startswith(f"CI95 = [{row[C.CI95_LOWER]:.6g}, unbounded)")
        assert common.open_end_note(fig).startswith(
            f"CI95 unbounded at {row[C.ANNOTATION]} at {row['n']}: ")
