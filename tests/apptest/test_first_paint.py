"""What a first page load sends besides the page (issue 37: every element of the first run is
drawn by the browser in one pass with the first chart, and an element of a kind not yet on
the page loads its JavaScript first)."""

from __future__ import annotations

import pytest
from apptest_helpers import TEXT_KINDS, closed_contents, element_kinds, fold_key, open_folds

from app.sidebar import run_on
from tests.scenarios import SCENARIOS


def test_where_to_run_is_drawn_once_opened(seeded, app) -> None:
    """The "Where to run" expander starts closed and empty: no radio in the first run, the
    job goes to this host. Opened, its choice is drawn; closed again, it stays drawn and keeps
    the value, which is what Run submits to."""
    at = app()
    assert not at.exception
    assert "Where to run" in [box.label for box in at.sidebar.expander]
    assert not at.sidebar.radio, "the first run sends a widget of the closed expander"
    assert run_on.k("where") not in at.session_state  # chosen_options: this host

    at.session_state[run_on.k("box")] = True  # the user opens it: a rerun
    at.run()
    assert at.radio(key=run_on.k("where")).value == run_on.HOST
    at.radio(key=run_on.k("where")).set_value(run_on.LOCAL).run()
    at.session_state[run_on.k("box")] = False  # and closes it
    at.run()
    assert not at.exception
    assert at.radio(key=run_on.k("where")).value == run_on.LOCAL
    assert at.number_input(key=run_on.k("parallelism")).value == 16


@pytest.mark.parametrize(("page", "job"), [
    ("sweep", "h200-ncu-matmul-sweep"),  # the deep dive's point picker
    ("stability", "h200-cupti-timeline"),  # the run audit's two tables
    ("results", "h200-cupti-timeline"),
    ("deep_dive", "h200-ncu-deepdive-fp16-4096"),  # every section metric: a table
    ("environment", "h200-ncu-j1-fp16"),  # the reports as JSON
    ("files", "h200-ncu-j1-fp16"),  # worker.log's tail
])
def test_closed_expanders_hold_text_alone_until_opened(store, monkeypatch, app, page,
                                                       job) -> None:
    """A page load draws no widget, table, code or JSON inside a closed expander (the browser
    drew them, hidden, with the page's first chart); opened, each shows them."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app(page, query={"job": job})
    assert not at.exception, at.exception
    first = closed_contents(at)
    assert {label: kinds for label, kinds in first.items() if set(kinds) - TEXT_KINDS} == {}
    folds = [str(box.label) for box in at.expander if fold_key(box)]
    assert folds, "no fold on this page"
    opened = open_folds(at)
    assert not opened.exception, opened.exception
    drawn = {str(box.label): element_kinds(box) for box in opened.expander}
    assert all(set(drawn[label]) - TEXT_KINDS for label in folds), drawn
