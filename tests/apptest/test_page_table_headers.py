"""Table headers in words (issue 37): Stability's table headed nsight-python's
``RelativeStdDevPct``, ``CI95HalfWidthPct`` and ``StableMeasurement`` (session 26's fresh user).
Every table of every page, on the recorded H200 jobs, heads its columns in words with their
units (:func:`app.core.table_text.header`), never a CamelCase name; the frame behind it, which
the CSV download writes, keeps the names."""

from __future__ import annotations

import json
import re

import pytest
from test_page_number_format import PAGES

from app.core.table_text import header
from profiling_worker.bundle.schema import columns as C
from tests.scenarios import SCENARIOS

#: A CamelCase name as a header: a lower-case letter followed by a capital or a digit run, or
#: an underscore between two capitalised parts (``CI95_Lower``).
CAMEL = re.compile(r"^[A-Z][A-Za-z0-9]*(?:[a-z][A-Z]|_[A-Z])")


def _headers(el) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Column name -> the header the table shows (its column config's label, else its name)."""
    columns = json.loads(el.proto.columns) if el.proto.columns else {}
    return {str(name): (columns.get(str(name)) or {}).get("label") or str(name)
            for name in el.value.columns}


@pytest.mark.parametrize(("page", "query"), PAGES)
def test_no_table_heads_a_column_with_its_camel_case_name(store, monkeypatch, app, page,
                                                          query) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app(page, query=query)
    assert not at.exception, at.exception
    raw = [(name, shown) for el in at.dataframe for name, shown in _headers(el).items()
           if CAMEL.match(shown)]
    assert not raw, (page, raw)


def test_stability_heads_nsight_pythons_columns_in_words(seeded, app) -> None:
    at = app("stability")
    assert not at.exception, at.exception
    table = at.dataframe[0]
    shown = _headers(table)
    for name in (C.RSD, C.CI95_HALF_PCT, C.STABLE):
        assert shown[name] == header(name) != name, shown
    assert "(%)" in shown[C.RSD] and "(%)" in shown[C.CI95_HALF_PCT]
    assert {C.RSD, C.CI95_HALF_PCT, C.STABLE} <= set(table.value.columns)  # the CSV's names
    said = " ".join(str(c.value) for c in at.caption)
    assert f"{header(C.CI95_HALF_PCT)} beside {header(C.STABLE)}" in said  # as headed
