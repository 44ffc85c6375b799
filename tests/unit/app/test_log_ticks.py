"""Log-axis ticks chosen from the data drawn (issue 37): one notation, labels that stay apart."""

from __future__ import annotations

import math

import plotly.graph_objects as go
import pytest

from app.core.figures import theme


def _gaps_ok(ticks: list[float], lo: float, hi: float, letter: str) -> bool:
    return theme._fits(ticks, lo, hi, letter)


@pytest.mark.parametrize(("lo", "hi", "letter"), [
    (5.0, 21_000.0, "y"), (4096.0, 4.3e9, "x"), (7e6, 9e6, "x"), (0.3, 900.0, "x"),
    (1e-4, 5e-4, "y"), (2.0, 3.0, "y"), (1.0, 1e12, "x"), (0.01, 2e6, "y")])
def test_ticks_stay_apart_and_share_one_notation(lo, hi, letter) -> None:
    ticks = theme.log_tick_values(lo, hi, letter)
    labels = theme.tick_labels(ticks)
    assert len(ticks) >= 1 and all(lo <= t <= hi for t in ticks), ticks
    assert not any("e" in text for text in labels), labels  # never 1e+6 beside 900,000
    if ticks[-1] < 10 * ticks[0]:  # one decade (round linear steps): one precision
        assert len({len(t.partition(".")[2]) for t in labels}) == 1, labels
    else:  # over decades each label exact, no trailing zero ("1,000,000.00" over "0.01")
        assert all(float(t.replace(",", "")) == v for t, v in zip(labels, ticks)), labels
        assert not any(t.endswith("0") and "." in t for t in labels), labels
    assert len(ticks) < 2 or _gaps_ok(ticks, lo, hi, letter), labels


def test_the_working_set_axis_of_cache_and_clock_reads_in_full() -> None:
    """The axis printed "7e+6 8e+6 9e+6" on top of each other: now every other decade written
    out (thirteen-character labels need more than one decade of a 420 px axis)."""
    ticks = theme.log_tick_values(4096.0, 1.07e9, "x")
    assert theme.tick_labels(ticks) == ["10,000", "1,000,000", "100,000,000"]
    assert theme.tick_labels(theme.log_tick_values(7e6, 9e6)) == [
        "7,000,000", "8,000,000", "9,000,000"]


def test_less_than_two_decades_of_long_labels_still_get_several_ticks() -> None:
    """The fusion chart's n axis (2^20 .. 6.7e7) was labelled only "50,000,000"."""
    assert theme.tick_labels(theme.log_tick_values(1_048_576.0, 6.7e7)) == [
        "2,000,000", "5,000,000", "20,000,000", "50,000,000"]
    assert theme.log_tick_values(30.0, 989.4, "y")[-1] == 1000.0  # the roof's tick is drawn


def test_a_narrow_ratio_axis_gets_two_ticks_inside_its_data() -> None:
    """Compare's log ratio axis of a job against a near twin (ratios 0.9965-1.0067 with their
    CI95): the ticks 0.98, 1.00, 1.02 lay outside plotly's range, so only "1.00" was drawn."""
    ticks = theme.log_tick_values(0.9965, 1.0067, "y")
    assert len(ticks) >= 2 and all(0.9965 <= t <= 1.0067 for t in ticks), ticks
    assert theme.tick_labels(ticks) == ["1.000", "1.005"]


