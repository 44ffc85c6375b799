"""app.ui.controls_later: a chart drawn with its controls' values before they are drawn, a rerun
where a control, once drawn, returns another value than the chart was drawn with, and the chart
pages that draw their controls so."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from apptest_helpers import sent_elements
from tests.scenarios import SCENARIOS


def _page() -> None:
    """A chart (a text) that reads its toggle ahead with ``default``, drawn before the toggle,
    which is declared with ``value=False``; ``runs`` counts the script runs."""
    import streamlit as st

    from app.ui.controls_later import Later

    st.session_state["runs"] = st.session_state.get("runs", 0) + 1
    later = Later()
    st.text(f"chart drawn with log {later.value('log', st.session_state['default'])}")
    with later.slot:
        st.toggle("Log", value=False, key="log")
    later.confirm()


def _app(default: bool) -> AppTest:
    at = AppTest.from_function(_page)
    at.session_state["default"] = default
    return at.run()


def test_controls_after_the_chart_in_their_slot() -> None:
    at = _app(False)
    assert not at.exception
    assert at.session_state["runs"] == 1  # the default read is the widget's: no second run
    assert at.text[0].value == "chart drawn with log False"
    # the toggle stands above the chart on the page: the slot was placed first
    assert [type(e).__name__ for e in at.main.children.values()][:2] == ["Block", "Text"]
    at.toggle(key="log").set_value(True).run()  # the user's change reaches the chart
    assert at.session_state["runs"] == 2
    assert at.text[0].value == "chart drawn with log True"


def test_a_control_that_returns_another_value_runs_the_page_again() -> None:
    # read with True, drawn with value=False: the first run's chart was stale, a second drew
    # the toggle's value, and stopped there
    at = _app(True)
    assert not at.exception
    assert at.session_state["runs"] == 2
    assert at.toggle(key="log").value is False
    assert at.text[0].value == "chart drawn with log False"


@pytest.mark.parametrize("page", ["stability", "kernels", "one_kernel"])
def test_a_click_from_the_sweep_sends_the_chart_before_the_page_controls(
        store, monkeypatch, app, page: str) -> None:
    """Issue 40's clicks: the browser renders a page's elements in the order they come, and
    rendered each page's controls (selectboxes, segmented controls) before its chart; they are
    sent after it, into their place above it, and stand there as before."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    sent = sent_elements(monkeypatch)
    at = app(query={"job": "h200-ncu-matmul-sweep"})
    del sent[:]
    at.switch_page(f"app_pages/{page}.py").run()  # a click on the page bar
    assert not at.exception
    controls = [i for i, kind in enumerate(sent) if kind in ("selectbox", "button_group")]
    assert controls and sent.index("plotly_chart") < controls[0], sent
    order = [e.type for e in at.main]
    first_control = min(order.index(kind) for kind in ("selectbox", "button_group")
                        if kind in order)
    assert first_control < order.index("plotly_chart"), order


def _normalising_page() -> None:
    """A control that never gives back the value read ahead of it (its session value moves on
    between the read and the widget, as a widget that normalises its value would):
    ``runs`` counts the script runs."""
    import streamlit as st

    from app.ui.controls_later import Later

    st.session_state["runs"] = st.session_state.get("runs", 0) + 1
    later = Later()
    read = later.value("n", 0.0)
    st.session_state["n"] = read + 1.0
    with later.slot:
        st.number_input("n", key="n")
    later.confirm()


def test_a_control_that_never_returns_the_value_read_reruns_once() -> None:
    at = AppTest.from_function(_normalising_page).run()
    assert not at.exception
    assert at.session_state["runs"] == 2


def _picker_page() -> None:
    """A selectbox kept to its options by ``keep_if_offered``, read ahead of it by ``Later``."""
    import streamlit as st

    from app.ui import state
    from app.ui.controls_later import Later

    later = Later()
    options = state.keep_if_offered("point", ["a", "b"], default="b")
    st.text(f"chart drawn with point {later.value('point', 'b')}")
    with later.slot:
        st.selectbox("Point", options, key="point")
    later.confirm()


def test_the_picker_and_the_chart_read_one_session_value(monkeypatch) -> None:
    """keep_if_offered and Later.value read the widget's session value through one helper
    (state.widget_value): a value of another job is dropped, the default written, and the
    chart is drawn with it, in one run."""
    from app.ui import state

    read: list[str] = []
    one_reading = state.widget_value
    monkeypatch.setattr(state, "widget_value",
                        lambda key, default: read.append(key) or one_reading(key, default))
    at = AppTest.from_function(_picker_page)
    at.session_state["point"] = "z"  # kept from another job
    at.run()
    assert not at.exception, at.exception
    assert at.text[0].value == "chart drawn with point b" and at.selectbox[0].value == "b"
    assert read.count("point") == 3  # keep_if_offered's two checks and the chart's read
