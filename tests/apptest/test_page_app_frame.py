"""The app frame: default job with no GPU (the store's newest result, else the bundled
job), ?job= reattach, unsafe ids, a failed job's error."""

from __future__ import annotations

import json
import shutil

from apptest_helpers import open_folds, texts

from app.sidebar.job_selector import unknown_job_text
from app.ui import state


def _copy(src, dest, **manifest_changes) -> None:
    shutil.copytree(src, dest)
    manifest = json.loads((dest / "manifest.json").read_text())
    manifest.update(manifest_changes)
    (dest / "manifest.json").write_text(json.dumps(manifest))


def test_no_gpu_defaults_to_bundled_job_until_the_store_has_a_result(store, cpu_bundle_src,
                                                                     app) -> None:
    """Without a GPU a tab opens on the bundled job while no job of the result store has
    finished with results (a failed one has none); then on the store's (a fresh user's find:
    it stayed on the bundled job after they had run theirs)."""
    _copy(cpu_bundle_src, store["bundled"] / "h200-matmul", started_at="2026-01-01T00:00:00+00:00",
          environment={"gpu_name": "NVIDIA H200"})
    _copy(cpu_bundle_src, store["results"] / "local-failed", started_at="2026-11-02T00:00:00+00:00",
          status="failed")
    at = app()
    assert not at.exception
    assert at.session_state["sidebar-job"] == "h200-matmul"
    assert at.query_params["job"] == "h200-matmul"
    _copy(cpu_bundle_src, store["results"] / "local-newer", started_at="2026-11-01T00:00:00+00:00")
    at = app()  # a fresh tab
    assert not at.exception
    assert at.session_state["sidebar-job"] == "local-newer"
    assert at.query_params["job"] == "local-newer"
    assert "bundled" in at.selectbox(key="sidebar-job").options[-1]


def test_url_job_reattaches(store, cpu_bundle_src, app) -> None:
    _copy(cpu_bundle_src, store["results"] / "job-a", started_at="2026-01-01T00:00:00+00:00")
    _copy(cpu_bundle_src, store["results"] / "job-b", started_at="2026-02-01T00:00:00+00:00")
    at = app(query={"job": "job-a"})
    assert at.session_state["sidebar-job"] == "job-a"
    at.selectbox(key="sidebar-job").set_value("job-b").run()
    assert at.query_params["job"] == "job-b"


def test_unsafe_url_job_is_ignored(seeded, app) -> None:
    at = app(query={"job": "../../etc"})
    assert not at.exception
    assert at.session_state["sidebar-job"] == "20261129-230000-matmul-0001"


def test_a_url_job_that_names_no_job_is_said_above_the_page(store, cpu_bundle_src, app) -> None:
    """A fresh user opened ``/?job=no-such-job``: the URL was rewritten to another job and the
    only word of it was in the sidebar, folded away at 1000 px. The main area now says so,
    as it does for a page path that names no page."""
    _copy(cpu_bundle_src, store["results"] / "job-a", started_at="2026-01-01T00:00:00+00:00")
    at = app(query={"job": "no-such-job"})
    assert not at.exception
    said = [w.value for w in at.main.warning]
    assert any("There is no job `no-such-job`" in w and "`job-a`" in w for w in said)
    assert not [w for w in at.sidebar.warning if "no-such-job" in w.value]
    assert at.query_params["job"] == "job-a"
    # one box says it, with why job-a (session 22: the default's note said it again below)
    (box,) = [w for w in said if "no-such-job" in w]
    why = at.session_state[state.DEFAULT_WHY]
    assert why and box == unknown_job_text("no-such-job", "job-a", why)
    assert not [c for c in at.main.caption if why in c.value]  # not said again as a note


def test_failed_job_shows_kind_message_hint_and_log_tail(store, cpu_bundle_src, app) -> None:
    _copy(cpu_bundle_src, store["results"] / "failed-job", status="failed", error={
        "kind": "ncu_not_found", "message": "ncu is not on PATH", "hint": "install Nsight Compute",
        "log_tail": "==ERROR== boom"})
    shutil.rmtree(store["results"] / "failed-job" / "tables")
    at = app(query={"job": "failed-job"})
    assert not at.exception
    text = texts(at)
    assert "**ncu_not_found**: ncu is not on PATH" in text and "install Nsight Compute" in text
    assert not at.code  # the log tail is drawn once its expander is opened
    assert any("==ERROR== boom" in c.value for c in open_folds(at).code)
    assert not at.get("plotly_chart")


def test_a_page_that_ends_early_still_gets_the_sidebar(store, app) -> None:
    """Pages run before the sidebar (their chart reaches the browser first); a page that ends
    early (here: no job at all) must not take the sidebar with it."""
    for page in ("sweep", "compare", "clocks_thermal", "environment", "backends"):
        at = app(page)
        assert not at.exception, (page, at.exception)
        assert at.button(key="builder-submit"), page  # the job form's Run button
        assert at.sidebar.selectbox(key="builder-backend").value == "cpu"


def _send_stale_label(at, key: str, label: str) -> None:
    """Make the next run carry ``label`` as the selectbox's value, as a browser does whose
    selector was drawn before the job's status (part of the label) moved on."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState
    from streamlit.testing.v1.element_tree import Selectbox

    class StaleLabel(Selectbox):
        @property
        def _widget_state(self) -> WidgetState:
            return WidgetState(id=self.id, string_value=label)

    box = at.selectbox(key=key)
    box.__class__ = StaleLabel
    box._value = label  # marks the widget as changed by the user


def test_a_stale_selector_label_never_reaches_the_url(store, cpu_bundle_src, app) -> None:
    """Issue 25: the URL held ``?job=<id> · matmul · cpu · running``. The browser sends the
    selector's label; once the job's status changed the label matched no option, Streamlit
    handed the label to the callback, which wrote it into the URL (and the app then showed
    the default job instead of the chosen one)."""
    _copy(cpu_bundle_src, store["results"] / "job-a", started_at="2026-01-01T00:00:00+00:00")
    _copy(cpu_bundle_src, store["results"] / "job-b", started_at="2026-02-01T00:00:00+00:00")
    at = app(query={"job": "job-a"})
    label = at.selectbox(key="sidebar-job").options[1]
    assert label.startswith("job-a · ") and label.endswith(" · done")
    _send_stale_label(at, "sidebar-job", label.replace(" · done", " · running"))
    at.run()
    assert not at.exception
    assert at.query_params["job"] == "job-a"
    assert at.session_state["sidebar-job"] == "job-a"


def test_selector_callback_writes_only_the_id() -> None:
    """The callback alone (it also runs in a job-panel fragment rerun, which never reaches
    resolve_job): a label in the widget state becomes its id in the URL."""
    from streamlit.testing.v1 import AppTest

    def script() -> None:
        import streamlit as st

        from app.ui import state

        st.session_state[state.SELECTED_JOB] = "job-a · matmul · cpu · running"
        state.on_job_selected()

    at = AppTest.from_function(script).run()
    assert not at.exception
    assert at.query_params["job"] == "job-a"
    assert at.session_state["sidebar-job"] == "job-a"