def test_apply_layout_sets_ticks_on_every_log_axis_from_its_data() -> None:
    fig = go.Figure(go.Scatter(x=[0.5, 300.0], y=[2.0, 3000.0], error_y={
        "type": "data", "array": [0.0, 7000.0], "arrayminus": [1.5, 0.0]}))
    fig.update_xaxes(**theme.LOG_AXIS)
    fig.update_yaxes(**theme.LOG_AXIS)
    theme.apply_layout(fig, "t")
    assert list(fig.layout.xaxis.ticktext) == ["0.5", "1", "2", "5", "10", "20", "50", "100",
                                               "200"] or list(fig.layout.xaxis.ticktext) == [
        "1", "10", "100"]
    # a tick at or beyond each end of what is drawn (the whiskers count): 0.5 .. 10,000
    assert min(fig.layout.yaxis.tickvals) <= 0.5 and max(fig.layout.yaxis.tickvals) >= 10_000
    assert math.isclose(max(fig.layout.yaxis.tickvals), 10_000)  # the whisker's top counts
    assert min(fig.layout.yaxis.tickvals) > 0.05  # one step below, no more


def test_spaced_ticks_thin_a_thousand_sizes() -> None:
    sizes = [float(64 + 16 * i) for i in range(1000)]
    ticks, text = theme.spaced_ticks(sizes, [f"{s:,.0f}" for s in sizes])
    assert 2 <= len(ticks) <= 12 and ticks[0] == 64.0
    assert _gaps_ok(ticks, sizes[0], sizes[-1], "x")


def _whisker_ends(fig: go.Figure) -> tuple[float, float]:
    """The lowest and highest value drawn on the y axis, whiskers included."""
    return tuple(theme.drawn_extents(fig)["y"][i] for i in (0, -1))  # type: ignore[return-value]


def _compare_of_the_fresh_user() -> go.Figure:
    """Compare's chart as session 26's fresh user saw it (a cpu gate pair, runs 10): the n=64
    ratio 0.82 with CI95 0.5-1.4, n=128 0.97 with 0.88-1.05."""
    from bundled import bundled

    from app.core import frame_columns as F
    from app.core.figures.compare import build_compare_figure
    from app.core.views.compare import CompareOptions, compare_frame

    frame = compare_frame(bundled("h200-cupti-gate-base"), bundled("h200-cupti-gate-again"),
                          CompareOptions()).head(2).copy()
    frame[[F.RATIO, F.RATIO_CI95_LOWER, F.RATIO_CI95_UPPER]] = [[0.82, 0.5, 1.4],
                                                                [0.97, 0.88, 1.05]]
    return build_compare_figure(frame)


def _sweep_past_a_decade() -> go.Figure:
    """A log Size sweep whose top whisker (12,500) runs past the decade under it (10,000)."""
    import pandas as pd

    from app.core.figures.sweep import build_sweep_figure
    from profiling_worker.bundle.schema import columns as C

    frame = pd.DataFrame({C.ANNOTATION: "a", "n": [64, 128, 256], C.UNIT: "µs", C.NUM_RUNS: 10,
                          C.AVG: [20.0, 900.0, 9_000.0], C.CI95_LOWER: [15.0, 800.0, 6_000.0],
                          C.CI95_UPPER: [25.0, 1_000.0, 12_500.0]})
    return build_sweep_figure(frame, "n", host_timer=False, log_y=True)


@pytest.mark.parametrize("build", [_compare_of_the_fresh_user, _sweep_past_a_decade])
def test_every_whisker_lies_between_two_ticks_inside_the_range(build) -> None:
    """Session 26's fresh user: Compare's n=64 CI95 whisker ran past the last y tick (1.0) with
    no tick above it. On each log y axis with error bars (Compare, Size sweep) a tick stands
    at or beyond each whisker end and the range holds them."""
    fig = build()
    axis = fig.layout.yaxis
    assert axis.type == "log"
    low, high = _whisker_ends(fig)
    ticks = list(axis.tickvals)
    assert min(ticks) <= low * (1 + 1e-9) and max(ticks) >= high * (1 - 1e-9), (ticks, low, high)
    bottom, top = (10.0 ** r for r in axis.range)
    assert bottom <= min(ticks) and max(ticks) <= top, (axis.range, ticks)
    assert len(set(theme.tick_labels(ticks))) == len(ticks)  # each tick its own label
