"""Bound and roofline page on bundled H200 jobs."""

from __future__ import annotations

import pytest

from apptest_helpers import plotly_specs, texts, trace_values, unescape
from app.core.table_text import header
from tests.scenarios import SCENARIOS


def test_bound_and_roofline_on_ncu_sweep(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("bound_roofline", query={"job": "h200-ncu-matmul-sweep"})
    assert not at.exception, at.exception
    specs = plotly_specs(at)
    assert len(specs) == 2
    assert specs[1]["layout"]["xaxis"]["type"] == "log"
    assert len(at.dataframe) == 3  # bound table, roofline table, ceilings
    at.segmented_control(key="roofline-bytes").set_value("analytic").run()
    assert not at.exception
    # one source on every row: said in the caption over the table, not a column of it
    # (issue 37: the Achieved throughput was the 11th column, off screen behind them)
    assert "BytesSource" not in at.dataframe[1].value
    assert list(at.dataframe[1].value.columns[3:5]) == ["AchievedTFLOPs", "ArithmeticIntensity"]
    from app.core import table_text
    said = table_text.constant_caption({"BytesSource": "analytic minimum bytes"})
    assert said is not None and said.split(": ", 1)[1].rstrip(".") in " ".join(
        c.value for c in at.caption)


def test_cupti_job_gets_roofline_and_a_hint(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("bound_roofline", query={"job": "h200-cupti-matmul-sweep"})
    assert not at.exception, at.exception
    assert "bound metric preset" in texts(at)
    assert len(plotly_specs(at)) == 1  # the roofline still draws (analytic bytes)
    at.segmented_control(key="roofline-bytes").set_value("measured").run()
    assert not at.exception, at.exception
    assert "This job has no measured DRAM bytes" in texts(at) and not plotly_specs(at)


def test_points_without_a_flop_count_are_named(store, app) -> None:
    """A point whose FLOP count is missing (here: one work row removed from a copy of the H200
    sweep) is not drawn, and the page names it instead of leaving a silent gap."""
    import shutil

    import pandas as pd

    from profiling_worker.bundle.schema import columns as C

    job = store["results"] / "sweep-with-a-gap"
    shutil.copytree(SCENARIOS / "h200-ncu-matmul-sweep", job)
    work = job / C.TABLES_DIR / f"{C.TABLE_WORK}.parquet"
    table = pd.read_parquet(work)
    table.iloc[1:].to_parquet(work)
    gone = table.iloc[0]
    at = app("bound_roofline", query={"job": job.name})
    at.segmented_control(key="roofline-flops").set_value("analytic").run()
    assert not at.exception, at.exception
    assert f"1 of {len(table)} points is not drawn" in texts(at)  # one point: "is"
    assert f"{gone[C.ANNOTATION]} n={gone['n']}" in texts(at)


def test_a_cpu_job_is_not_said_to_lack_its_gpus_ceilings(seeded, app) -> None:
    """A fresh user's cpu job read 'No datasheet ceilings for this GPU or dtype': it ran on
    no GPU, and the page says that instead."""
    at = app("bound_roofline")
    assert not at.exception
    shown = texts(at)
    assert "for this GPU or dtype" not in shown
    assert "ran on no GPU" in shown or "No datasheet ceilings" not in shown
    # a fresh user's find: under that warning an empty "Ceilings drawn" table read "empty"
    assert "Ceilings drawn" not in [c.value for c in at.caption]
    assert all(len(d.value) for d in at.dataframe)
    # a fresh user's find: the roofline's axis read 0.05 and 0.1 TFLOP/s; without roofs the
    # points' median sets the FLOP/s unit
    roofline = next(s for s in plotly_specs(at) if s["layout"]["title"]["text"].startswith("Roofline"))
    title = roofline["layout"]["yaxis"]["title"]["text"]
    assert title != "Achieved throughput (TFLOP/s)" and title.endswith("FLOP/s)"), title
    ys = [y for t in roofline["data"] if "y" in t for y in trace_values(t, "y")]
    assert sorted(ys)[len(ys) // 2] >= 1, ys


def test_a_cpu_jobs_roofline_table_is_in_its_charts_unit(seeded, app) -> None:
    """A fresh user's find: the cpu job's roofline axis read MFLOP/s while its table's
    AchievedTFLOPs read 0.000042...0.003073 and One kernel "MFLOP/s 41.83" for the same value.
    The table and its CSV take the chart's unit (app.core.derived.roofline_rate_step), named in
    the header, as One kernel's tile and the Size sweep's Unit column."""
    at = app("bound_roofline")
    assert not at.exception, at.exception
    roofline = next(s for s in plotly_specs(at)
                    if s["layout"]["title"]["text"].startswith("Roofline"))
    title = roofline["layout"]["yaxis"]["title"]["text"]
    axis_unit = title.rsplit("(", 1)[1].rstrip(")")
    assert axis_unit != "TFLOP/s" and axis_unit.endswith("FLOP/s"), title
    table = at.dataframe[-1].value  # no ceilings table: the roofline's is the last
    achieved = f"Achieved{axis_unit.replace('/s', 's')}"
    assert achieved in table and "AchievedTFLOPs" not in table and "UsefulTFLOPs" not in table
    drawn = sorted(y for t in roofline["data"] if "y" in t for y in trace_values(t, "y"))
    assert sorted(table[achieved].dropna()) == pytest.approx(drawn, rel=1e-12)
    assert any(c.value.startswith(f"{header(achieved)}: ") for c in at.caption)  # as headed
    # One kernel writes one point in the unit it fits; a point at 1 to 1,000 in the axis's
    # unit reads the same number in the same unit there (a cpu job's sizes can span two units:
    # the chart keeps one, that of the median, as the Size sweep)
    (point,) = [r for _, r in table.iterrows() if 1 <= r[achieved] < 1000][:1]
    one = app("one_kernel")
    one.selectbox(key="one-kernel-annotation").set_value(point["Annotation"]).run()
    one.selectbox(key="one-kernel-config").set_value(int(point["Config"])).run()
    assert not one.exception, one.exception
    label, value = next((m.label, m.value) for m in one.metric if m.label.endswith("FLOP/s"))
    assert label == axis_unit, (label, axis_unit)
    assert float(value.replace(",", "")) == pytest.approx(point[achieved], rel=5e-3)


def test_a_gpu_jobs_roofline_table_stays_in_tflops(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("bound_roofline", query={"job": "h200-ncu-matmul-sweep"})
    assert not at.exception, at.exception
    table = at.dataframe[1].value
    assert {"AchievedTFLOPs", "UsefulTFLOPs"} <= set(table)
    assert table["AchievedTFLOPs"].max() > 100  # fp16 n=8192 at hundreds of TFLOP/s
    roofline = plotly_specs(at)[1]
    assert roofline["layout"]["yaxis"]["title"]["text"] == "Achieved throughput (TFLOP/s)"
    assert any(c.value.startswith(f"{header('AchievedTFLOPs')}: ") for c in at.caption)


def test_points_whose_runs_failed_the_run_audit_are_marked_and_named(store, monkeypatch,
                                                                     app) -> None:
    """A fresh user's find: the Size sweep marked × the configs whose runs failed the run
    audit, the Roofline drew the same configs unmarked. Both charts of this page now mark them
    (the same badges, marker, hover line), name them under the chart and fill the tables' Run
    audit column."""
    from tests.scenarios import clock_drop_dir

    # the recorded runs pass (the clock check reads a run against its own config's
    # median; the job's pooled median failed 5 pairs): runs 0-2 of 3 pairs dropped
    flagged = {("fp16", 2048), ("fp16", 8192), ("bf16", 8192)}
    clock_drop_dir("h200-ncu-matmul-sweep", store["bundled"],
                   [(a, {2048: 2, 8192: 4}[n]) for a, n in flagged])
    at = app("bound_roofline", query={"job": "h200-ncu-matmul-sweep"})
    assert not at.exception, at.exception
    captions = [unescape(c.value) for c in at.caption if "failed the run audit" in c.value]
    assert len(captions) == 2  # under the bound bars and under the roofline
    for caption in captions:
        for annotation, n in sorted(flagged):
            assert f"{annotation} n={n}: 7/10 runs passed (clock 3: " in caption
        assert "fp32" not in caption and "Results tables page" in caption
    bound, roofline = plotly_specs(at)
    (marks,) = [t for t in bound["data"] if t["name"] == "runs failed the run audit"]
    assert set(trace_values(marks, "x")) == {f"{a} · n={n}" for a, n in flagged}
    for trace in (t for t in roofline["data"] if t["name"] in {"fp16", "bf16", "fp32"}):
        symbols = (trace.get("marker") or {}).get("symbol") or []
        assert symbols.count("x") == len([a for a, _ in flagged if a == trace["name"]])
        assert "<br>run audit: %{customdata[6]}" in trace["hovertemplate"]
    for table in at.dataframe[:2]:  # the bound table, the roofline table (not the ceilings)
        frame = table.value
        audit = dict(zip(zip(frame["Annotation"], frame["n"]), frame["Run audit"]))
        assert audit[("fp16", 8192)] == "⚠ 7/10 passed; failed clock (3)"
        assert audit[("fp32", 8192)] == "✓ 10/10 passed"
