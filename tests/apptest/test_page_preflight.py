"""The sidebar's Pre-flight: the button queues a quick pass of the form's job (cpu here: the host
timer, said on screen), and the expander shows its findings and estimate before any long run."""

from __future__ import annotations

from apptest_helpers import texts, unescape, wait_until
# at import time, where "conftest" is this folder's: imported inside a test of a whole-suite run,
# it resolves to the last conftest pytest loaded (tests/unit/app's)
from apptest_helpers import JOB_ID, record_cpu_job
from test_page_auto_runs import AUTO_JOB_ID, AUTO_SPEC

from profiling_worker.bundle.schema.manifest import read_manifest
from app.core import numbers
from app.ui import cached, state


def test_preflight_button_queues_a_pass_and_shows_its_findings(store, app) -> None:
    at = app()
    at.multiselect(key="builder-kernels").set_value(["matmul"])
    at.selectbox(key="builder-backend").set_value("cpu")
    at.text_input(key="builder-sizes").set_value("32, 64")
    at.text_input(key="builder-runs").set_value("50")
    at.button(key="builder-preflight").click().run()
    assert not at.exception, at.exception
    entry = at.session_state[state.BUILDER_PREFLIGHT]
    assert entry["planned"]["runs"] == 50 and entry["planned"]["backend"] == "cpu"
    assert cached.job_manager().wait(entry["job"], 120) == "done"
    at.run()
    assert not at.exception, at.exception
    shown = texts(at)
    assert "Measured with cpu: host wall-clock, not GPU" in shown
    assert "The host timer sees no GPU kernels" in shown
    assert "The same launches in the first and second call and in every config." in shown
    # issue 37: the runs as the job panel counts them, and the launches profiled in them
    # (3 regions of matmul, one launch each) beside them, each said for what it counts
    assert ("Planned job (cpu):** 100 runs (2 configs × 50 runs per config × 1 kernel, as "
            "the job panel counts them), 300 profiled launches in them") in shown
    # issue 37: a cpu job's time is estimated from this pass's host time, not the H200 jobs
    assert "estimate for the cpu backend: this pass's host time" in shown
    assert "estimate from the bundled H200 jobs" not in shown
    assert "Pre-flight pass · matmul · cpu" in shown  # the job panel tells it from a job
    counts = next(d.value for d in at.dataframe if "FirstCallLaunches" in d.value.columns)
    assert len(counts) == 6  # fp32, fp16, bf16 x n=32, 64
    assert (counts["FirstCallLaunches"] == 1).all() and (counts["SecondCallLaunches"] == 1).all()
    quick = cached.job_manager().get(entry["job"])
    assert quick.spec.runs == 2 and quick.spec.warmup == 0  # the first call is the first ever
    # no warning about a setting the user never made (the pass's own thermal_mode was one)
    assert not [w for w in read_manifest(quick.path).get("warnings", []) if "thermal" in w]


def test_preflight_refuses_a_bad_form_with_field_errors(store, app) -> None:
    at = app()
    at.selectbox(key="builder-backend").set_value("cpu")
    at.text_input(key="builder-sizes").set_value("-3")
    at.button(key="builder-preflight").click().run()
    assert not at.exception
    assert state.BUILDER_PREFLIGHT not in at.session_state
    assert at.error, "the size error is shown, as Run shows it"
    # issue 37: the note under the errors said "Found at the last Run" after Pre-flight
    assert "Found at the last Pre-flight" in texts(at) and "last Run" not in texts(at)
    at.button(key="builder-submit").click().run()
    assert "Found at the last Run" in texts(at) and "last Pre-flight" not in texts(at)


def test_an_ncu_job_of_auto_runs_asks_cupti_for_its_runs(store, app) -> None:
    """No GPU here: the pilot's CUPTI pass is refused with the reason, before anything queues."""
    at = app()
    # outside the form, as in a browser: its own run, where the sizes take ncu's
    at.selectbox(key="builder-backend").set_value("ncu").run()
    at.text_input(key="builder-runs").set_value("auto")
    at.button(key="builder-preflight").click().run()
    assert not at.exception, at.exception
    assert state.BUILDER_PREFLIGHT not in at.session_state
    shown = texts(at)
    assert "cupti cannot run here: no NVIDIA GPU visible" in shown
    at.button(key="builder-submit").click().run()  # Run itself says what to do
    assert "press Pre-flight in the sidebar" in texts(at)


