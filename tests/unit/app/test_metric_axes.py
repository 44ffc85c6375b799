"""Axes of metrics that are not durations: the imported case 03 (nsight-python 0.9.5's
``compute_tflops``, no Unit in the tables) swept and judged in its own unit, axis titles never
"(None)", numeric y ticks without SI prefixes, and table formats for tiny values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from app.core import derived, metric_roles, numbers
from profiling_worker.bundle.loader import load_bundle
from app.core.figures import theme
from app.core.figures.stability import build_runs_figure, build_stability_figure
from app.core.figures.sweep import build_sweep_figure
from app.core.views.stability import StabilityOptions, stability_frame, stability_runs_frame
from app.core.views.sweep import (SweepOptions, metric_choices, sweep_frame, sweep_metric,
                                  uses_quantity)
from profiling_worker.importing import import_nsight_output
from profiling_worker.bundle.schema import columns as C

CASES = Path(__file__).resolve().parents[2] / "fixtures" / "import_cases"


@pytest.fixture(scope="module")
def derived_bundle(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("imports")
    return load_bundle(_imported(out))


def _imported(out: Path) -> Path:
    import_nsight_output(sorted((CASES / "03-derived-0.9.5").glob("*.csv")), out, "d")
    return out / "d"


@pytest.mark.parametrize("unit, shown", [
    (None, ""), (float("nan"), ""), (pd.NA, ""), ("None", ""), ("nan", ""), ("", ""),
    ("  ", ""), ("ns", "ns"), ("TFLOP/s", "TFLOP/s"), ("%", "%")])
def test_a_missing_unit_is_no_unit(unit, shown) -> None:
    assert metric_roles.unit_text(unit) == shown
    assert theme.axis_title("compute_tflops", unit) == (
        f"compute_tflops ({shown})" if shown else "compute_tflops")
    assert theme.first_unit([None, float("nan"), unit]) == shown


def test_the_derived_import_is_swept_as_its_own_metric(derived_bundle) -> None:
    b = derived_bundle
    assert b.duration_metric not in metric_choices(b)  # the file has no durations
    assert metric_choices(b) == ["compute_tflops"] and sweep_metric(b) == "compute_tflops"
    assert metric_roles.units(b) == {"compute_tflops": ""}
    assert metric_roles.readable(b.manifest, "compute_tflops", "") == "compute_tflops (derived)"
    options = SweepOptions(metric="compute_tflops", time_unit="ms")  # no time: unit ignored
    assert not uses_quantity(b, options)
    frame = sweep_frame(b, options)
    assert frame["n"].tolist() == [2048, 4096, 8192]
    assert frame[C.AVG].to_numpy() == pytest.approx([59.874, 60.015, 59.697], abs=1e-3)
    assert set(frame[C.UNIT]) == {""}
    assert frame[C.NUM_RUNS].tolist() == [3, 3, 3] and frame[C.CI95_LOWER].notna().all()
    assert sweep_frame(b, SweepOptions()).empty  # durations asked for: none, not 0.06 µs
    fig = build_sweep_figure(frame, "n", host_timer=False,
                             quantity_label=metric_roles.label(b.manifest, "compute_tflops"))
    assert fig.layout.yaxis.title.text == "compute_tflops (derived)"
    assert "None" not in fig.data[0].hovertemplate and "nan" not in fig.data[0].hovertemplate
    ratio = sweep_frame(b, SweepOptions(metric="compute_tflops", baseline="matmul"))
    assert ratio[C.AVG].to_numpy() == pytest.approx([1.0, 1.0, 1.0])


def test_per_run_metric_keeps_units_and_scales_durations_only() -> None:
    runs = pd.DataFrame({C.ANNOTATION: "a", C.CONFIG: [0, 0], C.RUN: [0, 1],
                         C.METRIC: ["gpu__time_duration.sum", "dram__bytes.sum"],
                         C.VALUE: [2000.0, 5e6], C.UNIT: ["ns", "byte"]})
    time = derived.per_run_metric(runs, "gpu__time_duration.sum", "µs")
    assert time[C.VALUE].tolist() == [2.0] and time[C.UNIT].tolist() == ["µs"]
    other = derived.per_run_metric(runs, "dram__bytes.sum", "ms")
    assert other[C.VALUE].tolist() == [5e6] and other[C.UNIT].tolist() == ["byte"]
    assert derived.per_run_metric(runs, "absent", "µs").empty


def test_stability_of_the_derived_import_has_no_none_unit(derived_bundle) -> None:
    options = StabilityOptions(metric="compute_tflops", time_unit="ms")
    summary = stability_frame(derived_bundle, options)
    assert set(summary[C.UNIT]) == {""} and summary[C.AVG].iloc[0] == pytest.approx(59.874, 1e-4)
    runs = stability_runs_frame(derived_bundle, options)
    assert set(runs[C.UNIT]) == {""}
    fig = build_runs_figure(runs, metric_roles.label(derived_bundle.manifest, "compute_tflops"))
    assert fig.layout.yaxis.title.text == "compute_tflops (derived)"
    traces = [*fig.data, *build_stability_figure(summary).data]
    hovers = " ".join(t.hovertemplate for t in traces if t.hovertemplate)  # CI bands: none
    assert "None" not in hovers and " nan" not in hovers
    # and with the Unit cells None, as a parquet round trip can leave them
    fig = build_runs_figure(runs.assign(**{C.UNIT: None}), "compute_tflops")
    assert fig.layout.yaxis.title.text == "compute_tflops"


def _tiny_tflops() -> pd.DataFrame:
    return pd.DataFrame({C.ANNOTATION: "fp32", "n": [32, 64], C.UNIT: "TFLOP/s",
                         C.NUM_RUNS: 3, C.AVG: [1.0e-4, 5.0e-4], C.STD: [7e-7, 2e-6],
                         C.CI95_LOWER: [0.8e-4, 4.0e-4], C.CI95_UPPER: [1.2e-4, 6.0e-4]})


def test_a_tiny_tflops_axis_has_no_si_prefix_ticks() -> None:
    """A cpu job's TFLOP/s: plotly's default ticks read "100μ ... 500μ" (micro-TFLOP/s)."""
    for log_y in (False, True):
        fig = build_sweep_figure(_tiny_tflops(), "n", host_timer=True,
                                 quantity_label="Throughput", log_y=log_y)
        assert fig.layout.yaxis.tickformat == ",~r"  # d3: 0.0001 ... 0.0005, never 1e-7
        assert fig.layout.yaxis.exponentformat in (None, "none", "e", "power")
        assert fig.layout.yaxis.title.text == "Throughput (TFLOP/s)"


def test_number_ticks_leave_category_axes_and_own_formats_alone() -> None:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=3, cols=1)
    fig.update_yaxes(type="category", row=1, col=1)
    fig.update_yaxes(tickformat=".0%", row=2, col=1)
    fig.add_trace(go.Scatter(x=[0, 1], y=[1e-4, 2e-4]), row=3, col=1)
    theme.apply_layout(fig, "t")
    assert fig.layout.yaxis.tickformat is None
    assert fig.layout.yaxis2.tickformat == ".0%"
    assert fig.layout.yaxis3.tickformat == theme.VALUE_TICKFORMAT


@pytest.mark.parametrize("values, fmt, text", [
    ([7e-7, 1.3e-7], "%.3e", "7.000e-07"),  # was Streamlit's default: cut to "0000007"
    ([2.012e-6, 0.0115], "%,.6f", "0.000002"),  # one digit of the smallest, no exponent
    ([0.001234, 0.5], "%,.4f", "0.0012"),  # four digits of the median (issue 37)
    ([59.87, 60.01], "%,.2f", "59.87"),
])
def test_small_floats_get_a_format_that_shows_them(values, fmt, text) -> None:
    series = pd.Series(values)
    assert numbers.printf_format(series) == fmt
    assert f"{values[0]:{fmt[1:]}}" == text  # how the share report writes it
    assert numbers.decimals_for(np.array([0.0, np.nan])) == 0


def test_a_duration_choice_names_no_unit_beside_the_time_unit_control() -> None:
    """Stability's metric box read ``gpu__time_duration.sum [ns]`` while µs was chosen (a new
    user's find): the time-unit control names a duration's unit; other metrics keep theirs."""
    time, dram = (metric_roles.words({}, m) for m in ("gpu__time_duration.sum", "dram__bytes.sum"))
    assert metric_roles.readable({}, "gpu__time_duration.sum", "ns") == \
        f"{time} (gpu__time_duration.sum)"
    assert metric_roles.readable({}, "dram__bytes.sum", "byte") == f"{dram} [byte] (dram__bytes.sum)"
