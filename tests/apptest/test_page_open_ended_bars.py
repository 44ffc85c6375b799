"""The Compare page names the points whose CI95 is unbounded in a note under the chart (their
bars run to the chart's edge and end in an arrow; a fresh user's find: they were drawn with no
bar). The recorded H200 gate pair, one ratio's upper bound set to inf as an unbounded
interval has it (Fieller's g >= 1) before the figure is built."""

from __future__ import annotations

import numpy as np

from apptest_helpers import texts
from app.core import frame_columns as F
from app.core.figures import common, compare as compare_figure
from tests.scenarios import SCENARIOS


def test_compare_note_names_the_unbounded_point(store, monkeypatch, app) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    built = compare_figure.build_compare_figure
    opened = []

    def unbounded_first(frame, *args, **kwargs):  # type: ignore[no-untyped-def]
        frame = frame.copy()
        if len(frame):
            frame.loc[frame.index[0], [F.RATIO_CI95_LOWER, F.RATIO_CI95_UPPER]] = [0.0, np.inf]
            opened.append(f"{frame['Annotation'].iloc[0]} at {frame[F.CONFIG_LABEL].iloc[0]}")
        return built(frame, *args, **kwargs)

    monkeypatch.setattr(compare_figure, "build_compare_figure", unbounded_first)
    at = app("compare", query={"baseline": "h200-cupti-gate-base",
                               "candidate": "h200-cupti-gate-again"})
    assert not at.exception, at.exception
    assert opened
    said = [c.value for c in at.caption if c.value.startswith("CI95 unbounded at ")]
    assert len(said) == 1 and opened[-1] in said[0] and "arrow" in said[0], texts(at)
    assert common.OPEN_END_NAME  # the arrows' legend entry the note speaks of


def test_compare_without_unbounded_points_has_no_note(store, monkeypatch, app) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("compare", query={"baseline": "h200-cupti-gate-base",
                               "candidate": "h200-cupti-gate-again"})
    assert not at.exception, at.exception
    assert not [c for c in at.caption if c.value.startswith("CI95 unbounded at ")]


def test_sweep_note_names_the_unbounded_point(store, monkeypatch, app) -> None:  # type: ignore[no-untyped-def]
    """The Size sweep's Analytic GB/s of the recorded h200-ncu-matmul-sweep, one point's
    CI95_Upper inf (a throughput whose time interval reaches 0): the note under the chart
    names it, and the chart's arrow is drawn."""
    from app.ui import sweep_chart
    from apptest_helpers import plotly_specs
    from profiling_worker.bundle.schema import columns as C

    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    made = sweep_chart.frame
    opened = []

    def unbounded_first(bundle, options):  # type: ignore[no-untyped-def]
        frame = made(bundle, options).reset_index(drop=True)
        if len(frame) and options.quantity == "gbps":
            frame.loc[0, C.CI95_UPPER] = np.inf
            opened.append(f"{frame[C.ANNOTATION].iloc[0]} at {frame['n'].iloc[0]}")
        return frame

    monkeypatch.setattr(sweep_chart, "frame", unbounded_first)
    at = app(query={"job": "h200-ncu-matmul-sweep"})
    at.segmented_control(key="sweep-quantity").set_value("gbps").run()
    assert not at.exception, at.exception
    assert opened
    said = [c.value for c in at.caption if c.value.startswith("CI95 unbounded at ")]
    assert len(said) == 1 and said[0].startswith(f"CI95 unbounded at {opened[-1]}: "), texts(at)
    (spec,) = plotly_specs(at)
    assert [t for t in spec["data"] if t.get("name") == common.OPEN_END_NAME]


def test_stability_note_names_the_unbounded_band(  # type: ignore[no-untyped-def]
        store, monkeypatch, app) -> None:
    """The Stability page's per-run chart of the recorded h200-ncu-matmul-sweep, fp16's CI95
    upper bound inf: the band runs to the chart's top and ends in the arrow of the legend entry
    the other charts use, and the note under the chart names it (it drew no band at all)."""
    from apptest_helpers import plotly_specs
    from app.core.views import stability as stability_view
    from profiling_worker.bundle.schema import columns as C

    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    made = stability_view.stability_runs_frame

    def unbounded_fp16(bundle, options):  # type: ignore[no-untyped-def]
        runs = made(bundle, options).copy()
        runs.loc[runs[C.ANNOTATION] == "fp16", C.CI95_UPPER] = np.inf
        return runs

    monkeypatch.setattr(stability_view, "stability_runs_frame", unbounded_fp16)
    at = app("stability", query={"job": "h200-ncu-matmul-sweep"})
    assert not at.exception, at.exception
    said = [c.value for c in at.caption if c.value.startswith("CI95 unbounded at ")]
    assert len(said) == 1 and said[0].startswith("CI95 unbounded at fp16: "), texts(at)
    runs_chart = [s for s in plotly_specs(at) if "per run" in str(s["layout"]["title"])]
    (spec,) = runs_chart
    assert [t for t in spec["data"] if t.get("name") == common.OPEN_END_NAME]