def test_preflights_errors_are_checked_again_by_preflight_not_by_run(store, app) -> None:
    """Issue 37: errors Pre-flight found were checked again, once the kernel choice changed,
    by Run's rules: the pilot's "cupti cannot run here" became Run's "press Pre-flight", under
    "Found at the last Pre-flight". They are checked again by the button that found them."""
    at = app()
    at.selectbox(key="builder-backend").set_value("ncu").run()
    at.text_input(key="builder-runs").set_value("auto")
    at.button(key="builder-preflight").click().run()
    assert "cupti cannot run here" in texts(at)
    at.multiselect(key="builder-kernels").set_value(["matmul", "fusion"]).run()  # no button
    assert not at.exception, at.exception
    shown = texts(at)
    assert "cupti cannot run here" in shown and "Found at the last Pre-flight" in shown
    assert "press Pre-flight in the sidebar" not in shown, shown


def test_the_pilots_runs_fill_runs_with_one_click(store, app, tmp_path) -> None:
    """A done pass of runs "auto" (here a real cpu job standing in for the GPU's CUPTI pass)
    shown as an ncu job's pilot: the runs it took, and "Use N runs" puts N in Runs."""
    import shutil

    src = record_cpu_job(tmp_path / AUTO_JOB_ID, AUTO_SPEC)
    shutil.copytree(src, store["results"] / AUTO_JOB_ID)
    at = app()
    form = {"kernels": ["matmul"], "sizes": "32, 64", "runs": "auto", "backend": "ncu",
            "metric_preset": "bound", "size_preset": "typed", "annotations": ["fp32"]}
    at.session_state[state.BUILDER_PREFLIGHT] = {
        "job": AUTO_JOB_ID, "ncu_form": form,
        "planned": {**AUTO_SPEC, "configs": [{"n": 32}, {"n": 64}]}}
    at.run()
    assert not at.exception, at.exception
    shown = texts(at)
    assert "the configs needed 6, 6 runs for a CI95 of ± 0.01 %" in shown
    assert "Nsight Compute gives every config the same runs: **6**" in shown
    assert "Planned job (ncu):** 12 runs (2 configs × 6 runs per config" in shown
    assert "report about" in shown
    at.button(key="builder-preflight-use-runs").click().run()
    assert not at.exception, at.exception
    assert at.text_input(key="builder-runs").value == "6"


def test_a_one_config_preflight_says_1_config(store, app) -> None:
    """A fresh user's find: "1 configs". Every count in the form's texts is said in its number
    (number_text.counted), one size and one kernel alike."""
    at = app()
    at.multiselect(key="builder-kernels").set_value(["matmul"])
    at.selectbox(key="builder-backend").set_value("cpu")
    at.text_input(key="builder-sizes").set_value("32")
    at.text_input(key="builder-runs").set_value("1")
    at.button(key="builder-preflight").click().run()
    assert not at.exception, at.exception
    entry = at.session_state[state.BUILDER_PREFLIGHT]
    assert cached.job_manager().wait(entry["job"], 120) == "done"
    at.run()
    shown = texts(at)
    assert "Planned job (cpu):** 1 run (1 config × 1 run per config × 1 kernel, as " in shown
    assert "1 configs" not in shown and "1 runs" not in shown


#: A size whose one call takes long on the cpu backend (minutes at the seeded job's rate: asked
#: about, :data:`app.services.call_time.ASK_ABOVE_CALL_S`) while all three regions' inputs fit
#: the memory check on any test host (2.7 GiB; n=40000, the fresh user's, holds 29.8 GiB and is
#: refused by it first since session 25).
LONG_N = 12000


def _huge_cpu_form(at, sizes: str = str(LONG_N)) -> None:
    """A fresh user's form (issue 37): matmul on the cpu backend at ``sizes``, 10 runs."""
    at.multiselect(key="builder-kernels").set_value(["matmul"])
    at.selectbox(key="builder-backend").set_value("cpu")
    at.text_input(key="builder-sizes").set_value(sizes)
    at.text_input(key="builder-runs").set_value("10")


def _spec_of(sizes: list[int]):
    """The spec the form of :func:`_huge_cpu_form` makes (all three regions of matmul)."""
    from profiling_worker.bundle.schema.spec import validate_spec
    return validate_spec({"kernels": ["matmul"], "configs": [{"n": n} for n in sizes],
                          "runs": 10, "backend": "cpu"})


