"""The page caption, the sidebar job panel and the submit notice name the same state of a job this
server runs: right after Run, queued behind another job, running, ended (the caption once said
queued while the panel said running). The panel rerunning the page by itself is a browser test
(tests/e2e/test_job_status_agrees.py): AppTest never ticks fragments."""

from __future__ import annotations

import re

from apptest_helpers import submit_cpu_matmul, texts, wait_until
from app.ui import cached
from profiling_worker.bundle.schema.manifest import JobStatus

#: The statuses a job can be said to have (its manifest's words).
STATES = tuple(s.value for s in JobStatus)


def _state_of(line: str) -> str:
    """The one status word in ``line`` (a caption or a panel header), wherever it stands."""
    (said,) = [s for s in STATES if re.search(rf"\b{s}\b", line)]
    return said


def _states(at, job_id: str) -> tuple[str, str]:
    """(the page caption's status, the job panel's status) of ``job_id``: the page's caption
    and the panel's header that name it."""
    assert not at.exception, at.exception
    (caption,) = [str(c.value) for c in at.main.caption if job_id in str(c.value)]
    (shown,) = [str(el.value) for el in at.sidebar.markdown if job_id in str(el.value)]
    return _state_of(caption), _state_of(shown)


def test_caption_panel_and_notice_agree_after_run(store, app) -> None:
    at = app()
    first = submit_cpu_matmul(at, "256", 5000)
    manager = cached.job_manager()
    caption, panel = _states(at, first)
    assert caption == panel and panel in ("queued", "running")
    wait_until(lambda: manager.get(first).status == "running")
    at.run()
    assert _states(at, first) == ("running", "running")
    second = submit_cpu_matmul(at, "255", 5000)  # behind the first on the cpu lane (another
    # spec: an identical one within 30 s asks first, tests/unit/app/test_repeat_guard.py)
    assert _states(at, second) == ("queued", "queued")
    assert at.session_state["page-job-status"] == {second: "queued"}  # what the panel checks
    assert f"Job `{second}` queued." in texts(at)  # the submit notice: the panel's snapshot
    manager.cancel(first)
    wait_until(lambda: manager.get(second).status == "running")
    at.run()
    assert _states(at, second) == ("running", "running")
    assert f"Job `{second}` running." in texts(at)
    manager.cancel(second)
    assert manager.wait(second, 60) == "cancelled"
    at.run()
    assert _states(at, second) == ("cancelled", "cancelled")


def test_run_scrolls_the_sidebar_to_the_jobs_card_once(store, app) -> None:
    """Issue 37: at 1000x700 the job panel began below the sidebar's fold, so after Run the
    job's status was out of sight. The run after Run brings the job's card into sight (a
    script, once per job: tests/e2e/test_nothing_cut.py reads the card's box); the panel's
    later runs leave the sidebar where the user scrolls it."""
    from app.sidebar.job_panel import scroll_script

    def scripts(at) -> list[str]:  # the st.html bodies of the sidebar
        return [str(el.proto.body) for el in at.sidebar.get("html")
                if "<script>" in str(el.proto.body)]

    at = app()
    job = submit_cpu_matmul(at, "64", 3)
    assert scripts(at) == [scroll_script(job)]
    at.run()
    assert scripts(at) == []
    cached.job_manager().wait(job, 120)


