"""Every chart of one point (or bar) per annotation x config marks those whose runs failed the
run audit as the Size sweep does (a fresh user's find: on a contended cpu job the Size sweep
marked every point × while the Roofline drew the same configs unmarked): the same badges
(app.core.views.run_audit.with_outcome), the same × marker and 'run audit:' hover line
(app.core.figures.common), the same caption (run_audit.chart_audit_notes) and gate."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest

from app.core import frame_columns as F
from app.core.figures import common
from app.core.figures.bound import build_bound_figure, build_roofline_figure
from app.core.figures.cache_clock import build_cache_clock_figure
from app.core.figures.kernels import build_kernels_figure
from app.core.figures.memory import build_memory_figure
from app.core.views import run_audit as R
from app.core.views.bound import LATENCY_THRESHOLD_PCT, BoundOptions, bound_frame
from app.core.views.cache_clock import cache_clock_frame
from app.core.views.kernels import kernel_time_frame
from app.core.views.memory import MemoryOptions, memory_frame
from app.core.views.roofline import (RooflineOptions, roofline_ceilings, roofline_frame,
                                     roofline_table)
from app.core.views.stability import StabilityOptions, stability_frame, stable_text
from profiling_worker.bundle.loader import load_bundle
from tests.scenarios import scenario, scenario_dir, with_clock_drop

SWEEP = "h200-ncu-matmul-sweep"
#: pairs given a planted clock drop (runs 0-2 at 90 % of their clock): the recorded runs of
#: every pair pass, since the clock check reads a run against its own config's median (the
#: job's median failed fp16 n >= 2048 and bf16 n >= 4096, tensor-core GEMMs at a steady
#: lower clock, which these tests took for their failed pairs)
FLAGGED = {("fp16", 2048), ("fp16", 8192), ("bf16", 8192)}
DROPPED = with_clock_drop(SWEEP, [(a, {2048: 2, 8192: 4}[n]) for a, n in FLAGGED])
FAILED = "⚠ 7/10 passed; failed clock (3)"


def _points(trace: go.Scatter) -> list[tuple[object, str, str]]:
    """(x, symbol, run audit cell) of each point of a scatter trace."""
    symbols = trace.marker.symbol
    symbols = symbols if isinstance(symbols, (list, tuple)) else [symbols] * len(trace.x)
    return [(x, s, row[-1]) for x, s, row in zip(trace.x, symbols, trace.customdata)]


def test_the_roofline_marks_the_points_whose_runs_failed_the_audit() -> None:
    points = roofline_frame(DROPPED, RooflineOptions())
    audit = dict(zip(zip(points["Annotation"], points["n"]), points[F.RUN_AUDIT]))
    assert audit[("fp16", 8192)] == FAILED and audit[("fp32", 8192)] == "✓ 10/10 passed"
    fig = build_roofline_figure(points, roofline_ceilings(points))
    traces = [t for t in fig.data if t.name in {"fp16", "bf16", "fp32"}]
    assert len(traces) == 3
    for trace in traces:
        labels = list(points.loc[points["Annotation"] == trace.name, "n"])
        marked = {n for n, (_, symbol, cell) in zip(labels, _points(trace))
                  if symbol == common.AUDIT_SYMBOL and cell == FAILED}
        assert marked == {n for a, n in FLAGGED if a == trace.name}, trace.name
        assert "<br>run audit: %{customdata[6]}" in trace.hovertemplate
    # the table and CSV keep the column
    assert F.RUN_AUDIT in roofline_table(points, roofline_ceilings(points))


def test_the_bound_bars_mark_the_pairs_whose_runs_failed_the_audit() -> None:
    frame = bound_frame(DROPPED, BoundOptions())
    fig = build_bound_figure(frame, LATENCY_THRESHOLD_PCT)
    (marks,) = [t for t in fig.data if t.name == common.AUDIT_BARS_NAME]
    assert marks.marker.symbol == common.AUDIT_SYMBOL
    assert set(marks.x) == {f"{a} · n={n}" for a, n in FLAGGED}
    assert {row[0] for row in marks.customdata} == {FAILED}
    assert "run audit: %{customdata[0]}" in marks.hovertemplate
    for bars in (t for t in fig.data if t.type == "bar"):
        assert "<br>run audit: %{customdata[4]}" in bars.hovertemplate
        said = dict(zip(bars.x, (row[4] for row in bars.customdata)))
        assert said["fp16 · n=8192"] == FAILED and said["fp32 · n=8192"] == "✓ 10/10 passed"


def test_a_job_whose_runs_all_passed_is_not_marked() -> None:
    bundle = scenario("h200-ncu-cuda-core-saxpy")  # 6 pairs, every run passed
    points = roofline_frame(bundle, RooflineOptions())
    assert set(points[F.RUN_AUDIT]) == {"✓ 5/5 passed"}
    fig = build_roofline_figure(points, roofline_ceilings(points))
    assert all(t.marker.symbol is None for t in fig.data if t.mode == "lines+markers+text")
    frame = bound_frame(bundle, BoundOptions())
    bars = build_bound_figure(frame, LATENCY_THRESHOLD_PCT)
    assert common.AUDIT_BARS_NAME not in {t.name for t in bars.data}
    assert R.chart_audit_notes(bundle, R.points_of(points), R.PAGE_EVIDENCE) == ()


def test_the_caption_names_the_marked_points_of_any_chart() -> None:
    bundle = DROPPED
    points = roofline_frame(bundle, RooflineOptions())
    (said,) = R.chart_audit_notes(bundle, R.points_of(points), R.PAGE_EVIDENCE)
    # first, for a user new to the audit, what a mark means, what to do, where to read more
    meaning, marked = said.split(" Marked: ", 1)
    assert meaning == (
        "An × marks a point whose runs failed the run audit (the checks that each run timed "
        "the kernel undisturbed), so its value may not be the kernel's own: read why (the "
        "Results tables page, “Run audit”) before trusting it, and record the point again "
        "once the cause is gone.")
    assert ("bf16 n=8192: 7/10 runs passed (clock 3: 1,420 MHz vs its config's "
            "median 1,576 MHz (-9.9 %; limit 5 %)") in marked
    assert ("What the failed checks mean: clock: the run's SM clock was more than 5 % below "
            "the median of its own config's runs (same annotation and size), or power or "
            "thermal capped.") in marked
    assert "fp32" not in said and R.PAGE_EVIDENCE in said


def test_a_note_of_many_marked_points_stays_within_its_bound() -> None:
    """Each pair's own evidence made the contended cpu job's note 1,233 characters (CI, session
    21); past :data:`R.NOTE_CHARS` the points after those that fit are named without it, and
    every marked point is still named."""
    pairs = [(a, c) for a in ("fp16", "bf16", "fp32") for c in range(5)]
    bundle = with_clock_drop(SWEEP, pairs)
    points = roofline_frame(bundle, RooflineOptions())
    (said,) = R.chart_audit_notes(bundle, R.points_of(points), R.PAGE_EVIDENCE)
    assert len(said) <= R.NOTE_CHARS, len(said)
    marked = said.split(" Marked: ", 1)[1].split(". What the failed checks mean", 1)[0]
    spelled, more = marked.split(" more: ")
    assert spelled.count("runs passed (clock 3: ") >= 1
    count = int(spelled.rpartition("; ")[2])
    named = more.removesuffix(" …").split(", ")
    assert len(named) == min(count, R.NOTE_MORE_NAMES) and more.endswith(" …") == (
        count > R.NOTE_MORE_NAMES)
    assert said.count("runs passed (clock 3: ") + count == len(pairs)
    # the report's notes spell every pair out; Stability's text is bounded as the note
    assert str(R.failed_text(bundle)).count("runs passed (clock 3: ") == len(set(pairs))
    stable = stable_text(bundle, stability_frame(bundle, StabilityOptions()),
                         R.badge_frame(bundle))
    head, _, pairs_said = stable.partition("not valid: ")
    assert " more: " in pairs_said and len(pairs_said) <= R.NOTE_CHARS + 1, len(pairs_said)


def test_beyond_the_bound_the_charts_are_not_marked_and_say_so(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(R, "CHART_AUDIT_RUNS", 149)
    bundle = load_bundle(scenario_dir(SWEEP))  # not the session's copy: its audit is read
    points = roofline_frame(bundle, RooflineOptions())
    assert F.RUN_AUDIT not in points and F.RUN_AUDIT not in bound_frame(bundle, BoundOptions())
    fig = build_roofline_figure(points, roofline_ceilings(points))
    assert all("run audit:" not in str(t.hovertemplate) for t in fig.data)
    (said,) = R.chart_audit_notes(bundle, R.points_of(points), R.REPORT_EVIDENCE)
    assert said.startswith("Not marked by the run audit: this job's 150 measurements (runs × "
                           "regions) are more than the 149")


def test_the_memory_bars_mark_the_pairs_whose_runs_failed_the_audit() -> None:
    frame = memory_frame(DROPPED, MemoryOptions())
    shown = frame[frame["n"] == 8192]  # the page opens on the last config
    fig = build_memory_figure(shown)
    (marks,) = [t for t in fig.data if t.name == common.AUDIT_BARS_NAME]
    assert marks.marker.symbol == common.AUDIT_SYMBOL
    assert set(marks.x) == {"fp16 · n=8192", "bf16 · n=8192"}
    for bars in (t for t in fig.data if t.type == "bar"):
        assert "<br>run audit: %{customdata[5]}" in bars.hovertemplate
        said = dict(zip(bars.x, (row[5] for row in bars.customdata)))
        assert said["fp16 · n=8192"] == FAILED and said["fp32 · n=8192"] == "✓ 10/10 passed"


@pytest.mark.parametrize("share", [True, False])
def test_the_kernel_bars_mark_the_regions_whose_runs_failed_the_audit(share: bool) -> None:
    times = kernel_time_frame(DROPPED)
    assert F.RUN_AUDIT in times
    fig = build_kernels_figure(times, share=share)
    (marks,) = [t for t in fig.data if t.name == common.AUDIT_BARS_NAME]
    assert marks.marker.symbol == common.AUDIT_SYMBOL
    assert sorted(marks.x) == sorted(f"{a} · n={n}" for a, n in FLAGGED)  # once each
    for bars in (t for t in fig.data if t.type == "bar"):
        assert "<br>run audit: %{customdata[3]}" in bars.hovertemplate
    if share:
        assert fig.layout.yaxis.range == (0, 110) and set(marks.y) == {105.0}


def test_the_cache_clock_points_are_marked_by_their_own_jobs_audit() -> None:
    """Two variants of the elementwise job: cache all (fused n=16777216: 5 runs of the slower
    group, population) and cache none (every run passed); each point by its own job's audit."""
    frame = cache_clock_frame([scenario("h200-ncu-elementwise"),
                               scenario("h200-ncu-elementwise-cache-none")])
    fig = build_cache_clock_figure(frame, None, "")
    marked = [(t.name, x) for t in fig.data for x, symbol, cell in _points(t)
              if symbol == common.AUDIT_SYMBOL and cell.startswith(F.AUDIT_FLAGGED_MARK)]
    big = float(frame.loc[(frame["Annotation"] == "fused") & (frame["n"] == 16777216),
                          F.WORKING_SET_BYTES].iloc[0])
    assert set(marked) == {("fused · cache all · clock none", big)}
    assert all("<br>run audit: %{customdata[1]}" in t.hovertemplate for t in fig.data
               if t.name.startswith("fused · cache all"))


def test_every_table_shows_the_run_audit_beside_the_row_s_name() -> None:
    """A fresh user's find: at 1400x900 the Kernels table's Run audit column was off screen,
    right of the long kernel names; it was appended last to every table that carries it. Each
    such table now has it right after the columns that name the row (Annotation, Config and
    the config's parameters; the Size sweep's Series), before the measured values."""
    from app.core.views.chart_units import kernels_table, memory_table
    from app.core.views.sweep import SweepOptions, sweep_frame

    bundle = scenario(SWEEP)
    tables = {"kernels": kernels_table(kernel_time_frame(bundle)),
              "memory": memory_table(memory_frame(bundle, MemoryOptions())),
              "bound": bound_frame(bundle, BoundOptions()),
              "roofline": roofline_frame(bundle, RooflineOptions()),
              "sweep": sweep_frame(bundle, SweepOptions())}
    for name, table in tables.items():
        columns = list(table.columns)
        assert F.RUN_AUDIT in columns, name
        naming = ["Annotation", *(["Series"] if name == "sweep" else []), "Config", "n"]
        assert columns[:columns.index(F.RUN_AUDIT)] == naming, (name, columns)
    assert list(tables["kernels"].columns)[3:5] == [F.RUN_AUDIT, "Kernel"]
