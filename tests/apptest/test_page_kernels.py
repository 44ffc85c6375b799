"""Kernels page on the bundled H200 matmul sweep and a linear-backward copy whose kernels
change between runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from apptest_helpers import plotly_specs, texts, trace_values

from tests.unit.app.bundled import extra, launches_variant

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


def test_kernels_page_when_kernels_change_between_runs(store, app) -> None:
    """Run 0 of backward config 0 has one extra 100 µs launch: the counts say 7–8 per run and
    that the kernels vary, and the chart's extra kernel is its mean over all 3 runs."""
    launches_variant(store["bundled"], "kv-extra", extra)
    at = app("kernels", query={"job": "kv-extra"})
    assert not at.exception, at.exception
    shown = texts(at)
    assert "backward batch=4096, features=1024 (7–8)" in shown
    assert "differ between runs of some configs: backward batch=4096, features=1024." in shown
    at.segmented_control(key="kernels-bars").set_value("time").run()
    (spec,) = plotly_specs(at)
    (trace,) = [t for t in spec["data"] if t["customdata"][0][1] == "extra_kernel"]
    assert trace_values(trace, "y") == [pytest.approx(100_000 / 3 / 1000)]  # µs, over 3 runs
