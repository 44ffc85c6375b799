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
