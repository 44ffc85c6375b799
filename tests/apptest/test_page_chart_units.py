"""A chart's table is in the chart's unit, named in its column (issue 37): the Memory page's
table was in bytes beside its chart in MB, Kernels' and Cache and clock's in ns beside an axis in
µs; Clocks and thermal wrote "Wall time (s) 4.14" above a table column "WallS 4.143". Recorded
H200 jobs (tests.scenarios)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from apptest_helpers import plotly_specs, trace_values

from app.core.table_text import header
from tests.scenarios import SCENARIOS


@pytest.fixture
def h200(store, monkeypatch) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))


def _y(spec: dict, name: str) -> list[float]:
    return [y for t in spec["data"] if t.get("name") == name for y in trace_values(t, "y")]


def test_memory_table_is_in_the_charts_mb(h200, app) -> None:
    at = app("memory", query={"job": "h200-ncu-elementwise"})
    assert not at.exception, at.exception
    spec = plotly_specs(at)[0]
    assert spec["layout"]["yaxis"]["title"]["text"] == "DRAM traffic (MB)"
    table = at.dataframe[0].value
    assert not [c for c in table.columns if c.endswith("Bytes") or c.endswith("Ns")], \
        list(table.columns)
    for column, trace in (("DramReadMB", "DRAM read"), ("DramWriteMB", "DRAM written"),
                          ("AnalyticMB", "analytic minimum")):
        assert np.allclose(table[column], _y(spec, trace)), column
    assert np.allclose(table["DramMB"], table["DramReadMB"] + table["DramWriteMB"])
    assert 0.1 < table["TimeUs"].iloc[0] < 1e4  # µs, as the hover writes it


def test_kernels_table_is_in_the_charts_us(h200, app) -> None:
    at = app("kernels", query={"job": "h200-ncu-matmul-sweep"})
    at.segmented_control(key="kernels-bars").set_value("time").run()
    assert not at.exception, at.exception
    spec = plotly_specs(at)[0]
    assert spec["layout"]["yaxis"]["title"]["text"] == "Mean time per run (µs)"
    table = at.dataframe[0].value
    assert "MeanTimeNs" not in table.columns and "SharePct" in table.columns
    # the bars' values (the run audit's × marks above flagged bars are a scatter of their own)
    drawn = sorted(y for t in spec["data"] if t.get("type") == "bar"
                   for y in trace_values(t, "y"))
    assert np.allclose(sorted(table["MeanTimeUs"]), drawn)


def test_cache_clock_table_is_in_the_charts_units(h200, app) -> None:
    at = app("cache_clock", query={"job": "h200-ncu-elementwise"})
    assert not at.exception, at.exception
    spec = plotly_specs(at)[0]
    assert spec["layout"]["yaxis"]["title"]["text"] == "Time (µs)"
    assert spec["layout"]["yaxis2"]["title"]["text"] == "Bandwidth (GB/s)"
    table = at.dataframe[0].value
    assert "TimeNs" not in table.columns

    def drawn(axis: str) -> list[float]:
        return sorted(y for t in spec["data"] if t.get("yaxis", "y") == axis
                      for y in trace_values(t, "y"))

    assert np.allclose(sorted(table["TimeUs"]), drawn("y"))
    assert np.allclose(sorted(table["GBps"]), drawn("y2"))


def test_thermal_wall_time_has_one_name_and_one_format(h200, app) -> None:
    at = app("clocks_thermal", query={"job": "h200-cupti-stability"})
    assert not at.exception, at.exception
    walls = [el for el in at.dataframe if list(el.value.columns) == ["Job", "ThermalMode", "WallS"]]
    thermal = [el for el in at.dataframe if "AvgUs" in el.value.columns]
    assert walls and thermal, [list(el.value.columns) for el in at.dataframe]

    def wall(el) -> dict:
        return json.loads(el.proto.columns).get("WallS") or {}

    # headed alike in both tables (table_text.header of WallS), as the table below
    assert wall(walls[0]).get("label") == wall(thermal[0]).get("label") == header("WallS")
    assert wall(walls[0])["type_config"]["format"] == wall(thermal[0])["type_config"]["format"]
