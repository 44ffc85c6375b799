"""Plausibility notes (issue 11) are shown on every page that draws the values they are about."""

from __future__ import annotations

from pathlib import Path

import pytest
from apptest_helpers import texts

BUNDLED = Path(__file__).resolve().parents[2] / "app" / "bundled"
ABOVE_ROOF_JOB = "h200-cupti-elementwise"  # two points 11 % and 23 % above the DRAM roof


@pytest.mark.parametrize("page", ["bound_roofline", "memory", "results", "one_kernel"])
def test_pages_drawing_bandwidth_show_the_above_roof_note(page, store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(BUNDLED))
    at = app(page, query={"job": ABOVE_ROOF_JOB})
    assert not at.exception, at.exception
    shown = texts(at)
    assert "Plausibility check: 2 note(s)" in shown
    assert "above the 4,800 GB/s DRAM roof" in shown and "L2-warm data (CUPTI backend)" in shown


def test_sweep_shows_the_roof_note_for_bandwidth_not_for_time(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(BUNDLED))
    at = app("sweep", query={"job": ABOVE_ROOF_JOB})
    assert not at.exception, at.exception
    assert "Plausibility check" not in texts(at)
    at.segmented_control(key="sweep-quantity").set_value("gbps").run()
    assert not at.exception, at.exception
    assert "L2-warm data" in texts(at)


def test_stability_shows_an_interval_below_zero(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(BUNDLED))
    at = app("stability", query={"job": "h200-ncu-softmax"})
    at.selectbox(key="stability-metric").set_value("dram__bytes_write.sum").run()
    assert not at.exception, at.exception
    shown = texts(at)
    assert "below zero" in shown
    assert "dram\\_\\_bytes\\_write.sum" in str(at.warning[0].value)  # escaped for Markdown
