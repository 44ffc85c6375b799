"""The Compare, backends and thermal pickers follow the job selected in the sidebar (a fresh
user's find: they kept the values of the job shown before), unless the user picked otherwise
on that page for that job. AppTest reads the server's values: the browser's own copy of a
widget's value, which kept the old pair there, is checked by
tests/e2e/test_pickers_follow_job.py."""

from __future__ import annotations

from apptest_helpers import JOB_ID
from test_page_compare import in_time
from tests.scenarios import SCENARIOS


def _pair(at, page: str, sides: tuple[str, str]) -> tuple[str, str]:
    assert not at.exception, at.exception
    return tuple(at.selectbox(key=f"{page}-{side}").value for side in sides)  # type: ignore


def _select(at, job: str):
    return at.selectbox(key="sidebar-job").set_value(job).run()


def test_compare_pickers_follow_the_sidebar_job(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    sides = ("baseline", "candidate")
    # the selected job and the job most like it, the earlier of the two the baseline
    elementwise = in_time("h200-ncu-elementwise", "h200-ncu-elementwise-cache-none")
    at = app("compare", query={"job": "h200-ncu-elementwise"})
    assert _pair(at, "compare", sides) == elementwise
    _select(at, "h200-ncu-j1-fp16")
    assert _pair(at, "compare", sides) == in_time("h200-ncu-gate-base", "h200-ncu-j1-fp16")
    # the user's own pick for this job stays with this job (the job itself its candidate)
    at.selectbox(key="compare-baseline").set_value("h200-cupti-j1-fp16").run()
    assert _pair(at, "compare", sides) == ("h200-cupti-j1-fp16", "h200-ncu-j1-fp16")
    _select(at, "h200-ncu-elementwise")
    assert _pair(at, "compare", sides) == elementwise
    _select(at, "h200-ncu-j1-fp16")
    assert _pair(at, "compare", sides) == ("h200-cupti-j1-fp16", "h200-ncu-j1-fp16")


def test_backends_pickers_follow_the_sidebar_job(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    sides = ("ncu", "cupti")
    at = app("backends", query={"job": "h200-ncu-j1-fp16"})
    assert _pair(at, "backends", sides) == ("h200-ncu-j1-fp16", "h200-cupti-j1-fp16")
    _select(at, "h200-cupti-matmul-sweep")
    assert _pair(at, "backends", sides) == ("h200-ncu-matmul-sweep", "h200-cupti-matmul-sweep")
    # a pick of another ncu job on the page, for this job, is kept when the user comes back
    at.selectbox(key="backends-ncu").set_value("h200-ncu-gate-base").run()
    picked = _pair(at, "backends", sides)
    assert picked[0] == "h200-ncu-gate-base"
    _select(at, "h200-ncu-j1-fp16")
    assert _pair(at, "backends", sides) == ("h200-ncu-j1-fp16", "h200-cupti-j1-fp16")
    _select(at, "h200-cupti-matmul-sweep")
    assert _pair(at, "backends", sides) == picked


def test_thermal_pair_pickers_follow_the_sidebar_job(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    sides = ("thermal-a", "thermal-b")
    at = app("clocks_thermal", query={"job": "h200-cupti-stability"})
    assert _pair(at, "clocks", sides) == ("h200-cupti-stability",
                                          "h200-cupti-stability-thermal-off")
    _select(at, "h200-cupti-stability-thermal-off")
    assert _pair(at, "clocks", sides) == ("h200-cupti-stability-thermal-off",
                                          "h200-cupti-stability")


def _not_shown(at) -> list[str]:
    return [i.value for i in at.info if "is not shown here" in i.value]


def test_a_page_that_cannot_show_the_sidebar_job_says_which_it_shows_and_why(
        seeded, monkeypatch, app) -> None:
    """A fresh user's find: with a job selected that a comparing page cannot use, the page showed
    another pair without a word. It now names the sidebar's job, why, and what it shows; a page
    that shows the selected job says nothing."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("backends", query={"job": JOB_ID})  # the real worker's cpu job
    assert not at.exception
    (said,) = _not_shown(at)
    assert f"`{JOB_ID}`" in said and "it is a job of the cpu backend. Shown: `h200-ncu-" in said
    at = app("compare", query={"job": JOB_ID})
    assert not _not_shown(at)
    at = app("backends", query={"job": "h200-ncu-j1-fp16"})
    assert not _not_shown(at)
    at = app("clocks_thermal", query={"job": "h200-ncu-j1-fp16"})
    (said,) = _not_shown(at)
    assert "no finished twin of the same kernels and configs with another thermal" in said
    assert "`h200-cupti-stability`" in said and "`h200-cupti-stability-thermal-off`" in said
    at = app("compare", query={"job": "h200-ncu-j1-fp16"})
    assert not _not_shown(at)
