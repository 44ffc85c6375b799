"""Results page: the aggregated, per-run and work tables of the selected job, with CSVs."""

from __future__ import annotations

from apptest_helpers import texts
from tests.scenarios import SCENARIOS


def test_tables_and_downloads(seeded, app) -> None:
    at = app("results")
    assert not at.exception
    frames = [df.value for df in at.dataframe]
    assert [len(f) for f in frames][:4] == [6, 18, 6, 6]  # aggregated, runs, work, run audit
    assert {"AvgValue", "CI95_Lower", "CI95_Upper"} <= set(frames[0].columns)
    assert len(at.get("download_button")) == 3
    assert "host wall-clock, not GPU" in texts(at)
    captions = [c.value for c in at.caption if "per annotation × config" in c.value]
    assert len(captions) == 3 and "times in ns" in captions[0] and "times in ns" in captions[1]
    assert "times in ns" not in captions[2] and "FLOPs and bytes" in captions[2]  # no times there
    # issue 37: the CI95 columns say how they differ from nsight-python's (Student-t vs 1.96)
    assert "Student-t CI95" in captions[0] and "use 1.96·s/√n" in captions[0]


def test_no_job(store, app) -> None:
    at = app("results")
    assert not at.exception and "No job selected" in texts(at)


def test_a_large_table_of_several_units_sorts_by_value(store, monkeypatch, app) -> None:
    """h200-ncu-matmul-sweep's runs table: 900 rows in 4 units, 8,100 cells, over the cells a
    page styles per unit. Its Value column stays numbers with one format (a header click sorts
    by value: as text, "1,978,513,520" came before "21,437.5"), and a caption says so."""
    import json

    import numpy as np

    from app.ui.panels import STYLED_CELLS

    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("results", query={"job": "h200-ncu-matmul-sweep"})
    assert not at.exception, at.exception
    runs = next(d for d in at.dataframe if len(d.value) == 900)
    assert runs.value.size > STYLED_CELLS and runs.value["Unit"].nunique() == 4
    assert not runs.proto.arrow_data.HasField("styler")
    assert runs.value["Value"].dtype == np.float64
    value = json.loads(runs.proto.columns)["Value"]
    # the finest unit's decimals: the % rows keep the 2 their own format shows (37.24, not 37)
    assert value["type_config"]["format"] == "%,.2f"
    assert any("one number format for the rows of every unit" in c.value and
               "sorts by value" in c.value for c in at.caption)
