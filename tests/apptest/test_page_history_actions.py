"""History page on the SQLite index: filters, open, tags, delete with confirmation."""

from __future__ import annotations

import shutil
from pathlib import Path

from apptest_helpers import texts, texts_with_progress, wait_until

from app.services import history_index
from app.sidebar.job_selector import unknown_job_text
from app.ui import cached, history as hx
from tests.scenarios import SCENARIOS

REPO = Path(__file__).resolve().parents[2]
JOB = "20261129-230000-matmul-0001"
BUNDLED = "h200-ncu-j1-fp16"


def _with_bundled(seeded: dict[str, Path]) -> dict[str, Path]:
    shutil.copytree(SCENARIOS / BUNDLED, seeded["bundled"] / BUNDLED)
    return seeded


def test_the_first_tag_typed_is_kept_with_no_session_state_warning(
        seeded, app, no_session_state_warning) -> None:
    """The tags widget takes its value from one source (session state): the first tag typed
    is stored and stays in the widget, and Streamlit logs no "created with a default value but
    also had its value set via the Session State API" (it did, and the browser lost the tag)."""
    at = app("history", query={"job": JOB})
    key = f"history-tags-{JOB}"
    at.multiselect(key=key).set_value(["first"]).run()
    assert not at.exception, at.exception
    assert at.multiselect(key=key).value == ["first"]
    at.multiselect(key=key).set_value(["first", "second"]).run()
    assert at.multiselect(key=key).value == ["first", "second"]
    assert history_index.rows(seeded["results"])[0].tags == ("first", "second")


def test_filters_narrow_the_table(seeded, app) -> None:
    _with_bundled(seeded)
    at = app("history")
    assert not at.exception
    assert sorted(at.dataframe[0].value["Job"]) == sorted([JOB, BUNDLED])
    at.multiselect(key="history-backends").set_value(["cpu"]).run()
    assert at.dataframe[0].value["Job"].tolist() == [JOB]
    at.multiselect(key="history-backends").set_value([]).run()
    at.text_input(key="history-text").input("H200 j1").run()
    assert at.dataframe[0].value["Job"].tolist() == [BUNDLED]
    assert "1 of 2 jobs" in texts(at)
    assert (seeded["results"] / "index.sqlite").is_file()


def test_tags_are_added_and_removed_for_the_open_job(seeded, app) -> None:
    _with_bundled(seeded)
    at = app("history", query={"job": BUNDLED})
    tags = at.multiselect(key=f"history-tags-{BUNDLED}")
    tags.set_value(["baseline"]).run()
    assert not at.exception
    assert history_index.rows(seeded["results"], history_index.HistoryFilter(
        tags=("baseline",)))[0].job_id == BUNDLED
    assert at.dataframe[0].value.set_index("Job").loc[BUNDLED, "Tags"] == "baseline"
    at.multiselect(key=f"history-tags-{BUNDLED}").set_value([]).run()
    assert history_index.rows(seeded["results"])[0].tags == ()
    assert "read-only" in texts(at)
    assert "history-delete" not in [b.key for b in at.button]  # bundled: no delete


def test_delete_asks_first_then_removes_the_directory(seeded, app) -> None:
    at = app("history", query={"job": JOB})
    at.button(key="history-delete").click().run()
    assert (seeded["results"] / JOB).is_dir()
    assert "for good" in texts(at)
    at.button(key="history-delete-cancel").click().run()
    assert (seeded["results"] / JOB).is_dir()
    at.button(key="history-delete").click().run()
    at.button(key="history-delete-confirm").click().run()
    assert not at.exception
    assert not (seeded["results"] / JOB).exists()
    assert f"Deleted {JOB}" in texts(at)
    assert at.dataframe[0].value.empty


def test_no_delete_for_a_job_the_filters_hide(seeded, app) -> None:
    _with_bundled(seeded)
    at = app("history", query={"job": JOB})
    other = at.dataframe[0].value.set_index("Job").loc[BUNDLED, "Backend"]
    at.multiselect(key="history-backends").set_value(["cpu"]).run()
    assert "history-delete" in [b.key for b in at.button]  # shown (filtered in): delete offered
    at.button(key="history-delete").click().run()
    at.multiselect(key="history-backends").set_value([other]).run()
    assert at.dataframe[0].value["Job"].tolist() == [BUNDLED]
    assert not [b for b in at.button if b.key.startswith("history-delete")]
    assert f"Open job: {JOB}" not in texts(at)
    assert f"The open job `{JOB}` is not in the filtered table" in texts(at)
    at.multiselect(key="history-backends").set_value([]).run()
    at.text_input(key="history-text").input("zzznomatch").run()
    assert at.dataframe[0].value.empty
    assert not [b for b in at.button if b.key.startswith("history-delete")]
    assert "not in the filtered table" in texts(at)
    assert (seeded["results"] / JOB).is_dir()


def test_a_deleted_job_leaves_the_panel_and_the_page_says_no_error(seeded, app) -> None:
    """Issue 37 (26_after_delete.png): a job this server ran stayed in the job panel after
    Delete for good, in new sessions too, and the page said "Deleted …" beside "There is no
    job … in the results". A delete that worked drops it from the job manager's book and
    from the selection, and says only that it deleted it."""
    at = app("files", query={"job": JOB})
    at.button(key="files-replicate").click().run()  # a job of this server's job manager
    new = next(j.job_id for j in cached.job_manager().snapshot() if j.job_id != JOB)
    wait_until(lambda: not cached.job_manager().get(new).active)
    at = app("history", query={"job": new})
    assert new in texts_with_progress(at)  # the panel lists it before
    at.button(key="history-delete").click().run()
    at.button(key="history-delete-confirm").click().run()
    assert not at.exception
    assert not (seeded["results"] / new).exists()
    assert cached.executors().get(new) is None
    shown = texts_with_progress(at)
    assert hx.deleted_text(new) in shown
    assert unknown_job_text(new, None).partition(" in the results")[0] not in shown
    assert at.query_params.get("job") != [new]
    again = app("history")  # a new session: its panel does not list it either
    assert not again.exception and new not in texts_with_progress(again)