def test_the_job_box_and_history_say_the_panels_state_while_the_manifest_lags(store, app) -> None:
    """Issue 37: the job manager sets a job's state before it writes its manifest, and the Job
    box and History read the manifest, so for about a second they said "running" of a job the
    panel said done. Here the ended job's manifest is set back to "running" (the state the
    listing holds in that second): the Job box's label and entry and History's column say the
    manager's state, as the panel's card does (every state: tests/unit/app/test_status_words.py).
    History draws no caption of the job: the box alone names it there."""
    from profiling_worker.bundle.schema.manifest import update_manifest

    from app.ui.state import LABEL_SEP

    at = app("history")
    job = submit_cpu_matmul(at, "64", 3)
    assert cached.job_manager().wait(job, 120) == "done"
    update_manifest(store["results"] / job, lambda m: {**m, "status": "running"})
    at.run()
    assert not at.exception, at.exception
    (panel,) = [_state_of(str(el.value)) for el in at.sidebar.markdown if job in str(el.value)]
    box = at.sidebar.selectbox(key="sidebar-job")
    assert panel == "done" and box.label.split(LABEL_SEP)[1] == panel, box.label
    (entry,) = [o for o in box.options if o.startswith(job)]
    assert entry.split(LABEL_SEP)[3] == panel, entry
    table = at.dataframe[0].value
    assert dict(zip(table["Job"], table["Status"]))[job] == panel
    assert at.session_state["page-job-status"] == {job: "done"}  # the panel reruns on a change


def test_a_state_that_moves_during_a_run_is_said_once_by_page_box_and_panel(store, app,
                                                                              monkeypatch) -> None:
    """Issue 37: the page runs first and the Job box and the panel's card 0.2-0.3 s later, each
    reading the job manager: a job that moved on between them was said in two states, and the
    page's earlier one was never drawn again (the Job box's later record replaced it, so the
    panel saw nothing behind). Here a queued job is cancelled after the page drew, before the
    Job box: the run says one state everywhere (one snapshot per full run), records it, and
    the panel's next tick, finding the manager past it, reruns the app, which says the new
    one (AppTest ticks no fragment: the rerun is a run)."""
    from app.sidebar import job_selector

    at = app()
    first = submit_cpu_matmul(at, "512", 5000)  # minutes of runs: the second waits
    manager = cached.job_manager()
    second = submit_cpu_matmul(at, "511", 5000)
    real = job_selector.render_job_selector
    moved: list[str] = []

    def cancel_second(*args):  # type: ignore[no-untyped-def]
        if not moved:  # after the page drew, before the Job box and the panel
            manager.cancel(second)
            moved.append(str(manager.wait(second, 60)))
        return real(*args)

    monkeypatch.setattr(job_selector, "render_job_selector", cancel_second)
    try:
        at.run()
        assert moved == ["cancelled"]
        box = _state_of(at.sidebar.selectbox(key="sidebar-job").label)
        assert (*_states(at, second), box) == ("queued",) * 3
        assert at.session_state["page-job-status"] == {second: "queued"}  # behind: the tick
        at.run()
        box = _state_of(at.sidebar.selectbox(key="sidebar-job").label)
        assert (*_states(at, second), box) == ("cancelled",) * 3
    finally:
        manager.cancel(first)
    assert manager.wait(first, 120) == "cancelled"


def test_the_timer_box_says_the_state_the_caption_names_on_every_page(store, app) -> None:
    """Issue 37: a cpu job's yellow box took its tense from the manifest, which lags the job
    manager: a page drawn in that lag said "Every time this job records will be ..." under a
    caption reading running, the next page "Every time here is ...". Here the ended job's
    manifest is set back to "queued": on each page the box is the one of the state its
    caption names (the manager's), the same words on both."""
    from profiling_worker.bundle.loader import load_bundle
    from profiling_worker.bundle.schema.manifest import update_manifest

    from app.core.provenance import host_timer_warning

    at = app()
    job = submit_cpu_matmul(at, "64", 3)
    assert cached.job_manager().wait(job, 120) == "done"
    update_manifest(store["results"] / job, lambda m: {**m, "status": "queued"})
    threads = load_bundle(store["results"] / job).cpu_threads
    said = []
    for page in ("sweep", "stability"):
        if page != "sweep":
            at.switch_page(f"app_pages/{page}.py")
        at.run()
        caption, _ = _states(at, job)
        boxes = [str(w.value) for w in at.main.warning]
        assert caption == "done" and host_timer_warning(JobStatus(caption), threads) in boxes, \
            (page, caption, boxes)
        said.append([b for b in boxes if b.startswith("Every time")])
    assert said[0] == said[1], said
