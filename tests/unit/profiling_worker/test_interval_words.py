"""The line said beside every interval (``interval_words``): each method's own coverage from the
recorded study's figures (``interval_coverage.json``), and no H200 figure for host timings."""

from __future__ import annotations

import pytest

from profiling_worker.bundle.schema import interval_words as W

FIGURES = W.figures()


@pytest.mark.parametrize("method", [W.MEAN, W.DIFFERENCE, W.RATIO, W.RATIO90])
def test_each_method_says_its_own_range_lowest_and_populations(method: str) -> None:
    own = FIGURES["methods"][method]
    said = W.line(method)
    assert said.startswith(f"Interval: {W.METHOD_NAMES[method]}. Coverage: ")
    assert f"{own['low_pct']:.1f}-{own['high_pct']:.1f} % of draws" in said
    assert f"{own['lowest_pct']:.1f} % for the lowest" in said
    side = "" if method == W.MEAN else " a side"
    assert f"({own['lowest_runs']} runs{side};" in said
    assert f"over {FIGURES['populations']} recorded populations" in said \
        or f"over {FIGURES['pairs']} pairs of {FIGURES['populations']} recorded" in said
    assert f"recorded H200 GPU timings at 3-20 runs{side} it held" in said
    assert said.endswith("docs/statistics.md).")


def test_the_mean_ci_gets_its_own_range_not_the_three_methods_pooled() -> None:
    """The Size sweep showed the mean CI95 with "76-92 %", the range over all three methods:
    the mean's own highest is below the difference's."""
    mean, diff = FIGURES["methods"][W.MEAN], FIGURES["methods"][W.DIFFERENCE]
    assert mean["high_pct"] < diff["high_pct"]
    said = W.line(W.MEAN)
    assert f"-{diff['high_pct']:.1f} %" not in said
    assert "lowest population" in said
    assert f"on average over {FIGURES['populations']} recorded populations" in said
    assert "lowest pair" in W.line(W.RATIO)
    assert f"{FIGURES['pairs']} pairs of {FIGURES['populations']}" in W.line(W.RATIO)


@pytest.mark.parametrize("host_timer", [False, True])
def test_a_mean_has_one_side_and_its_runs_are_not_said_a_side(host_timer: bool) -> None:
    """A fresh user's find: a one-job Student-t line said "(3-20 runs a side)" where there is
    one side; the two-sided intervals keep it."""
    assert "a side" not in W.line(W.MEAN, host_timer)
    assert "3-20 runs" in W.line(W.MEAN, host_timer)
    assert "3-20 runs a side" in W.line(W.RATIO, host_timer)
    assert "3-20 runs a side" in W.line(W.DIFFERENCE, host_timer)


def test_the_methods_are_named() -> None:
    assert "Student-t" in W.line(W.MEAN)
    assert "Welch" in W.line(W.DIFFERENCE)
    assert "Fieller" in W.line(W.RATIO) and "ratio − 1" in W.line(W.RATIO)


@pytest.mark.parametrize("method", [W.MEAN, W.DIFFERENCE, W.RATIO, W.RATIO90])
def test_host_timings_get_no_h200_figures(method: str) -> None:
    said = W.line(method, host_timer=True)
    assert W.METHOD_NAMES[method] in said
    assert "measured on H200 GPU timings only" in said
    assert "not known for host timings" in said
    assert "% of draws" not in said and "lowest" not in said


def test_an_unknown_method_is_refused() -> None:
    with pytest.raises(KeyError):
        W.line("median")
