"""Sweep page on a real cpu bundle: chart, table, CSV, quantity and baseline choices."""

from __future__ import annotations

import json

from apptest_helpers import (fold_key, open_folds, plotly_specs, sent_elements, texts,
                             trace_values, unescape)
from app.core import numbers
from app.core.table_text import header
from tests.scenarios import SCENARIOS


def test_sweep_chart_for_seeded_job(seeded, app) -> None:
    at = app()
    assert not at.exception
    assert at.session_state["sidebar-job"] == "20261129-230000-matmul-0001"
    assert at.query_params["job"] == "20261129-230000-matmul-0001"
    (spec,) = plotly_specs(at)
    assert spec["layout"]["xaxis"]["type"] == "log"
    assert spec["layout"]["title"]["text"].endswith("(host wall-clock, not GPU)")
    assert spec["layout"]["yaxis"]["title"]["text"] == "Time (µs)"
    assert [t["name"] for t in spec["data"]] == ["fp32", "fp16", "bf16"]
    assert len(at.dataframe) == 1 and len(at.get("download_button")) == 1
    assert "host wall-clock, not GPU" in texts(at)
    assert set(at.dataframe[0].value["Measurement"]) == {"host wall-clock, not GPU, 1 torch thread"}
    # said once, in the warning over the chart, not again in the caption line above it
    assert texts(at).count("host wall-clock, not GPU, 1 torch thread") == 1
    assert at.warning[0].value.startswith(  # its first line (a second if the CPU was busy)
        "Every time here is host wall-clock, not GPU, 1 torch thread (cpu backend).")


def test_sweep_throughput_normalised(seeded, app) -> None:
    at = app()
    at.segmented_control(key="sweep-quantity").set_value("tflops").run()
    at.selectbox(key="sweep-baseline").set_value("fp32").run()
    assert not at.exception
    (spec,) = plotly_specs(at)
    assert spec["layout"]["yaxis"]["title"]["text"] == "Throughput relative to fp32 (× fp32)"
    # issue 37: what nsight-python's Normalized output does differently, said where shown
    assert ("unit reads '× fp32'; nsight-python's normalize_against (its Normalized column "
            "names the annotation) divides AvgValue alone: its StdDev, CI95_Lower and "
            "CI95_Upper stay in the metric's unit") in texts(at)
    assert "nsight-python's own CI95_Lower/Upper use 1.96·s/√n" in texts(at)
    frame = at.dataframe[0].value
    assert set(frame["Unit"]) == {"× fp32"}
    assert "A ratio to fp32 takes both annotations' run spread" in texts(at)
    at.selectbox(key="sweep-baseline").set_value("").run()  # "— absolute values —"
    # issue 37: a host matmul runs far below 1 TFLOP/s; "0.000096 TFLOP/s" became the FLOP/s
    # unit its median fits, one unit for the axis, the table, the CSV and the caption
    (unit,) = set(at.dataframe[0].value["Unit"])
    assert unit in ("GFLOP/s", "MFLOP/s", "kFLOP/s"), unit
    assert at.dataframe[0].value["AvgValue"].median() >= 1
    assert plotly_specs(at)[0]["layout"]["yaxis"]["title"]["text"] == f"Throughput ({unit})"
    assert f"Unit: {unit}" in [c.value for c in at.caption]
    # Issue 25: the Unit column was too narrow for "TFLOP/s" ("TFLOP/"): sized to its text
    columns = json.loads(at.dataframe[0].proto.columns)
    assert columns["Unit"]["width"] >= len(unit) * 9
    # a fresh user's find: StdDev, its header shorter than its values, was sized by the header
    # and cut them on the left (".000138"): every number column fits its widest value
    frame = at.dataframe[0].value
    for name, config in columns.items():
        printf = (config.get("type_config") or {}).get("format")
        if printf and name in frame and frame[name].notna().any():
            text = [numbers.printf_text(float(v), printf) for v in frame[name].dropna()]
            longest = max(map(len, text))
            # the header drawn is table_text.header's ("Std dev", one longer than "StdDev"):
            # the CI beside a hog read 7-character values under it
            shown = header(name)
            assert longest <= len(shown) or config.get("width", 0) >= longest * 8, (name, text)


def test_the_chart_is_sent_before_its_controls(seeded, app, monkeypatch) -> None:
    """Issue 40: the browser renders a page's elements in the order they come, and rendered the
    Size sweep's controls before its chart on every click to it; they are sent after the chart,
    into their place above it (app.ui.controls_later), at the values it was drawn with."""
    sent = sent_elements(monkeypatch)
    at = app()
    controls = ("selectbox", "button_group", "checkbox")  # a segmented control; the toggle
    assert sent.index("plotly_chart") < min(sent.index(c) for c in controls), sent
    del sent[:]
    at.segmented_control(key="sweep-quantity").set_value("tflops").run()
    assert sent.index("plotly_chart") < min(sent.index(c) for c in controls), sent
    assert not at.exception
    assert plotly_specs(at)[0]["layout"]["yaxis"]["title"]["text"].startswith("Throughput")
    assert at.segmented_control(key="sweep-quantity").value == "tflops"
    # the controls stand above the chart, as before: the page's first widget is above it
    order = [e.type for e in at.main]
    assert order.index("button_group") < order.index("plotly_chart"), order


