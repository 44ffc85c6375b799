"""Size sweep and Stability on a job whose values are not durations: the imported case 03
(nsight-python 0.9.5, ``Transformed=compute_tflops``: no gpu__time_duration.sum rows at all) and
the ncu counters of a recorded H200 job; tick labels and table formats of tiny TFLOP/s values."""

from __future__ import annotations

import json
import re

import pytest

from apptest_helpers import plotly_specs, texts, trace_values, unescape
from app.core import metric_roles
from app.core.figures import theme
from profiling_worker.bundle.number_text import shown_unit
from profiling_worker.bundle.schema import metrics as M
from tests.scenarios import REPO, SCENARIOS

CASE_03 = REPO / "tests" / "fixtures" / "import_cases" / "03-derived-0.9.5"
JOB = "derived-095"


@pytest.fixture
def derived_job(store):
    from profiling_worker.importing import import_nsight_output

    import_nsight_output(sorted(CASE_03.glob("*.csv")), store["results"], JOB)
    return store


def _keys(at, kind: str) -> set[str]:
    return {el.key for el in at.get(kind)}


def test_sweep_of_a_derived_import_plots_its_metric(derived_job, app) -> None:
    """It said "This job has no gpu__time_duration.sum values to plot" and pointed nowhere."""
    at = app("sweep", query={"job": JOB})
    assert not at.exception, at.exception
    shown = texts(at)
    assert "no gpu__time_duration.sum values to plot" not in shown
    assert "drawn is its metric compute_tflops" in shown
    choice = at.selectbox(key="sweep-metric")
    assert choice.options == ["compute_tflops (derived)"] and choice.value == "compute_tflops"
    (spec,) = plotly_specs(at)
    (trace,) = spec["data"]
    assert trace_values(trace, "y") == pytest.approx([59.874, 60.015, 59.697], abs=1e-3)
    assert trace_values(trace, "x") == [2048, 4096, 8192]
    title = spec["layout"]["yaxis"]["title"]["text"]
    assert title == "compute_tflops (derived)" and "None" not in title and "nan" not in title
    assert "µs" not in json.dumps(spec["layout"])  # ~60 TFLOP/s never drawn as time
    # no time unit for a metric that is no time; no Quantity derived from absent durations
    assert "sweep-time-unit" not in _keys(at, "segmented_control")
    assert "sweep-quantity" not in _keys(at, "segmented_control")
    assert "Unit: none (the file gives this metric no unit)" in shown
    table = at.dataframe[0].value
    assert set(table["Unit"]) == {""} and "derive_metric compute_tflops" in table["Measurement"][0]


def test_stability_of_a_derived_import_names_no_none_unit(derived_job, app) -> None:
    """The per-run y axis read "compute_tflops (None)", and ns / µs / ms were offered."""
    at = app("stability", query={"job": JOB})
    assert not at.exception, at.exception
    specs = plotly_specs(at)
    runs_title = specs[1]["layout"]["yaxis"]["title"]["text"]
    assert runs_title == "compute_tflops (derived)"
    for spec in specs:
        dumped = json.dumps(spec)
        assert "(None)" not in dumped and " None<" not in dumped and " nan" not in dumped
    assert "stability-time-unit" not in _keys(at, "segmented_control")
    assert "Unit: none (the file gives this metric no unit)" in texts(at)
    summary = at.dataframe[0].value  # one (empty) unit on every row: said above, not a column
    assert "Unit" not in summary and _left_out({"Unit": ""}) in texts(at)


