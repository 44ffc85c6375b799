"""What a first page load sends besides the page (issue 37: every element of the first run is
drawn by the browser in one pass with the first chart, and an element of a kind not yet on
the page loads its JavaScript first)."""

from __future__ import annotations

from app.sidebar import run_on


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
