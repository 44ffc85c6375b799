"""No table cell reads "None" or "nan": a missing value is drawn as "—" (app/ui/panels.py), on
the pages where a new user's trial found them (recorded H200 scenarios, a real imported report)."""

from __future__ import annotations

from pathlib import Path

import pytest
from apptest_helpers import shown_cells

from tests.scenarios import SCENARIOS

REPO = Path(__file__).resolve().parents[2]


def _assert_no_none(at) -> None:
    assert not at.exception, at.exception
    cells = shown_cells(at)
    assert cells, "no table drawn"
    assert not {"None", "nan", "NaN", "<NA>"} & set(cells)


@pytest.mark.parametrize(("page", "query"), [
    ("backends", {"job": "h200-ncu-matmul-sweep"}),  # CyclesDiffPct empty on every row
    ("compare", {"baseline": "h200-ncu-matmul-sweep", "candidate": "h200-cupti-matmul-sweep"}),
    ("compare", {"baseline": "h200-cupti-gate-base", "candidate": "h200-cupti-gate-again"}),
    ("bound_roofline", {"job": "h200-ncu-matmul-rules"}),  # the rule digest's saving column
])
def test_missing_values_are_drawn_as_a_dash(store, monkeypatch, app, page, query) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app(page, query=query)
    _assert_no_none(at)
    assert "—" in shown_cells(at)  # the case the trial found is drawn


def test_plausibility_notes_table_has_no_none(store, app) -> None:
    """Case 10's report gives 5 import notes on no annotation, config or metric: the table of
    them (more than four) shows those cells empty-dashed."""
    from profiling_worker.importing import import_nsight_output

    report = REPO / "tests" / "fixtures" / "import_cases" / "10-two-launches-per-pass" / \
        "ranges.ncu-rep.gz"
    import_nsight_output([report], store["results"], "ranges")
    at = app("stability", query={"job": "ranges"})
    assert any(el.value.columns.tolist()[:3] == ["severity", "check", "annotation"]
               for el in at.dataframe)
    _assert_no_none(at)


def test_the_csv_keeps_exact_values_and_empty_cells() -> None:
    """The table's dash is display only: the frame a page passes (and its CSV download) keeps
    its values and its empty cells."""
    from streamlit.testing.v1 import AppTest

    def script() -> None:
        import pandas as pd
        import streamlit as st

        from app.ui import panels

        frame = pd.DataFrame({"RunsToDecide": pd.Series([46, None], dtype=object),
                              "CyclesOutcome": ["same", None], "DiffPct": [1.9084, float("nan")]})
        panels.table(frame, key="t")
        st.session_state["csv"] = panels.csv_bytes(frame).decode()
        st.session_state["dtype"] = str(frame["RunsToDecide"].dtype)

    at = AppTest.from_function(script).run()
    assert not at.exception, at.exception
    assert at.session_state["csv"] == "RunsToDecide,CyclesOutcome,DiffPct\n46,same,1.9084\n,,\n"
    assert at.session_state["dtype"] == "object"
    assert shown_cells(at) == ["46.0", "same", "1.9084", "—", "—", "—"]