def test_a_preflight_of_hour_long_calls_asks_with_this_hosts_rate(seeded, app) -> None:
    """Issue 37: Pre-flight of n=40000 on the cpu backend started at once, one call of about
    11 h. It now asks first, with the call's FLOP and the best rate a finished job of this host
    measured (the seeded real cpu job), and Change queues nothing; Run asks the same."""
    from app.services import call_time
    at = app()
    _huge_cpu_form(at)
    at.button(key="builder-preflight").click().run()
    assert not at.exception, at.exception
    call = call_time.largest_call(_spec_of([LONG_N]), seeded["results"], seeded["bundled"])
    assert call is not None and call.rate is not None and call.rate.job_id == JOB_ID
    assert (call.seconds or 0) > call_time.ASK_ABOVE_CALL_S  # the premise: a long call
    said = [w.value for w in at.warning if call.rate.text() in w.value]
    assert said and call.what() in said[0] and "Pre-flight again" in said[0], texts(at)
    assert state.BUILDER_PREFLIGHT not in at.session_state
    at.button(key="builder-change").click().run()
    assert cached.job_manager().snapshot() == []
    assert not [w for w in at.warning if call.rate.text() in w.value]
    at.button(key="builder-submit").click().run()  # Run asks too, with the job's size
    said = [w.value for w in at.warning if call.rate.text() in w.value]
    assert said and "Run anyway (or Run again)" in said[0], texts(at)
    assert cached.job_manager().snapshot() == []


def test_preflights_run_anyway_queues_its_pass_once(seeded, app, monkeypatch) -> None:
    """The question's Run anyway queues the pass (not the job), once; the threshold is lowered
    so that the pass is a quick one of n=32."""
    from app.services import call_time
    monkeypatch.setattr(call_time, "ASK_ABOVE_CALL_S", 0.0)
    at = app()
    _huge_cpu_form(at, "32")
    at.button(key="builder-preflight").click().run()
    assert [w for w in at.warning if "Pre-flight again" in w.value], texts(at)
    at.button(key="builder-run-anyway").click().run()
    assert not at.exception, at.exception
    queued = cached.job_manager().snapshot()
    assert len(queued) == 1 and queued[0].job_id == at.session_state[state.BUILDER_PREFLIGHT]["job"]
    assert queued[0].spec.runs == 2  # the pass's calls, not the planned job's 10 runs
    assert not [w for w in at.warning if "Pre-flight again" in w.value]


def test_with_no_earlier_job_no_rate_is_invented(store, app) -> None:
    """No finished cpu job here: nothing estimates a call's time, so Pre-flight does not ask;
    beside the job's size question every door states the FLOP count and that no rate is known:
    the sidebar in a caption under its question (its answers stay in the window:
    tests/e2e/test_nothing_cut.py), the command line and the agent door after it."""
    from app.services import call_time
    question, note = call_time.call_check(_spec_of([LONG_N]), store["results"], store["bundled"])
    assert question is None and note is not None and "no rate is known" in note
    at = app()
    _huge_cpu_form(at, "1..2000 +1")
    at.button(key="builder-submit").click().run()
    assert not at.exception, at.exception
    spec = _spec_of(list(range(1, 2001)))
    call = call_time.largest_call(spec, store["results"], store["bundled"])
    assert call is not None and call.rate is None
    from app.sidebar.job_builder import ANSWERS
    asked = [w.value for w in at.sidebar.warning if ANSWERS in w.value]
    assert asked and "no rate is known" not in asked[0]  # the size question, asked alone
    _, note = call_time.call_check(spec, store["results"], store["bundled"])
    assert note is not None and call.what() in note
    assert note in [unescape(c.value) for c in at.sidebar.caption]  # under it, a caption
    told = call_time.ask_before(spec, "size?", store["results"], store["bundled"])
    assert told.question == "size?" and told.note == note
    assert told.text() == f"size? {note}"  # the command line's and the agent door's text
    at.button(key="builder-change").click().run()
    assert note not in [unescape(c.value) for c in at.sidebar.caption]  # gone with it
    assert cached.job_manager().snapshot() == []


