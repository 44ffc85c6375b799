"""A CI95 with no upper (or lower) end is drawn as an open-ended bar, not left out (a fresh
user's find: on the Size sweep of a cpu job, Analytic GB/s, a point whose table said
``CI95_Lower 17.6, CI95_Upper unbounded`` had no bar at all, and so did a Compare row
``DiffCI95UpperPct unbounded``: the least precise points looked the most precise). Every chart
that draws CI95 error bars (Size sweep, Compare, backends) or a CI95 band (Stability's per-run
chart) runs the open side to the edge of the
plotted range, ends it in an arrow whose hover says unbounded, and names the points in the note
under the chart (common.open_end_note). Frames from the recorded H200 bundles, one bound set to
inf as an unbounded interval has it."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from bundled import bundled

from app.core import frame_columns as F
from app.core.figures import common
from app.core.figures.backends import build_backends_figure
from app.core.figures.compare import build_compare_figure
from app.core.figures.stability import build_runs_figure, build_stability_figure
from app.core.figures.sweep import build_sweep_figure
from app.core.views.backends import backends_frame
from app.core.views.compare import CompareOptions, compare_frame
from app.core.views.stability import StabilityOptions, stability_frame, stability_runs_frame
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
    assert line.customdata[0, 4] == (f"CI95 = [{_bound(17.6, frame)}, unbounded) GB/s "
                                      "(no upper end at 95 %)")
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
    # a tenth of the drawn span past the top, in decades: 1 (the floor) .. 1000 is 3 decades
    top = float(line.y[0]) + float(line.error_y.array[0])
    assert np.log10(top) == pytest.approx(3 + 0.1 * 3)
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
        assert str(trace.customdata[j][4]).startswith(
            f"CI95 = [{_bound(row[C.CI95_LOWER], group)}, unbounded)")
        assert common.open_end_note(fig).startswith(
            f"CI95 unbounded at {row[C.ANNOTATION]} at {row['n']}: ")


def _gate_pair_unbounded_first():  # type: ignore[no-untyped-def]
    frame = compare_frame(bundled("h200-cupti-gate-base"), bundled("h200-cupti-gate-again"),
                          CompareOptions()).copy()
    frame.loc[frame.index[0], [F.RATIO_CI95_LOWER, F.RATIO_CI95_UPPER]] = [0.0, np.inf]
    return frame


def test_compare_log_axis_edge_is_a_tenth_of_the_span_in_decades() -> None:
    """The recorded gate pair's ratios lie within 0.996-1.007: the open bar's arrow sat at 2.01
    (twice the largest value), so the axis reached 2 and every ratio lay on one line at its
    foot. On a log axis the edge is a tenth of the drawn span past it in decades, as on a
    linear axis in units; the open interval's 0 lower bound is cut at the bottom edge."""
    frame = _gate_pair_unbounded_first()
    fig = build_compare_figure(frame)
    assert fig.layout.yaxis.type == "log"
    bounded = frame.iloc[1:]  # the ratios, their finite bounds and the line at 1
    drawn = np.concatenate([frame[F.RATIO], bounded[F.RATIO_CI95_LOWER],
                            bounded[F.RATIO_CI95_UPPER], [1.0]]).astype(float)
    low, high = float(drawn.min()), float(drawn.max())
    decades = np.log10(high / low)
    (arrow,) = _arrows(fig)
    top = float(arrow.y[0])
    assert np.log10(top) == pytest.approx(np.log10(high) + 0.1 * decades)
    assert top < 1.01  # was 2.01
    trace = next(t for t in fig.data if t.name == str(frame[C.ANNOTATION].iloc[0]))
    bottom = float(trace.y[0]) - float(trace.error_y.arrayminus[0])
    assert np.log10(bottom) == pytest.approx(np.log10(low) - 0.1 * decades)
    assert (top, bottom) == pytest.approx(common.open_end_edges(build_compare_figure(
        frame.assign(**{F.RATIO_CI95_UPPER: frame[F.RATIO_CI95_UPPER].where(
            frame.index != frame.index[0], np.nan),
            F.RATIO_CI95_LOWER: frame[F.RATIO_CI95_LOWER].where(
                frame.index != frame.index[0], np.nan)}))))


