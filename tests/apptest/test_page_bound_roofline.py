"""Bound and roofline page on bundled H200 jobs."""

from __future__ import annotations

from pathlib import Path

from apptest_helpers import plotly_specs, texts

BUNDLED = Path(__file__).resolve().parents[2] / "app" / "bundled"


def test_bound_and_roofline_on_ncu_sweep(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(BUNDLED))
    at = app("bound_roofline", query={"job": "h200-ncu-matmul-sweep"})
    assert not at.exception, at.exception
    specs = plotly_specs(at)
    assert len(specs) == 2
    assert specs[1]["layout"]["xaxis"]["type"] == "log"
    assert len(at.dataframe) == 3  # bound table, roofline table, ceilings
    at.segmented_control(key="roofline-bytes").set_value("analytic").run()
    assert not at.exception
    assert set(at.dataframe[1].value["BytesSource"]) == {"analytic minimum bytes"}


def test_cupti_job_gets_roofline_and_a_hint(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(BUNDLED))
    at = app("bound_roofline", query={"job": "h200-cupti-matmul-sweep"})
    assert not at.exception, at.exception
    assert "bound metric preset" in texts(at)
    assert len(plotly_specs(at)) == 1  # the roofline still draws (analytic bytes)
