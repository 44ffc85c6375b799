"""The job form as a browser shows it when its widgets mount only after a second run.

A new browser session loads each widget's JavaScript lazily. When a second full run of the
session comes before that (another session's job ends and the job panel reruns the app, a
click, a reconnect), the widget's element from that run is the one the browser mounts. Streamlit
sends a value set through ``st.session_state`` only in the run that set it ("set_value"); in
every other run the browser that has no value of its own draws the widget's own default. The
form once set its defaults through ``st.session_state.setdefault``, so such a browser showed
Kernels empty and Backend "ncu", and Run said "kernels: is empty" (issue 14).

These tests read the element of each form widget after a second run and check that what a
browser mounting it now would draw (its ``default``, unless the run sends ``set_value``) is the
value the server holds.
"""

from __future__ import annotations

from typing import Any


def _drawn_on_late_mount(widget: Any) -> Any:
    """What a browser with no value of its own shows for ``widget``: in the terms of the
    server's value (indices for choices, text, number)."""
    return widget.proto.default if widget.type != "multiselect" else list(widget.proto.default)


def _server_value(widget: Any) -> Any:
    if widget.type == "multiselect":
        return list(widget.indices)
    if widget.type in ("selectbox", "radio"):
        return widget.index
    if widget.type == "number_input":
        return 0.0 if widget.value is None else float(widget.value)  # proto default: 0.0 unset
    return widget.value or ""


def _mismatches(at: Any) -> dict[str, tuple[Any, Any]]:
    kinds = ("multiselect", "selectbox", "radio", "text_input", "text_area", "number_input")
    out = {}
    for kind in kinds:
        for widget in getattr(at.sidebar, kind):
            if not str(widget.key).startswith("builder-") or widget.proto.set_value:
                continue
            if widget.type == "number_input" and widget.value is None:
                if not widget.proto.HasField("default"):
                    continue  # empty on both sides
            late, server = _drawn_on_late_mount(widget), _server_value(widget)
            if late != server:
                out[widget.key] = (late, server)
    return out


def test_second_run_form_shows_the_session_defaults_to_a_late_browser(store, app) -> None:
    at = app()
    assert at.multiselect(key="builder-kernels").value == ["matmul"]
    assert at.selectbox(key="builder-backend").value == "cpu"
    at.run()  # a second full run with no input from the browser (as the job panel's rerun)
    assert not at.exception
    assert _mismatches(at) == {}
    at.session_state["builder-options"] = True  # the Options expander opened: its fields drawn
    at.run()
    at.run()
    assert at.selectbox(key="builder-cache_control").value == "all"
    assert _mismatches(at) == {}


def test_two_parameter_fields_show_their_defaults_to_a_late_browser(store, app) -> None:
    at = app()
    at.multiselect(key="builder-kernels").set_value(["batched_matmul"]).run()
    at.run()
    assert not at.exception
    assert {"builder-param-batch", "builder-param-n"} <= {w.key for w in at.sidebar.text_input}
    assert at.radio(key="builder-combine").value == "zip"  # the kernel's configs pair up
    new = {k: v for k, v in _mismatches(at).items() if k != "builder-kernels"}  # user-chosen
    assert new == {}, "fields that appeared with the new kernel"