def test_stability_time_unit_is_offered_for_durations_only(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("stability", query={"job": "h200-ncu-matmul-sweep"})
    assert "stability-time-unit" in _keys(at, "segmented_control")
    at.segmented_control(key="stability-time-unit").set_value("ms").run()
    at.selectbox(key="stability-metric").set_value("dram__bytes_read.sum").run()
    assert not at.exception, at.exception
    assert "stability-time-unit" not in _keys(at, "segmented_control")
    assert "Unit: byte" in texts(at)
    # the metric's words, as the picker names it, not its raw name (session 23)
    assert plotly_specs(at)[1]["layout"]["yaxis"]["title"]["text"] == theme.axis_title(
        metric_roles.words({}, "dram__bytes_read.sum"), "byte")
    at.selectbox(key="stability-metric").set_value("gpu__time_duration.sum").run()
    assert at.segmented_control(key="stability-time-unit").value == "ms"  # kept meanwhile
    assert plotly_specs(at)[1]["layout"]["yaxis"]["title"]["text"] == "Duration (ms)"


def test_sweep_offers_the_jobs_other_metrics_with_units(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app(query={"job": "h200-ncu-matmul-sweep"})
    choice = at.selectbox(key="sweep-metric")
    assert choice.value == "gpu__time_duration.sum"  # durations stay the default
    # its words and unit, the raw name beside them (metric_roles.readable); the value stays raw
    shown = metric_roles.readable({}, "dram__bytes_read.sum", "byte")
    assert shown in choice.options and "(dram__bytes_read.sum)" in shown and "[byte]" in shown
    assert plotly_specs(at)[0]["layout"]["yaxis"]["title"]["text"] == "Time (µs)"
    choice.set_value("dram__bytes_read.sum").run()
    assert not at.exception, at.exception
    (spec,) = plotly_specs(at)
    assert spec["layout"]["yaxis"]["title"]["text"] == theme.axis_title(
        metric_roles.words({}, "dram__bytes_read.sum"), "byte")
    assert set(at.dataframe[0].value["Unit"]) == {"byte"}
    assert at.segmented_control(key="sweep-quantity").proto.disabled
    assert "sweep-time-unit" not in _keys(at, "segmented_control")


def test_stability_of_a_clock_reads_its_words_in_mhz(store, monkeypatch, app) -> None:
    """Session 23: with the SM clock picked, the per-run chart read
    "gpc__cycles_elapsed.avg.per_second per run", its axis "(Hz)" with ticks of 1,940,000,000
    and the table 1,942,203,821 Hz, while the run audit's caption said 1,979 MHz."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("stability", query={"job": "h200-ncu-matmul-sweep"})
    at.selectbox(key="stability-metric").set_value(M.GPC_HZ).run()
    assert not at.exception, at.exception
    unit, _divisor = shown_unit("Hz")
    words = metric_roles.words({}, M.GPC_HZ)
    layout = plotly_specs(at)[1]["layout"]
    assert layout["yaxis"]["title"]["text"] == theme.axis_title(words, unit)
    assert layout["title"]["text"].startswith(f"{words} per run")
    assert M.GPC_HZ not in json.dumps(layout)
    assert f"Unit: {unit}" in texts(at)
    for table in at.dataframe[:2]:  # the spread per config, the runs of one config
        frame = table.value  # one unit on every row: in the caption over the table
        assert "Unit" not in frame and "MetricWords" not in frame
        value = frame["AvgValue" if "AvgValue" in frame else "Value"]
        assert value.between(100, 5000).all()  # an H200 clocks at 345 to 1,980 MHz
    assert _left_out({"Unit": unit}) in texts(at)
    assert _left_out({"MetricWords": words}) in texts(at)  # beside the raw name


def _left_out(constant: dict[str, object]) -> str:
    """How a table's caption names ``constant`` columns left out
    (:func:`app.core.table_text.constant_caption`), without its lead-in."""
    from app.core import table_text
    said = table_text.constant_caption(constant)
    assert said is not None
    return unescape(said.split(": ", 1)[1].rstrip("."))


def test_tiny_tflops_of_a_cpu_job_read_without_si_prefixes(seeded, app) -> None:
    """A cpu job as TFLOP/s: the linear y ticks read "100μ ... 500μ" (micro-TFLOP/s) and a
    StdDev cell was cut to "0000007"."""
    at = app()
    at.segmented_control(key="sweep-quantity").set_value("tflops").run()
    at.toggle(key="sweep-log-y").set_value(False).run()
    assert not at.exception, at.exception
    (spec,) = plotly_specs(at)
    yaxis = spec["layout"]["yaxis"]
    assert yaxis["type"] == "linear" and yaxis["tickformat"] == ",~r"
    # no ns / µs / ms for a throughput; its unit is the FLOP/s one its median fits (issue 37)
    assert re.search(r"Unit: [GMk]FLOP/s", texts(at)), texts(at)
    table = at.dataframe[0].value
    columns = json.loads(at.dataframe[0].proto.columns)
    # The seeded job is the session's cpu_bundle_src: host timings measured when the session's
    # first test asked for it, so their spread differs from session to session (and with the
    # tests run before that one): a StdDev of 2.8e-7 TFLOP/s beside a median of 3e-5 once
    # failed "no value reads 0". The policy is numbers.decimals_for's, whatever the timings.
    for name in ("AvgValue", "StdDev", "CI95_Lower"):  # host timings: 1e-7 .. 1e-2 TFLOP/s
        fmt = columns[name]["type_config"]["format"]  # never Streamlit's default (cut cells)
        positive = table[name][table[name] > 0]
        for value, least in ((float(positive.min()), 1), (float(positive.median()), 2)):
            shown = f"{value:{fmt[1:]}}"  # the printf format read as Python's
            digits = shown.split("e")[0].replace(",", "").replace(".", "").lstrip("0")
            # issue 37's policy: digits set by the column's spread; no value reads 0 but one
            # below the sixth decimal, the most a fixed-point column shows (a column of
            # microseconds stays fixed-point for one tiny value: test_numbers)
            below_the_cap = fmt.endswith(".6f") and value < 5e-7
            assert (len(digits) >= least or below_the_cap) and len(shown) <= 10, \
                (name, fmt, shown)
