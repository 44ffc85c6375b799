"""Memory page on the bundled H200 elementwise job, and a job without byte counters."""

from __future__ import annotations

from apptest_helpers import plotly_specs, texts
from tests.scenarios import SCENARIOS


def test_memory_and_fusion(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("memory", query={"job": "h200-ncu-elementwise"})
    assert not at.exception, at.exception
    assert len(plotly_specs(at)) == 2 and len(at.dataframe) == 2
    assert (at.dataframe[1].value["TrafficRatio"] < 1).all()
    assert at.selectbox(key="memory-fusion-pair").options == ["unfused → fused"]


def test_cupti_job_says_what_to_run(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("memory", query={"job": "h200-cupti-elementwise"})
    assert not at.exception
    assert not plotly_specs(at) and "memory metric preset" in texts(at)


def test_matmul_job_offers_no_fusion(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("memory", query={"job": "h200-ncu-matmul-sweep"})
    assert not at.exception, at.exception
    assert not [s for s in at.selectbox if s.key == "memory-fusion-pair"]
    assert "no fusion to compare" in texts(at) and len(plotly_specs(at)) == 1