def test_sweep_without_jobs_says_so(store, app) -> None:
    at = app()
    assert not at.exception
    assert not at.get("plotly_chart")
    assert "No job selected" in texts(at)


def test_no_gpu_banner(store, app) -> None:
    at = app()
    assert "No GPU here: jobs run on the cpu backend only" in texts(at)  # no job to attribute


def test_log_y_on_by_default_for_a_wide_sweep(store, monkeypatch, app) -> None:

    monkeypatch.setenv("KPROF_BUNDLED_DIR",
                       str(SCENARIOS))
    at = app(query={"job": "h200-ncu-matmul-sweep"})  # 5 µs .. 21 ms
    assert not at.exception, at.exception
    assert at.toggle(key="sweep-log-y").value is True
    (spec,) = plotly_specs(at)
    assert spec["layout"]["yaxis"]["type"] == "log"
    at.toggle(key="sweep-log-y").set_value(False).run()
    (spec,) = plotly_specs(at)
    assert spec["layout"]["yaxis"]["type"] == "linear"
    assert at.segmented_control(key="sweep-quantity").options == ["Time", "TFLOP/s",
                                                                  "Analytic GB/s"]


def test_gb_per_s_axis_says_analytic_bytes(store, monkeypatch, app) -> None:

    monkeypatch.setenv("KPROF_BUNDLED_DIR",
                       str(SCENARIOS))
    at = app(query={"job": "h200-ncu-matmul-sweep"})
    at.segmented_control(key="sweep-quantity").set_value("gbps").run()
    assert not at.exception, at.exception
    (spec,) = plotly_specs(at)
    assert spec["layout"]["yaxis"]["title"]["text"] == \
        "Bandwidth, analytic minimum bytes / time (GB/s)"


def test_normalise_to_resets_when_the_new_job_lacks_that_annotation(seeded, app,
                                                                     monkeypatch) -> None:
    """A new user's trial: "Normalise to = fp16" on matmul, then the elementwise job: the box
    went blank ("Choose an option") while the chart was absolute."""

    monkeypatch.setenv("KPROF_BUNDLED_DIR",
                       str(SCENARIOS))
    at = app(query={"job": "h200-ncu-matmul-sweep"})
    at.selectbox(key="sweep-baseline").set_value("fp16").run()
    assert "relative to fp16" in plotly_specs(at)[0]["layout"]["yaxis"]["title"]["text"]
    at.selectbox(key="sidebar-job").set_value("h200-ncu-elementwise").run()
    assert not at.exception
    assert at.selectbox(key="sweep-baseline").value == ""  # "— absolute values —"
    assert "relative to" not in plotly_specs(at)[0]["layout"]["yaxis"]["title"]["text"]


def test_a_one_variant_jobs_table_has_no_series_of_its_annotations(seeded, app) -> None:
    """Session 23's fresh user: a real cpu job's table had Annotation and Series columns of the
    same values (one parameter, n: each line is an annotation). The table shows Annotation
    alone; the chart's lines are still named by it."""
    at = app()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert "Series" not in table.columns and "Annotation" in table.columns
    (spec,) = plotly_specs(at)
    assert [t["name"] for t in spec["data"]] == list(dict.fromkeys(table["Annotation"]))


def test_a_big_sweep_table_shows_the_points_drawn_and_the_csv_has_all(store, app) -> None:
    """Issue 37: a 10,000-config sweep sent its 30,000-row table whole (5.6 MB) right behind
    the chart. Above TABLE_MOST rows the table shows the rows of the points drawn, and says so;
    the download has every row. The table is drawn once its fold is opened (the browser drew
    it in one pass with the first chart), the caption and the CSV button at once. Real H200
    rows tiled to 400 configs (the benchmarks' builder)."""
    from benchmarks.results_page_scale import build_scale_bundle
    from app.core.figures.sweep import TABLE_MOST
    from app.ui.panels import PART_TABLE

    build_scale_bundle(store["results"] / "scale-400-configs", configs=400, runs=3)
    at = app(query={"job": "scale-400-configs"})
    assert not at.exception, at.exception
    (spec,) = plotly_specs(at)
    assert "every 4 configs drawn of 400; the CSV below has all" in spec["layout"]["title"]["text"]
    assert not at.dataframe, "the first run drew the big sweep's table"
    (box,) = [box for box in at.expander if box.label == PART_TABLE]
    assert not box.proto.expanded and fold_key(box)
    opened = open_folds(at)
    assert not opened.exception, opened.exception
    shown = opened.dataframe[0].value
    assert 1200 > TABLE_MOST > len(shown)
    for trace in spec["data"]:  # the table's rows are the chart's points, line by line
        assert shown.loc[shown["Annotation"] == trace["name"], "n"].tolist() == \
            trace_values(trace, "x")
    assert "The table shows 303 of the 1,200 rows: those of the points drawn; the CSV below " \
           "has all 1,200." in texts(at)
    (csv,) = at.get("download_button")
    assert csv.proto.label == "Download CSV (all 1,200 rows)"


