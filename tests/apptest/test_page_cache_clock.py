"""Cache and clock control page on the bundled H200 elementwise jobs (cache all and none)."""

from __future__ import annotations

from apptest_helpers import plotly_specs, texts
from tests.scenarios import SCENARIOS


def test_matrix_of_the_two_cache_variants(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("cache_clock", query={"job": "h200-ncu-elementwise"})
    assert not at.exception, at.exception
    (spec,) = plotly_specs(at)
    assert {t["name"].split(" · ", 1)[1] for t in spec["data"]} == {
        "cache all · clock none", "cache none · clock none"}
    assert set(at.dataframe[0].value["Variant"]) == {"cache all · clock none",
                                                     "cache none · clock none"}
    # Issue 25: the bandwidth panel's 57-character axis title ran into the time panel's; the
    # long descriptions are panel titles above each panel, the axis titles short
    titles = [spec["layout"][f"yaxis{n}"]["title"]["text"] for n in ("", "2", "3")]
    assert titles == ["Time (µs)", "Bandwidth (GB/s)", "SM clock (MHz)"]
    above = {a["text"] for a in spec["layout"]["annotations"]}
    assert "Bandwidth: DRAM bytes (measured, else analytic) / time" in above


def test_job_without_variants_says_how_to_add_one(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("cache_clock", query={"job": "h200-ncu-softmax"})
    assert not at.exception
    assert "run this job again with the other cache_control" in texts(at)
