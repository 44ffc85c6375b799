"""app/ui/gc_freeze.py (issue 40): once per process, a collection then ``gc.freeze``, so later
full collections leave out what the server held by then; the prefetch thread calls it after its
charts."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from app.ui import cached, gc_freeze, prefetch


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """The process as the test found it: nothing frozen, :func:`freeze_once` not yet called."""
    gc_freeze._frozen.clear()
    yield
    gc.unfreeze()
    gc_freeze._frozen.clear()


def test_freeze_once_collects_then_freezes_once(unfrozen, monkeypatch) -> None:
    collected: list[int] = []
    collect = gc.collect
    monkeypatch.setattr(gc, "collect", lambda *a: collected.append(1) or collect(*a))
    tracked = len(gc.get_objects())
    gc_freeze.freeze_once()
    assert collected == [1]
    assert gc.get_freeze_count() > 0
    assert len(gc.get_objects()) < tracked  # a full collection now scans only what comes later
    gc_freeze.freeze_once()
    assert collected == [1]  # once per process


def test_the_prefetch_thread_freezes_after_its_charts(monkeypatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(cached, "bundle_for", lambda job_id: calls.append("bundle") or "b")
    monkeypatch.setattr(prefetch, "charts", lambda bundle: calls.append(f"charts {bundle}"))
    monkeypatch.setattr(gc_freeze, "freeze_once", lambda: calls.append("freeze"))
    prefetch._run("b")  # the bundle the starting script run read (prefetch._start_once)
    prefetch._run(None)  # none read: nothing to compute, the freeze all the same
    assert calls == ["charts b", "freeze", "freeze"]  # the thread reads no bundle itself
