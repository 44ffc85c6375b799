"""Energy per kernel on what the H200 recorded (device run h200 1205-s7run1,
benchmarks/h200/1205-s7run1): the counter's measured update period is the one the view assumes,
docs/energy-h200.md holds the figures benchmarks/energy_doc.py recomputes, and the recorded
job's rows are told not to hold (its windows span fewer than 10 counter updates)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from profiling_worker.bundle.loader import load_bundle
from app.core.views import energy as E

REPO = Path(__file__).resolve().parents[3]
RUN = REPO / "benchmarks" / "h200" / "1205-s7run1"


def test_the_measured_update_period_is_the_one_the_view_uses() -> None:
    figures = json.loads((RUN / "energy_counter.json").read_text(encoding="utf-8"))
    for state in ("idle", "busy"):
        assert figures[state]["update_period_ms_median"] == pytest.approx(E.COUNTER_UPDATE_MS,
                                                                           rel=0.02)


def test_the_docs_hold_the_recomputed_tables() -> None:
    spec = importlib.util.spec_from_file_location("energy_doc", REPO / "benchmarks" / "energy_doc.py")
    assert spec is not None and spec.loader is not None
    doc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(doc)

    page = (REPO / "docs" / "energy-h200.md").read_text(encoding="utf-8")
    figures = json.loads((RUN / "energy_counter.json").read_text(encoding="utf-8"))
    assert doc.counter_table(figures) in page
    assert doc.energy_table(RUN / "h200-cupti-collectors-energy") in page


def test_the_recorded_job_has_plausible_power_and_says_its_windows_are_too_short() -> None:
    frame = E.energy_frame(load_bundle(RUN / "h200-cupti-collectors-energy"))
    assert len(frame) == 3
    # between the idle draw measured in the same call (84 W) and the card's 700 W limit
    assert frame[E.POWER_W].between(84, 700).all()
    assert (frame[E.WINDOW_S] < 10 * E.COUNTER_UPDATE_MS / 1e3).all()
    assert not frame[E.HOLDS].any()
