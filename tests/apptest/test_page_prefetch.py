"""The charts computed after a page's run for the bar's likely next pages (app/ui/prefetch.py,
issue 40): a later first visit of Stability, Kernels and One kernel finds what each computes
before its chart (and the frames of no options below it), and draws the same chart as without
the prefetch."""

from __future__ import annotations

import dataclasses
import threading

import pytest
import streamlit as st

from apptest_helpers import count_cache_misses, plotly_specs
from app.services import result_store
from app.ui import cached, panels, prefetch
from tests.scenarios import SCENARIOS

JOB = "h200-ncu-matmul-sweep"  # recorded on the H200; page_speed's clicks show it
PAGES = tuple(prefetch.BEFORE_CHART)
#: The prefetch's lists of what the pages compute before and below their chart (module, function)
BEFORE_CHART = tuple(call for page in PAGES for call in prefetch.BEFORE_CHART[page])
BELOW_CHART = tuple(call for page in PAGES for call in prefetch.BELOW_CHART[page])
NAMES = sorted(name for _, name in BEFORE_CHART + BELOW_CHART)


@pytest.fixture
def computed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of every call of :data:`BEFORE_CHART` and :data:`BELOW_CHART` made by
    app/ui/cached.py: a cache miss."""
    return count_cache_misses(monkeypatch, BEFORE_CHART + BELOW_CHART)


def _charts(app, calls: list[str]) -> dict[str, dict]:  # type: ignore[no-untyped-def]
    """Each page's first chart (figure JSON) on JOB, visited from the Size sweep; ``calls``
    emptied after the Size sweep's run (its chart note is ``chart_audit_notes`` of its own
    points, which no click computes)."""
    at = app(query={"job": JOB})
    calls.clear()
    out = {}
    for page in PAGES:
        at.switch_page(f"app_pages/{page}.py").run()
        assert not at.exception, (page, at.exception)
        out[page] = plotly_specs(at)[0]
    return out


@pytest.mark.parametrize("page", PAGES)
def test_a_visit_computes_what_the_prefetch_lists_for_the_page(store, monkeypatch, computed,
                                                                app, page) -> None:
    """Each page alone, first visited: it computes the prefetch's list of it, no more, no
    less (a page that stopped drawing a table the prefetch still computed failed only the test
    below, in CI)."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    st.cache_data.clear()
    at = app(query={"job": JOB})
    computed.clear()
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, (page, at.exception)
    listed = prefetch.BEFORE_CHART[page] + prefetch.BELOW_CHART[page]
    assert sorted(set(computed)) == sorted(name for _, name in listed), page


def test_a_prefetched_page_computes_none_of_them(store, monkeypatch, computed,
                                                             app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    st.cache_data.clear()
    plain = _charts(app, computed)
    assert sorted(set(computed)) == NAMES  # without the prefetch, the visits compute them all
    st.cache_data.clear()
    computed.clear()
    bundle = cached.bundle_for(JOB)
    assert bundle is not None
    prefetch.charts(bundle)
    assert sorted(computed) == NAMES  # each once
    computed.clear()
    assert _charts(app, computed) == plain
    assert computed == []  # every one a cache hit


def test_start_computes_once_per_job_and_only_when_enabled(store, monkeypatch) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    info = next(b for b in result_store.list_bundles(store["results"], SCENARIOS)[0]
                if b.job_id == JOB)
    ran: list[str] = []
    done = threading.Event()
    readers: list[str] = []  # the threads that read the bundle
    bundle_for = cached.bundle_for

    def read(job_id: str | None) -> object:
        readers.append(threading.current_thread().name)
        return bundle_for(job_id)

    def run(bundle) -> None:  # type: ignore[no-untyped-def]
        ran.append(bundle.job_id)
        done.set()

    monkeypatch.setattr(prefetch, "_run", run)
    monkeypatch.setattr(cached, "bundle_for", read)
    prefetch._start_once.clear()
    prefetch.start(info)  # not enabled: a plain `streamlit run`, an AppTest
    assert ran == []
    prefetch.enable()
    try:
        prefetch.start(info)
        prefetch.start(info)  # the same job and manifest: started already
        assert done.wait(60), "the prefetch thread did not run"
    finally:
        prefetch._enabled.clear()
    assert ran == [JOB]
    # read once, by the caller (a script run): a read in the thread showed a cache miss's
    # spinner there, which logged "missing ScriptRunContext"
    assert readers == [threading.current_thread().name]


def test_a_job_over_the_config_bound_or_without_configs_is_not_prefetched(store,
                                                                           monkeypatch) -> None:
    """A 1,000-config sweep's prefetch held the GIL for 3 s of CPU and slowed the next page
    load (prefetch.MAX_CONFIGS); an imported job records no configs, so its size is unknown."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    info = next(b for b in result_store.list_bundles(store["results"], SCENARIOS)[0]
                if b.job_id == JOB)
    configs = len(info.spec.configs)  # type: ignore[union-attr]
    ran: list[str] = []
    monkeypatch.setattr(prefetch, "_run", ran.append)
    prefetch._start_once.clear()
    prefetch.enable()
    try:
        monkeypatch.setattr(prefetch, "MAX_CONFIGS", configs - 1)
        prefetch.start(info)
        monkeypatch.setattr(prefetch, "MAX_CONFIGS", configs)
        prefetch.start(dataclasses.replace(info, manifest={**info.manifest, "spec": None}))
    finally:
        prefetch._enabled.clear()
    assert ran == []  # no thread was started for either


def test_every_table_the_prefetch_prepares_is_one_a_visit_draws(store, monkeypatch,
                                                                 app) -> None:
    """prefetch.table_frames builds the pages' tables as the pages do: a page that changed one
    (another column, another order) would leave the prefetch preparing a table nobody draws."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    bundle = cached.bundle_for(JOB)
    assert bundle is not None
    ahead = {panels.frame_digest(frame): len(frame.columns)
             for frame in prefetch.table_frames(bundle)}
    drawn: list[str] = []
    digest = panels.frame_digest

    def recorded(frame):  # type: ignore[no-untyped-def]
        drawn.append(digest(frame))
        return drawn[-1]

    monkeypatch.setattr(panels, "frame_digest", recorded)
    _charts(app, [])
    assert len(ahead) == 8  # Stability 2 (its chart's, the per-run chart's), Kernels 4, One
    # kernel 2 (its launches, every value)
    assert set(ahead) <= set(drawn), sorted(set(ahead) - set(drawn))