def test_linear_axis_edge_is_a_tenth_of_the_span() -> None:
    frame = pd.DataFrame({C.ANNOTATION: ["copy"] * 3, "n": [1024, 4096, 16384], C.UNIT: "GB/s",
                          C.NUM_RUNS: 10, C.AVG: [20.0, 35.0, 40.0],
                          C.CI95_LOWER: [17.6, 30.0, 38.0],
                          C.CI95_UPPER: [np.inf, 41.0, 42.0]})
    fig = build_sweep_figure(frame, "n", host_timer=True)
    assert fig.layout.yaxis.type == "linear"
    (arrow,) = _arrows(fig)
    assert float(arrow.y[0]) == pytest.approx(42.0 + 0.1 * (42.0 - 17.6))


def _runs_unbounded(upper: float, lower: float | None = None):  # type: ignore[no-untyped-def]
    """The recorded matmul sweep's per-run values of config 4 (n=8192), fp16's CI95 upper
    bound set to ``upper`` (and its lower to ``lower``)."""
    runs = stability_runs_frame(bundled("h200-ncu-matmul-sweep"), StabilityOptions(config=4))
    at = runs[C.ANNOTATION] == "fp16"
    runs.loc[at, C.CI95_UPPER] = upper
    if lower is not None:
        runs.loc[at, C.CI95_LOWER] = lower
    return runs


@pytest.mark.parametrize("upper", [np.inf, np.nan])
def test_stability_band_of_an_unbounded_ci95_runs_to_the_chart_edge(upper: float) -> None:
    """Stability's per-run chart drew no band at all for an infinite bound (a reviewer's find):
    now the band runs from the lower bound to the chart's top, an arrow in the legend's
    wording ends it, and the note names it; the bounded annotations keep their bands."""
    runs = _runs_unbounded(upper)
    fig = build_runs_figure(runs, "Duration")
    bands = {t.legendgroup: t for t in fig.data if t.fill == "toself"}
    assert set(bands) == set(runs[C.ANNOTATION])  # every annotation has its band
    band = bands["fp16"]
    values = runs[C.VALUE].to_numpy(float)
    top = max(float(v) for v in band.y)
    assert np.isfinite(top) and top > values.max()
    lower = float(runs.loc[runs[C.ANNOTATION] == "fp16", C.CI95_LOWER].iloc[0])
    assert min(float(v) for v in band.y) == pytest.approx(lower)
    (arrow,) = _arrows(fig)
    assert arrow.marker.symbol == "triangle-up" and float(arrow.y[0]) == pytest.approx(top)
    assert arrow.showlegend is not False and arrow.name == common.OPEN_END_NAME
    assert list(arrow.text) == ["fp16"]
    assert common.open_end_note(fig).startswith("CI95 unbounded at fp16: ")
    for name, other in bands.items():  # bounded bands unchanged
        if name != "fp16":
            group = runs[runs[C.ANNOTATION] == name]
            assert sorted({float(v) for v in other.y}) == pytest.approx(
                [float(group[C.CI95_LOWER].iloc[0]), float(group[C.CI95_UPPER].iloc[0])])
    mean_line = next(t for t in fig.data if t.legendgroup == "fp16" and t.mode == "lines"
                     and t.fill != "toself")
    assert ", unbounded)" in mean_line.hovertemplate


def test_stability_band_open_below_and_one_run_has_none() -> None:
    fig = build_runs_figure(_runs_unbounded(5.0, -np.inf), "Duration")
    (arrow,) = _arrows(fig)
    assert arrow.marker.symbol == "triangle-down"
    band = next(t for t in fig.data if t.fill == "toself" and t.legendgroup == "fp16")
    assert min(float(v) for v in band.y) < min(float(v) for t in fig.data
                                                if t.fill != "toself" for v in t.y
                                                if t.name != common.OPEN_END_NAME)
    one_run = build_runs_figure(_runs_unbounded(np.nan, np.nan), "Duration")
    assert "fp16" not in {t.legendgroup for t in one_run.data if t.fill == "toself"}
    assert not _arrows(one_run) and common.open_end_note(one_run) == ""


