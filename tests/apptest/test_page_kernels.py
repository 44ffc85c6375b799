"""Kernels page on the bundled H200 matmul sweep."""

from __future__ import annotations

from pathlib import Path

from apptest_helpers import plotly_specs, texts

BUNDLED = Path(__file__).resolve().parents[2] / "app" / "bundled"


def test_kernels_page(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(BUNDLED))
    at = app("kernels", query={"job": "h200-ncu-matmul-sweep"})
    assert not at.exception, at.exception
    assert len(plotly_specs(at)) == 1 and len(at.dataframe) == 4
    assert "fp32 n=512 (2)" in texts(at)
    (spec,) = plotly_specs(at)
    assert spec["layout"]["yaxis"]["range"] == [0, 100]  # opens on the share of each region
    at.segmented_control(key="kernels-bars").set_value("time").run()
    assert not at.exception, at.exception
    (spec,) = plotly_specs(at)
    assert spec["layout"]["yaxis"]["type"] == "linear"  # stacked, so never log
    assert spec["layout"]["yaxis"]["title"]["text"] == "Mean time per run (µs)"
