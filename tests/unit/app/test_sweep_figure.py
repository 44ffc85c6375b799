"""build_sweep_figure: log2 axis, CI95 error bars, units, the host-timer caveat."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from app.core import derived
from app.core.figures import common
from profiling_worker.bundle.loader import load_bundle
from app.core.figures.sweep import build_sweep_figure
from app.core.views.sweep import SweepOptions, sweep_frame
from profiling_worker.bundle.schema import columns as C, intervals


def _frame() -> pd.DataFrame:
    return pd.DataFrame({C.ANNOTATION: ["a", "a", "b", "b"], "n": [1024, 4096, 1024, 4096],
                         C.UNIT: "µs", C.NUM_RUNS: 10, C.AVG: [1.0, 4.0, 2.0, 8.0],
                         C.CI95_LOWER: [0.9, 3.0, 1.5, 7.9], C.CI95_UPPER: [1.2, 4.5, 2.1, 9.0]})


def test_a_sweep_with_other_sizes_than_powers_of_two_labels_every_tick_as_a_number() -> None:
    """Session 25's fresh user: a cpu sweep of 16, 32, 48, 64 ... read "2^4, 2^5, 48, 2^6" on
    one axis; each axis now keeps one notation (issue 37)."""
    sizes = [16, 32, 48, 64, 96, 128]
    frame = pd.DataFrame({C.ANNOTATION: "a", "n": sizes, C.UNIT: "µs", C.NUM_RUNS: 10,
                          C.AVG: np.arange(1.0, 7.0), C.CI95_LOWER: np.arange(0.5, 6.5),
                          C.CI95_UPPER: np.arange(1.5, 7.5)})
    text = list(build_sweep_figure(frame, "n", host_timer=True,
                                   quantity_label="Time").layout.xaxis.ticktext)
    assert text and not any("^" in t for t in text), text
    assert set(text) <= {f"{n:,}" for n in sizes}, text


def test_axes_error_bars_and_hover() -> None:
    fig = build_sweep_figure(_frame(), "n", host_timer=False, quantity_label="Time")
    assert [t.name for t in fig.data] == ["a", "b"]
    assert fig.layout.xaxis.type == "log"
    assert list(fig.layout.xaxis.ticktext) == ["2^10", "2^12"]
    assert list(fig.layout.xaxis.tickvals) == [1024.0, 4096.0]
    assert fig.layout.yaxis.title.text == "Time (µs)"
    assert "n" in fig.layout.xaxis.title.text
    a = fig.data[0]
    assert isinstance(a.x, np.ndarray) and isinstance(a.y, np.ndarray)
    assert a.error_y.symmetric is False
    np.testing.assert_allclose(a.error_y.array, [0.2, 0.5])
    np.testing.assert_allclose(a.error_y.arrayminus, [0.1, 1.0])
    assert "µs" in a.customdata[0, 4] and "CI95 = [" in a.customdata[0, 4]
    assert "%{customdata[4]}" in a.hovertemplate
    assert "host wall-clock" not in fig.layout.title.text


def test_cpu_job_title_says_host_wall_clock(cpu_bundle: Path) -> None:
    bundle = load_bundle(cpu_bundle)
    frame = sweep_frame(bundle, SweepOptions(quantity="gbps"))
    fig = build_sweep_figure(frame, "n", host_timer=bundle.host_timer, quantity_label=derived.QUANTITY_LABELS["gbps"].split(" (")[0])
    assert fig.layout.title.text.replace("<br>", " ").endswith("(host wall-clock, not GPU)")
    # the unit its median fits: this session's host timings set it (GB/s, or MB/s below 1)
    (unit,) = set(frame["Unit"])
    assert unit in ("GB/s", "MB/s", "kB/s") and frame["AvgValue"].median() >= 1
    assert fig.layout.yaxis.title.text == f"Bandwidth, analytic minimum bytes / time ({unit})"
    lines = [t for t in fig.data if t.name != common.OPEN_END_NAME]
    assert len(lines) == 3
    # a host-timed throughput whose time interval reaches 0 has CI95_Upper inf (a fresh
    # user's find on this very chart): then its bar runs to the chart's edge with an arrow,
    # and the note names it; with every interval bounded, no arrow and no note
    open_rows = frame[np.isinf(frame[C.CI95_UPPER].to_numpy(float))]
    arrows = [t for t in fig.data if t.name == common.OPEN_END_NAME]
    assert len(arrows) == (1 if len(open_rows) else 0)
    assert not any(np.isinf(np.asarray(t.error_y.array, float)).any() for t in lines)
    note = common.open_end_note(fig)
    assert bool(note) == bool(len(open_rows))
    for _, r in open_rows.iterrows():
        assert f"{r[C.ANNOTATION]} at {r['n']}" in note


def test_empty_frame_gives_empty_figure() -> None:
    fig = build_sweep_figure(_frame().iloc[0:0], "n", host_timer=False)
    assert len(fig.data) == 0


def test_log_y_default_follows_the_span() -> None:
    from app.core.figures.sweep import wants_log_y

    assert not wants_log_y(_frame())  # 1 .. 8 µs: 8x
    assert not wants_log_y(_frame().assign(**{C.AVG: [1.0, 2.0, 3.0, 9.0]}))
    assert wants_log_y(_frame().assign(**{C.AVG: [5.0, 50.0, 500.0, 21_000.0]}))
    assert not wants_log_y(_frame().assign(**{C.AVG: [-1.0, 2.0, 3.0, 90.0]}))
    assert not wants_log_y(_frame().iloc[0:0])


def test_log_y_clips_non_positive_lower_whiskers_and_says_so() -> None:
    frame = _frame().assign(**{C.AVG: [5.0, 21_000.0, 2.0, 8.0],
                               C.CI95_LOWER: [-1.0, 20_000.0, 0.0, 7.9]})
    fig = build_sweep_figure(frame, "n", host_timer=False, log_y=True)
    assert fig.layout.yaxis.type == "log"
    assert fig.layout.yaxis.title.text == "Time (µs)"
    a, b = fig.data
    floor = 1.0  # half the smallest positive value (2.0)
    np.testing.assert_allclose(a.error_y.arrayminus, [5.0 - floor, 1_000.0])
    np.testing.assert_allclose(b.error_y.arrayminus, [2.0 - floor, 0.1])
    assert all(v > 0 for t in fig.data for v in np.asarray(t.y) - np.asarray(t.error_y.arrayminus))
    notes = list(a.customdata[:, 3])
    assert "lower CI95 ≤ 0" in notes[0] and notes[1] == ""
    # customdata is escaped as text: a "<br>" there read "&lt;br&gt;", shown as "<br>"
    assert all("&lt;" not in str(v) for row in a.customdata for v in row)
    assert list(a.customdata[:, 0]) == [-1.0, 20_000.0]  # exact bounds stay in the hover
    assert "%{customdata[3]}" in a.hovertemplate
    linear = build_sweep_figure(frame, "n", host_timer=False)
    assert linear.layout.yaxis.type == "linear"
    np.testing.assert_allclose(linear.data[0].error_y.arrayminus, [6.0, 1_000.0])


def test_a_point_without_ci95_has_no_error_bar() -> None:
    """One run: NaN bounds draw no whisker (not a zero-width one) and the hover says why."""
    frame = _frame().assign(**{C.CI95_LOWER: [np.nan, 3.0, 1.5, 7.9],
                               C.CI95_UPPER: [np.nan, 4.5, 2.1, 9.0]})
    a = build_sweep_figure(frame, "n", host_timer=False).data[0]
    assert np.isnan(a.error_y.array[0]) and np.isnan(a.error_y.arrayminus[0])
    assert a.customdata[0, 4] == intervals.ONE_RUN_NOTE
    assert "nan" not in a.customdata[0, 4].lower()
    bounds = re.match(r"CI95 = \[([\d.,]+), ([\d.,]+)\]", a.customdata[1, 4])
    assert bounds and [float(b) for b in bounds.groups()] == [3.0, 4.5]


def test_a_log_y_axis_labels_every_tick_in_full() -> None:
    """plotly's default log ticks read "2", "5", "10k", "2" (a new user took the 2 after 10k for
    2); every log axis of the figures takes theme.LOG_AXIS: 1,000, 2,000, 5,000, 10,000."""
    from app.core.figures import theme

    frame = _frame().assign(**{C.AVG: [5.0, 50.0, 500.0, 21_000.0]})
    log = build_sweep_figure(frame, "n", host_timer=False, log_y=True).layout.yaxis
    assert log.type == "log" and dict(theme.LOG_AXIS) == {"type": "log"}
    # decades, the last one above the top whisker (21,000), written in full
    assert list(log.tickvals)[-3:] == [1_000, 10_000, 100_000]
    assert list(log.ticktext) == theme.tick_labels(list(log.tickvals))
    assert not any("k" in text or "e" in text for text in log.ticktext), log.ticktext
    linear = build_sweep_figure(frame, "n", host_timer=False).layout.yaxis
    assert linear.type == "linear" and linear.tickformat == theme.VALUE_TICKFORMAT  # no SI


def test_a_thousand_config_sweep_draws_every_kth_config_and_says_so() -> None:
    """Issue 37: a 1,000-config sweep drew 1,000 points per line; what is drawn is thinned (the
    frame is not) and the title says so."""
    from app.core.figures.sweep import DRAW_MOST

    n = np.arange(1, 1001, dtype=float) * 64
    frame = pd.DataFrame({C.ANNOTATION: "fp32", "n": n, C.UNIT: "us", C.AVG: n / 100,
                          C.CI95_LOWER: n / 110, C.CI95_UPPER: n / 90, C.NUM_RUNS: 10})
    fig = build_sweep_figure(frame, "n", host_timer=False)
    (trace,) = fig.data
    assert len(trace.x) <= DRAW_MOST + 1 and trace.x[-1] == n[-1] and trace.x[0] == n[0]
    step = -(-1000 // DRAW_MOST)  # the smallest k that keeps at most DRAW_MOST points
    # a subtitle, drawn as one (its markup was escaped with the title's names: the page
    # showed "<br><sup>every 10 configs drawn..." as text)
    assert fig.layout.title.text == (f"Time vs n<br><sup>every {step} configs drawn of 1,000; "
                                     "the CSV below has all</sup>")
    assert len(frame) == 1000
    assert len(fig.layout.xaxis.tickvals) <= 12


def test_a_log_axis_names_the_points_it_cannot_draw(tmp_path: Path) -> None:
    """A new user's find: an imported -5 ns mean vanished from the log-y chart without a word.
    Every figure's log axis (theme.apply_layout) now names what it leaves out: here a recorded
    sweep with one mean made negative and one 0."""
    import shutil

    from tests.scenarios import scenario_dir

    copy = tmp_path / "sweep"
    shutil.copytree(scenario_dir("h200-cupti-matmul-sweep"), copy)
    table = copy / C.TABLES_DIR / f"{C.TABLE_RUNS}.parquet"
    runs = pd.read_parquet(table)
    fp32 = (runs[C.METRIC] == C.GPU_TIME) & (runs[C.ANNOTATION] == "fp32")
    n = sorted(runs.loc[fp32, "n"].unique())[:2]
    runs.loc[fp32 & (runs["n"] == n[0]), C.VALUE] = -5.0
    runs.loc[fp32 & (runs["n"] == n[1]), C.VALUE] = 0.0
    runs.to_parquet(table)
    frame = sweep_frame(load_bundle(copy), SweepOptions(time_unit="ns"))
    title = build_sweep_figure(frame, "n", host_timer=False, log_y=True).layout.title.text
    assert (f"not drawn on the log y axis (0 or below): fp32 at {n[0]:,} (-5), "
            f"fp32 at {n[1]:,} (0)") in title
    linear = build_sweep_figure(frame, "n", host_timer=False).layout.title.text
    assert "not drawn" not in linear


def test_the_table_shows_the_value_and_its_ci95_before_the_run_audit() -> None:
    """Session 22's fresh user: at 1000x700 the Run audit column's cells (35 characters) kept
    every value right of the table's sight. The table (not the CSV's frame) puts the value, its
    unit and CI95 bounds right after the columns naming the row; the rest keep their order."""
    from app.core import frame_columns as F
    from app.core.figures.sweep import VALUES_FIRST, table_rows
    from tests.scenarios import SCENARIOS

    frame = sweep_frame(load_bundle(SCENARIOS / "h200-cupti-stability"), SweepOptions())
    shown = list(table_rows(frame).columns)
    audit = shown.index(F.RUN_AUDIT)
    assert shown[audit - len(VALUES_FIRST):audit] == list(VALUES_FIRST), shown
    # one parameter: each series is its annotation, so the table leaves Series to the CSV
    assert list(frame[F.SERIES]) == list(frame["Annotation"])
    kept = [c for c in frame.columns if c != F.SERIES]
    assert sorted(shown) == sorted(kept)
    rest = [c for c in kept if c not in VALUES_FIRST]
    assert [c for c in shown if c not in VALUES_FIRST] == rest
    plain = frame.drop(columns=F.RUN_AUDIT)
    assert list(table_rows(plain).columns) == kept[:kept.index(F.RUN_AUDIT)] + kept[
        kept.index(F.RUN_AUDIT) + 1:]


def test_the_table_shows_series_only_where_it_differs_from_the_annotation() -> None:
    """Session 23's fresh user: a one-parameter job's table had Annotation and Series columns
    of the same values. A job whose other parameters split the lines keeps its Series."""
    from app.core import frame_columns as F
    from app.core.figures.sweep import table_rows
    from tests.scenarios import SCENARIOS

    one = sweep_frame(load_bundle(SCENARIOS / "h200-cupti-stability"), SweepOptions())
    assert F.SERIES in one and F.SERIES not in table_rows(one)
    split = one.assign(**{F.SERIES: one["Annotation"] + " · block_size=128"})
    assert list(table_rows(split)[F.SERIES]) == list(split[F.SERIES])
