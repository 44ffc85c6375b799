"""Memory page on the bundled H200 elementwise job, and a job without byte counters."""

from __future__ import annotations

import pytest
from apptest_helpers import plotly_specs, texts, trace_values, unescape

from profiling_worker.bundle.schema import columns as C
from tests.scenarios import SCENARIOS, scenario


def test_memory_and_fusion(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("memory", query={"job": "h200-ncu-elementwise"})
    assert not at.exception, at.exception
    assert len(plotly_specs(at)) == 2 and len(at.dataframe) == 2
    assert (at.dataframe[1].value["TrafficRatio"] < 1).all()
    assert at.selectbox(key="memory-fusion-pair").options == ["unfused → fused"]


def test_cupti_job_says_what_to_run(store, monkeypatch, app) -> None:
    """No DRAM byte counters: the note on what to run, then the fusion's time ratio (durations
    only), which says the traffic ratio needs the counters."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("memory", query={"job": "h200-cupti-elementwise"})
    assert not at.exception, at.exception
    shown = texts(at)
    assert "memory metric preset" in shown and "needs the DRAM byte counters" in shown
    (spec,) = plotly_specs(at)
    assert [t["name"] for t in spec["data"]] == ["time ratio"]
    fusion = at.dataframe[0].value.set_index("n")
    agg = scenario("h200-cupti-elementwise").table(C.TABLE_AGGREGATED)
    mean = agg.set_index([C.ANNOTATION, "n"])["AvgValue"]
    for n, row in fusion.iterrows():  # fused / unfused of the recorded region means
        assert row["TimeRatio"] == pytest.approx(mean["fused", n] / mean["unfused", n])
    assert fusion["TimeRatio"].lt(1).all() and fusion["TrafficRatio"].isna().all()


def test_matmul_job_offers_no_fusion(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("memory", query={"job": "h200-ncu-matmul-sweep"})
    assert not at.exception, at.exception
    assert not [s for s in at.selectbox if s.key == "memory-fusion-pair"]
    assert "no fusion to compare" in texts(at) and len(plotly_specs(at)) == 1


def test_pairs_whose_runs_failed_the_run_audit_are_marked_and_named(store, monkeypatch,
                                                                    app) -> None:
    """The DRAM traffic bars mark the pairs whose runs failed the run audit as the Size sweep
    marks its points: an × over the bars, the caption naming them, the table's Run audit."""
    from tests.scenarios import clock_drop_dir

    # the recorded runs pass (the clock check reads a run against its own config's
    # median; the job's pooled median failed them): runs 0-2 of both n=8192 dropped
    clock_drop_dir("h200-ncu-matmul-sweep", store["bundled"],
                   [("fp16", 4), ("bf16", 4)])
    at = app("memory", query={"job": "h200-ncu-matmul-sweep"})  # opens on n=8192
    assert not at.exception, at.exception
    (caption,) = [unescape(c.value) for c in at.caption if "failed the run audit" in c.value]
    for annotation in ("fp16", "bf16"):
        assert f"{annotation} n=8192: 7/10 runs passed (clock 3: " in caption
    assert "fp32" not in caption and "Results tables page" in caption
    (spec,) = plotly_specs(at)
    (marks,) = [t for t in spec["data"] if t["name"] == "runs failed the run audit"]
    assert set(trace_values(marks, "x")) == {"fp16 · n=8192", "bf16 · n=8192"}
    audit = dict(zip(at.dataframe[0].value[C.ANNOTATION], at.dataframe[0].value["Run audit"]))
    assert audit == {"fp32": "✓ 10/10 passed", "fp16": "⚠ 7/10 passed; failed clock (3)",
                     "bf16": "⚠ 7/10 passed; failed clock (3)"}