def test_a_run_click_reads_the_pages_listing_and_each_jobs_rates_once(seeded, app,
                                                                      monkeypatch) -> None:
    """Session 24's review: call_time kept a cache of its own (a module dict of rates) and
    every Run click listed the whole result store again. A click now reads the listing its
    page was drawn from (app.ui.cached.last_listing: a run with a click lists the store as
    often as one without) and each job's rates once per manifest (app.ui.cached.job_rates)."""
    from app.services import call_time, result_store
    listings, reads = [], []
    real_list, real_rates = result_store.list_bundles, call_time.job_rates
    monkeypatch.setattr(result_store, "list_bundles",
                        lambda *a, **k: listings.append(a) or real_list(*a, **k))
    monkeypatch.setattr(call_time, "job_rates", lambda path: reads.append(path)
                        or real_rates(path))
    at = app()
    before = len(listings)
    at.run()
    plain = len(listings) - before  # a run without a click
    _huge_cpu_form(at)  # set at the click (a run of its own would reset the sizes to cpu's)
    before = len(listings)
    at.button(key="builder-submit").click().run()  # asks: the seeded job's rate, a long call
    assert not at.exception, at.exception
    assert len(listings) - before == plain, "the click listed the store again"
    assert [w for w in at.sidebar.warning if JOB_ID in w.value], texts(at)
    at.button(key="builder-change").click().run()
    at.button(key="builder-submit").click().run()  # asks again: the rates read before
    asked = [w.value for w in at.sidebar.warning if JOB_ID in w.value]
    assert asked, texts(at)
    assert [p.name for p in reads] == [JOB_ID]


def _in_order(node) -> list[str]:  # type: ignore[no-untyped-def]
    """The texts under ``node`` in the order the page draws them."""
    out = []
    for child in getattr(node, "children", {}).values():
        value = getattr(child, "value", None)
        if isinstance(value, str):
            out.append(value)
        out += _in_order(child)
    return out


def test_a_call_no_job_gives_a_rate_for_is_said_unknown_under_run(store, app) -> None:
    """A fresh store (issue 37): n=40000 on the cpu backend, about 11 h a call, was queued
    without a word, since no finished job gives a rate and no rate is invented. Run now says
    under Run, while the job is queued or running, that the call's time is unknown
    and why (call_time.call_check's note); a small job stands in for it here."""
    from app.services import call_time
    at = app()
    _huge_cpu_form(at, "32")
    at.text_input(key="builder-runs").set_value("1")
    at.button(key="builder-submit").click().run()
    assert not at.exception, at.exception
    (job,) = cached.job_manager().snapshot()
    _, note = call_time.call_check(job.spec, store["results"], store["bundled"])
    assert note is not None and "no rate is known" in note
    # the click's run drew the panel ms after the submit; the worker takes a second to start
    assert note in [unescape(c.value) for c in at.sidebar.caption], texts(at)
    # under Run, above the job panel's cards and its notice (session 25: it was below them
    # all, y 1426 px at 1000x700); the FLOP count as the pages write one, no annotation named
    said = unescape("\n".join(_in_order(at.sidebar)))
    form = said.index("**New job**")  # the form's head; the Job box above names the job too
    assert form < said.index(note) < said.index(job.job_id, form)  # the job's card after it
    call = call_time.largest_call(job.spec, store["results"], store["bundled"])
    assert call is not None and numbers.flop_text(call.flop) in note
    assert "e+" not in note and f" {call.annotation} " not in note
    assert cached.job_manager().wait(job.job_id, 120) == "done"
    at.run()
    assert note not in [unescape(c.value) for c in at.sidebar.caption]  # ended: not said


def test_a_recorded_pass_reads_as_a_pass_in_a_fresh_app(store, app) -> None:
    """Issue 37: a Pre-flight pass read "Pre-flight pass" in the job panel while it ran and
    plain "done" after a server restart (History, the Job box, the panel's store list). Its
    kind comes from its recorded spec: a pass recorded by the worker, in an app whose job
    manager never ran it, says it wherever its status is said, as its card said it."""
    from apptest_helpers import TINY_SPEC

    from profiling_worker.bundle.schema.spec import validate_spec
    from app.core import preflight
    from app.ui.state import LABEL_SEP

    quick = preflight.preflight_spec(validate_spec(TINY_SPEC))
    record_cpu_job(store["results"] / "pass-1", quick.to_json())
    at = app("history")
    at.sidebar.selectbox(key="sidebar-job").set_value("pass-1").run()
    assert not at.exception, at.exception
    said = ["done", preflight.PASS_WORDS]  # the status, then the kind
    box = at.sidebar.selectbox(key="sidebar-job")
    assert box.label.split(LABEL_SEP)[1:] == said, box.label
    (entry,) = [o for o in box.options if o.startswith("pass-1")]
    assert entry.split(LABEL_SEP)[3:] == said, entry
    (line,) = [unescape(str(m.value)) for m in at.sidebar.markdown if "pass-1" in str(m.value)]
    assert f"**done**{LABEL_SEP}{preflight.PASS_WORDS}{LABEL_SEP}matmul{LABEL_SEP}cpu" in line
    table = at.dataframe[0].value
    assert dict(zip(table["Job"], table["Status"]))["pass-1"] == LABEL_SEP.join(said)