def _hover(trace, j: int) -> str:  # type: ignore[no-untyped-def]
    """Point ``j``'s hover text: the template with its customdata cells filled in."""
    import re

    row = trace.customdata[j] if trace.customdata is not None else []
    return re.sub(r"%\{customdata\[(\d+)\][^}]*\}", lambda m: str(row[int(m.group(1))]),
                  str(trace.hovertemplate))


def _ci95_charts():  # type: ignore[no-untyped-def]
    """Each chart that shows a mean (or ratio) with its CI95, one point's upper bound +inf:
    (figure, the series name, the text its hover must hold: a mean's open side is no ratio's
    baseline that cannot be told from 0)."""
    mean = common.MEAN_UNBOUNDED_NOTE
    ncu, cupti = bundled("h200-ncu-j1-fp16"), bundled("h200-cupti-j1-fp16")
    backends = backends_frame(ncu, cupti).copy()
    backends.loc[backends.index[0], F.RATIO_CI95_UPPER] = np.inf
    compare = _gate_pair_unbounded_first()
    summary = stability_frame(bundled("h200-ncu-matmul-sweep"), StabilityOptions()).copy()
    summary.loc[summary.index[0], C.CI95_UPPER] = np.inf
    first = summary[summary[C.ANNOTATION] == summary[C.ANNOTATION].iloc[0]]
    sweep = pd.DataFrame({C.ANNOTATION: ["copy"] * 2, "n": [1024, 4096], C.UNIT: "GB/s",
                          C.NUM_RUNS: 10, C.AVG: [20.0, 35.0], C.CI95_LOWER: [17.6, 30.0],
                          C.CI95_UPPER: [np.inf, 41.0]})
    return [(build_backends_figure(backends), backends[C.ANNOTATION].iloc[0],
             f"CI95 = [{backends[F.RATIO_CI95_LOWER].iloc[0]:.4f}, unbounded)"),
            (build_compare_figure(compare), compare[C.ANNOTATION].iloc[0],
             "CI95 = [0.0000, unbounded)"),
            (build_stability_figure(summary), summary[C.ANNOTATION].iloc[0],
             f"CI95 = [{_bound(summary[C.CI95_LOWER].iloc[0], first)}, unbounded) µs ({mean})"),
            (build_runs_figure(_runs_unbounded(np.inf), "Duration"), "fp16",
             f", unbounded) µs ({mean})"),
            (build_sweep_figure(sweep, "n", host_timer=True), "copy",
             f"CI95 = [{_bound(17.6, sweep)}, unbounded) GB/s ({mean})")]


def _bound(value: float, frame: pd.DataFrame) -> str:
    """A CI95 bound as the hover writes it: in the format of its trace's bounds (the
    annotation's rows of ``frame``), as a table writes them (common.hover_format)."""
    return format(float(value), common.hover_format(frame[[C.CI95_LOWER, C.CI95_UPPER]]))


def test_every_ci95_chart_s_hover_carries_the_ci95_line() -> None:
    """The backends chart's hover had no CI95 line where the Size sweep's had one, and the
    Stability bars' read "CI95 = [x, inf]" (a reviewer's find): every chart showing a mean
    with its CI95 writes it with common.ci95_text, "unbounded" for an open side, and why in
    the mean's words or the ratio's (the Stability per-run chart's said a mean's baseline
    could not be told from 0)."""
    for fig, name, said in _ci95_charts():
        lines = [_hover(t, 0) for t in fig.data
                 if str(t.name) == str(name) or t.legendgroup == str(name)
                 if t.hovertemplate and getattr(t, "fill", None) != "toself"]
        ci = [h for h in lines if "CI95" in h]
        assert ci and all(said in h for h in ci), (fig.layout.title.text, lines)
        assert not [h for h in ci if re.search(r"\b(inf|nan)\b", h, re.IGNORECASE)], ci
        # bounded points read both bounds in the same form
        bounded = [_hover(t, 1) for t in fig.data if str(t.name) == str(name)
                   and t.hovertemplate and t.customdata is not None and len(t.customdata) > 1]
        assert all(re.search(r"CI95 = \[[-\d.,e]+, [-\d.,e]+\]", h) for h in bounded), bounded
