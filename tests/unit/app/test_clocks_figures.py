"""Clocks and thermal figures, and the per-run point rule of figures/theme.py they use."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest
from bundled import bundled

from app.core.figures import theme
from app.core.figures.clocks import (build_correlation_figure, build_drift_figure,
                                     build_kernel_clock_figure, build_thermal_figure,
                                     build_trace_figure, display_unit)
from app.core.figures.stability import build_runs_figure
from app.core.views.clocks import (ClocksOptions, collector_runs_frame, correlation_frame,
                                   kernel_clock_frame, thermal_compare_frame, trace_frame)
from app.core.views.stability import StabilityOptions, stability_runs_frame


def test_trace_figure_rows_and_units() -> None:
    fig = build_trace_figure(trace_frame(bundled("h200-cupti-stability")), 1980.0)
    titles = [fig.layout[f"yaxis{i if i > 1 else ''}"].title.text for i in range(1, 5)]
    assert titles == ["Clock (MHz)", "Temperature (°C)", "Power (W)", "Throttle reason"]
    assert fig.layout.xaxis4.title.text == "Time since the sampler started (s)"
    names = [t.name for t in fig.data]
    assert {"SM clock", "memory clock", "Temperature", "Power"} <= set(names)
    assert "throttle: GPU idle (0x1)" in names
    assert any("1980 MHz" in a.text for a in fig.layout.annotations)


def test_drift_and_correlation_figures_say_before_the_run() -> None:
    frame = collector_runs_frame(bundled("h200-cupti-stability"), ClocksOptions())
    drift = build_drift_figure(frame)
    assert "sampled before the run" in drift.layout.title.text.replace("<br>", " ")
    assert drift.layout.yaxis.title.text == "Kernel time (µs)"
    assert drift.layout.yaxis.type == "log"  # 2.6 µs and 1.4 ms on one axis
    assert {drift.layout.yaxis2.title.text, drift.layout.yaxis3.title.text,
            drift.layout.yaxis4.title.text} == {"power (W)", "sm_clock (MHz)",
                                                "temperature (°C)"}
    corr = build_correlation_figure(correlation_frame(frame))
    assert "sampled before the run" in corr.layout.title.text.replace("<br>", " ")
    texts = [t for trace in corr.data for t in trace.text]
    assert "constant" in texts and "-0.08" in texts
    assert display_unit("C") == "°C"


def test_kernel_clock_and_thermal_figures() -> None:
    fig = build_kernel_clock_figure(kernel_clock_frame(bundled("h200-ncu-matmul-sweep")))
    assert fig.layout.yaxis.title.text == "SM clock (MHz)" and len(fig.data) == 3
    assert "gpc__cycles_elapsed" in fig.layout.title.text
    thermal = build_thermal_figure(thermal_compare_frame(
        bundled("h200-cupti-stability"), bundled("h200-cupti-stability-thermal-off")))
    assert [t.name for t in thermal.data] == [
        "h200-cupti-stability (thermal_mode auto, 4.3 s wall)",
        "h200-cupti-stability-thermal-off (thermal_mode off, 4.1 s wall)"]


@pytest.mark.parametrize(("n", "cls", "step"), [
    (10, go.Scatter, 1), (10_000, go.Scatter, 1), (10_001, go.Scattergl, 1),
    (100_000, go.Scattergl, 1), (250_000, go.Scattergl, 3)])
def test_points_trace_webgl_and_decimation(n: int, cls: type, step: int) -> None:
    x = np.arange(n, dtype=float)
    trace = theme.points_trace(x, x * 2, "runs", mode="markers", customdata=x)
    assert type(trace) is cls and theme.decimation_step(n) == step
    assert len(trace.x) == len(trace.customdata) == -(-n // step)
    assert trace.x[1] == step and trace.y[1] == 2 * step
    if step > 1:
        assert trace.name == "runs (every 3rd of 250,000 points)"
    else:
        assert trace.name == "runs"


def test_stability_runs_use_the_rule() -> None:
    runs = stability_runs_frame(bundled("h200-cupti-stability"), StabilityOptions(config=0))
    fig = build_runs_figure(runs, "Duration")
    assert fig.layout.xaxis.range == (-0.5, 29.5)
    big = runs.loc[runs.index.repeat(4000)].reset_index(drop=True)  # 120,000 points
    big["Run"] = np.arange(len(big))
    fig = build_runs_figure(big, "Duration")
    points = [t for t in fig.data if isinstance(t, go.Scattergl)]
    assert len(points) == 1 and "every 2nd of 120,000 points" in points[0].name


def test_layout_reads_on_light_and_dark_themes() -> None:
    fig = go.Figure(go.Scatter(x=[1], y=[1], name="a"))
    before = fig.layout.template.to_plotly_json()  # the active default (Streamlit's in the app)
    theme.apply_layout(fig, "t")
    assert fig.layout.template.to_plotly_json() == before  # no forced light template
    assert fig.layout.paper_bgcolor == theme.TRANSPARENT
    assert fig.layout.plot_bgcolor == theme.TRANSPARENT
    exported = theme.for_export(fig)
    assert exported.layout.paper_bgcolor == "white" and fig.layout.paper_bgcolor != "white"


def test_no_axis_has_its_tick_labels_measured_for_overflow() -> None:
    """Issue 40: plotly.js's default for numeric axes ("hide past div") measures every tick label
    once per label drawn; every axis of a figure, subplots' too, is set to draw them as placed."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=3, cols=1, shared_xaxes=True)
    for row in (1, 2, 3):
        fig.add_trace(go.Scatter(x=[1, 2], y=[row, 2 * row]), row=row, col=1)
    theme.apply_layout(fig, "t")
    axes = [*fig.select_xaxes(), *fig.select_yaxes()]
    assert len(axes) == 6
    assert {axis.ticklabeloverflow for axis in axes} == {"allow"}


def test_tall_legends_grow_the_figure() -> None:
    names = [f"FP16 tensor core, dense / BF16 tensor core, dense (datasheet) {i}.0 TFLOP/s"
             for i in range(6)]  # one per row, as the roofline's ceilings are
    fig = go.Figure([go.Scatter(x=[1], y=[1], name=n) for n in names])
    assert theme.legend_rows(fig) == 6
    theme.apply_layout(fig, "t")
    assert fig.layout.height == theme.BASE_HEIGHT + 4 * theme.LEGEND_ROW_PX
    small = theme.apply_layout(go.Figure(go.Scatter(x=[1], y=[1], name="fp16")), "t")
    assert small.layout.height is None