def test_the_no_rate_note_goes_on_the_panels_run_after_its_job_ends(store, app,
                                                                      monkeypatch) -> None:
    """Issue 37 (session 25's helpers): the no-rate note under Run is drawn with the form, and
    the job panel's fragment reruns the app only for a job the page named that moved on
    (job_status.page_behind) or when no job is left running. With the Job box on another
    job and a job of another tab queued after the note's, the note stood after its job ended
    until the form was drawn again. It names its job to the panel: the panel's first run
    after the job ended asks for the app's rerun, which draws no note."""
    from types import SimpleNamespace

    from profiling_worker.bundle.schema.spec import validate_spec
    from app.ui import job_status

    other = record_cpu_job(store["bundled"] / "scale-example",  # no rate for matmul
                           {"kernels": ["scale"], "configs": [{"n": 32}], "runs": 2,
                            "backend": "cpu"})
    manager = cached.job_manager()
    long = {"kernels": ["matmul"], "annotations": ["fp32"], "runs": 5000, "backend": "cpu"}
    ahead = manager.submit(validate_spec({**long, "configs": [{"n": 256}]}))  # another tab's
    wait_until(lambda: manager.get(ahead).status == "running")
    at = app()
    _huge_cpu_form(at, "32")
    at.text_input(key="builder-runs").set_value("1")
    at.button(key="builder-submit").click().run()
    noted = at.session_state[state.BUILDER_NOTICE]
    after = manager.submit(validate_spec({**long, "configs": [{"n": 128}]}))  # another tab's
    at.sidebar.selectbox(key="sidebar-job").set_value(other.name).run()  # the user looks away
    assert not at.exception, at.exception
    note = at.session_state[state.BUILDER_NOTICE_NOTE][1]
    assert note in [unescape(c.value) for c in at.sidebar.caption], texts(at)
    assert manager.get(noted).status == "queued"  # behind the first job: still to run
    manager.cancel(ahead)
    assert manager.wait(noted, 120) == "done"
    assert manager.get(after).active  # a job still queued or running: no rerun for the end
    named = {state.PAGE_JOB_STATUS: at.session_state[state.PAGE_JOB_STATUS]}
    monkeypatch.setattr(job_status, "st", SimpleNamespace(session_state=named))
    assert job_status.page_behind(manager.snapshot())  # the panel's run: the app's rerun
    monkeypatch.undo()
    at.run()
    assert not at.exception, at.exception
    assert note not in [unescape(c.value) for c in at.sidebar.caption]
    manager.cancel(after)
    manager.wait(after, 60)


def test_a_waiting_pass_is_said_in_the_job_panels_state(store, app) -> None:
    """Issue 37: the Pre-flight box said "running" of a pass queued behind a job, reading the
    manifest; it says the job manager's state, as the pass's card in the job panel does, also
    when the manifest says another, and a cancelled pass as cancelled."""
    from apptest_helpers import submit_cpu_matmul

    from profiling_worker.bundle.schema.manifest import JobStatus, update_manifest

    def box(at) -> str:  # type: ignore[no-untyped-def]
        (said,) = [unescape(str(b.value)) for b in [*at.sidebar.info, *at.sidebar.error]
                   if "Pre-flight" in str(b.value)]
        return said

    at = app()
    first = submit_cpu_matmul(at, "512", 5000)  # minutes of runs: the pass waits
    manager = cached.job_manager()
    at.text_input(key="builder-sizes").set_value("32")
    at.button(key="builder-preflight").click().run()
    quick = at.session_state[state.BUILDER_PREFLIGHT]["job"]
    try:
        assert manager.get(quick).status == JobStatus.QUEUED
        update_manifest(store["results"] / quick, lambda m: {**m, "status": "running"})
        at.run()
        assert f"Pre-flight job {quick} is {JobStatus.QUEUED} (" in box(at)
        manager.cancel(quick)
        assert manager.wait(quick, 60) == JobStatus.CANCELLED
        update_manifest(store["results"] / quick, lambda m: {**m, "status": "running"})
        at.run()
        assert box(at).startswith(f"Pre-flight {JobStatus.CANCELLED}:")
    finally:
        manager.cancel(first)
    assert manager.wait(first, 120) == JobStatus.CANCELLED
