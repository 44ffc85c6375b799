"""Compare and backends pages on the bundled H200 jobs."""

from __future__ import annotations

from pathlib import Path

from apptest_helpers import plotly_specs, texts

BUNDLED = Path(__file__).resolve().parents[2] / "app" / "bundled"


def test_compare_default_candidate_is_a_meaningful_pair(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(BUNDLED))
    at = app("compare", query={"job": "h200-ncu-elementwise"})
    assert not at.exception, at.exception
    assert at.selectbox(key="compare-baseline").value == "h200-ncu-elementwise"
    assert at.selectbox(key="compare-candidate").value == "h200-ncu-elementwise-cache-none"
    assert not (at.dataframe[0].value["Ratio"] == 1.0).all()
    at.selectbox(key="compare-baseline").set_value("h200-ncu-j1-fp16").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="compare-candidate").value == "h200-cupti-j1-fp16"


def test_compare_job_with_itself(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(BUNDLED))
    at = app("compare", query={"job": "h200-ncu-j1-fp16"})
    assert not at.exception, at.exception
    assert at.selectbox(key="compare-candidate").value == "h200-cupti-j1-fp16"
    assert (at.dataframe[0].value["Ratio"] < 1).all()  # CUPTI is faster
    at.selectbox(key="compare-candidate").set_value("h200-ncu-j1-fp16").run()
    assert not at.exception
    assert len(plotly_specs(at)) == 1
    assert set(at.dataframe[0].value["Ratio"]) == {1.0}
    assert "4 inside the noise" in texts(at)


def test_backends_default_pair(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(BUNDLED))
    at = app("backends", query={"job": "h200-ncu-j1-fp16"})
    assert not at.exception, at.exception
    assert at.selectbox(key="backends-ncu").value == "h200-ncu-j1-fp16"
    assert at.selectbox(key="backends-cupti").value == "h200-cupti-j1-fp16"
    assert len(plotly_specs(at)) == 1 and len(at.dataframe) == 2
    assert "wall time" in texts(at)