def test_points_whose_runs_failed_the_run_audit_are_marked_and_named(store, monkeypatch,
                                                                     app) -> None:
    """A fresh user's find: Stability and Results badge "⚠ fp16 n=8192: 0/10 passed; failed
    clock (10)" on the ncu matmul sweep (fp16 and bf16 at the sizes whose clock dropped), One
    kernel says "Run audit: 10 of 10 runs failed", but the Size sweep drew those points like
    any other. Now the same badges (app.core.views.run_audit) mark them, name them under the
    chart and fill the table's Run audit column."""
    from tests.scenarios import clock_drop_dir

    # the recorded runs pass (the clock check reads a run against its own config's
    # median; the job's pooled median failed 5 pairs): runs 0-2 of 3 pairs dropped
    flagged = {("fp16", 2048), ("fp16", 8192), ("bf16", 8192)}
    clock_drop_dir("h200-ncu-matmul-sweep", store["bundled"],
                   [(a, {2048: 2, 8192: 4}[n]) for a, n in flagged])
    at = app(query={"job": "h200-ncu-matmul-sweep"})
    assert not at.exception, at.exception
    (caption,) = [unescape(c.value) for c in at.caption if "failed the run audit" in c.value]
    for annotation, n in sorted(flagged):
        assert f"{annotation} n={n}: 7/10 runs passed (clock 3: " in caption
    assert "fp32" not in caption and "n=1024" not in caption
    assert "Results tables page" in caption
    (spec,) = plotly_specs(at)
    for trace in spec["data"]:
        symbols = (trace.get("marker") or {}).get("symbol")
        marked = {int(n) for n, s in zip(trace_values(trace, "x"), symbols or [])
                  if s == "x"}
        assert marked == {n for a, n in flagged if a == trace["name"]}, trace["name"]
        if marked:
            assert "<br>run audit: %{customdata[5]}" in trace["hovertemplate"]
            assert any(row[5] == "⚠ 7/10 passed; failed clock (3)"
                       for row in trace["customdata"])
    table = at.dataframe[0].value
    audit = dict(zip(zip(table["Annotation"], table["n"]), table["Run audit"]))
    assert audit[("fp16", 8192)] == "⚠ 7/10 passed; failed clock (3)"
    assert audit[("fp32", 8192)] == "✓ 10/10 passed"


def test_a_job_whose_runs_all_passed_has_no_marks_and_no_caption(store, monkeypatch,
                                                                  app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app(query={"job": "h200-cupti-j1-fp16"})
    assert not at.exception, at.exception
    assert not [c.value for c in at.caption if "failed the run audit" in c.value]
    (spec,) = plotly_specs(at)
    assert all("symbol" not in (t.get("marker") or {}) for t in spec["data"])
    assert set(at.dataframe[0].value["Run audit"]) == {"✓ 10/10 passed"}


def test_the_quantity_control_names_the_units_the_axis_shows(seeded, store, monkeypatch,
                                                             app) -> None:
    """A fresh user's find: the Quantity control read "Analytic GB/s" over a cpu job's MB/s
    axis. Each throughput option names the unit its chart is drawn in (the frame's ``Unit``,
    app.ui.sweep_chart.quantity_units): MFLOP/s-range units for a host-timed cpu job, TFLOP/s
    and GB/s for an H200 job."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    for job, gpu in (("20261129-230000-matmul-0001", False), ("h200-ncu-matmul-sweep", True)):
        at = app(query={"job": job})
        assert not at.exception, at.exception
        labels = at.segmented_control(key="sweep-quantity").options
        assert labels[0] == "Time"
        for quantity, label in zip(("tflops", "gbps"), labels[1:]):
            at.segmented_control(key="sweep-quantity").set_value(quantity).run()
            (spec,) = plotly_specs(at)
            axis = spec["layout"]["yaxis"]["title"]["text"]
            unit = label.removeprefix("Analytic ")
            assert axis.endswith(f"({unit})"), (job, label, axis)
            assert (unit in ("TFLOP/s", "GB/s")) is gpu, (job, unit)
