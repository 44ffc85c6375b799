"""Each note once, where it applies (issue 37): the note that an older bundle's CI95 lower
bounds of DRAM bytes are shown cut at 0 sat on every page of the job, time-only pages
included; it belongs under a table that shows those bounds."""

from __future__ import annotations

import pytest
from apptest_helpers import texts, unescape

from tests.scenarios import SCENARIOS, scenario

JOB = "h200-ncu-elementwise-cache-none"  # 4 CI95_Lower of dram__bytes_write.sum below 0
CUT = "are shown cut at 0, as the worker writes them"


def _open(app, monkeypatch, page: str, **query: str):
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app(page, query={"job": JOB, **query})
    assert not at.exception, at.exception
    return at


def test_the_bundle_names_the_metrics_its_cut_note_is_about() -> None:
    assert scenario(JOB).restated_metrics == ("dram__bytes_write.sum",)
    assert scenario("h200-cupti-j1-fp16").restated_metrics == ()


@pytest.mark.parametrize("page", ["stability", "sweep", "bound_roofline", "kernels"])
def test_pages_without_the_cut_bounds_do_not_repeat_the_note(store, monkeypatch, app,
                                                            page) -> None:
    assert CUT not in texts(_open(app, monkeypatch, page))


def test_the_aggregated_table_says_it_once(store, monkeypatch, app) -> None:
    assert texts(_open(app, monkeypatch, "results")).count(CUT) == 1


def test_a_bundled_example_says_where_its_bounds_come_from(store, monkeypatch, app) -> None:
    """Issue 37: the bundled H200 example greeted a new user with a warning about itself ("were
    written before the worker cut CI95 lower bounds at 0"); the note says what the tables hold
    and how the page shows them, with no warning box."""
    at = _open(app, monkeypatch, "results")
    (note,) = [c.value for c in at.caption if CUT in unescape(c.value)]
    assert "hold 4 CI95_Lower values below 0 as recorded" in unescape(note)
    assert "written before" not in texts(at)
    assert not [w for w in at.warning if "CI95" in w.value]


def test_a_contended_cpu_job_says_its_contention_once_in_one_unit(store, app) -> None:
    """A real cpu job timed on a contended CPU (tests/contended_cpu.py): the page says the
    figures and what to do once, folded under one line of the warning over the chart, in
    seconds ("418 ms run-queue delay in 1.98 s" mixed ms and s; the advice was said in the
    sidebar and again in the box, a new user's find; the box's six lines then pushed the chart
    below the fold at 1000x700, another's). The advice is the manifest's field of its own,
    never cut off the message's text."""
    from app.core import spec_form
    from app.core.markdown import esc
    from app.core.share.job import (contention_figures, contention_line, contention_title,
                                    host_timer_note)
    from app.core.views.run_audit import job_evidence_text
    from profiling_worker.bundle.loader import load_bundle
    from profiling_worker.bundle.schema import backends as B
    from tests.contended_cpu import record_contended_job

    proc = record_contended_job(store["results"] / "busy")
    assert proc.returncode == 0, proc.stderr[-2000:]
    bundle = load_bundle(store["results"] / "busy")
    said = contention_line(bundle)  # the line over the chart, the fold's label and its box:
    assert said  # the app's words of the figures this job recorded
    at = app("stability", query={"job": "busy"})
    assert not at.exception, at.exception
    # one line over the chart, the fold's label (issue 37: a box of two lines and a fold put
    # the chart below the fold at 1000x700); the timer's warning, figures and advice inside
    assert contention_title(bundle) == said
    (fold,) = [e for e in at.expander if said in unescape(e.label)]
    assert [w.value for w in fold.warning] == [host_timer_note(bundle)]
    assert not [w for w in at.warning if said in unescape(w.value)]
    (box,) = [m.value for m in fold.markdown]
    assert box == contention_figures(bundle, esc, spec_form.in_form_words)
    shown = texts(at)
    assert_contention_said_once(at, bundle, said, job_evidence_text(bundle))
    # after its first letter, capitalised in the box; the torch threads named by the form's
    # label, not the spec's key (a sidebar user's find)
    advice = spec_form.in_form_words(B.CONTENTION_ADVICE)[1:]
    assert shown.count(advice) == 1 and advice in unescape(box)
    assert "cpu_threads" not in unescape(box) and "Torch threads (cpu backend)" in unescape(box)
    assert " ms " not in box  # its figures in seconds (the words: contention_note's)
    sweep = app("sweep", query={"job": "busy"})
    assert not sweep.exception, sweep.exception
    assert_contention_said_once(sweep, bundle, said, job_evidence_text(bundle))


def assert_contention_said_once(at, bundle, said: str, evidence: str) -> None:
    """Session 23's fresh user read a contended job's contention three times over its Size
    sweep: the warning's line, the fold's label ("Contention: its threads waited 0.25 x ...")
    and the chart's note ("for the whole job, host_contention: ..."). The line says it once,
    the fold's label names what is inside and states no figure, the run audit's notes name the
    runs flagged without the job-wide evidence again (``evidence``: job_evidence_text's)."""
    from app.core.share.job import CONTENDED, contention_title

    shown = texts(at) + "\n" + "\n".join(unescape(e.label) for e in at.expander)
    assert shown.count(said) == 1  # the fold's label
    assert shown.count(CONTENDED) == 1, shown  # the fold's box has the figures, not the words
    assert evidence.startswith("host_contention: ") and evidence not in shown
    assert "for the whole job, host_contention" not in shown
    (label,) = [e.label for e in at.expander if contention_title(bundle) in unescape(e.label)]
    assert not any(ch.isdigit() for ch in label)
    assert "host_contention" in shown  # the runs flagged are still named, by their check
