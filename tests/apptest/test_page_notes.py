"""Plausibility notes (issue 11) are shown on every page that draws the values they are about."""

from __future__ import annotations

import pytest
from apptest_helpers import texts
from tests.scenarios import SCENARIOS

ABOVE_ROOF_JOB = "h200-cupti-elementwise-cache-none"  # two points 12 % and 27 % above the roof


@pytest.mark.parametrize("page", ["bound_roofline", "memory", "results", "one_kernel"])
def test_pages_drawing_bandwidth_show_the_above_roof_note(page, store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app(page, query={"job": ABOVE_ROOF_JOB})
    assert not at.exception, at.exception
    shown = texts(at)
    assert "Plausibility check: 2 notes" in shown
    assert "above the 4,800 GB/s DRAM roof" in shown and "L2-warm data (" in shown


def test_sweep_shows_the_roof_note_for_bandwidth_not_for_time(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("sweep", query={"job": ABOVE_ROOF_JOB})
    assert not at.exception, at.exception
    assert "Plausibility check" not in texts(at)
    at.segmented_control(key="sweep-quantity").set_value("gbps").run()
    assert not at.exception, at.exception
    assert "L2-warm data" in texts(at)


def test_stability_intervals_of_bytes_stay_above_zero(store, monkeypatch, app) -> None:
    """Issue 11, case 5 on the page: the bundle's stored interval of dram__bytes_write.sum went
    below zero (some runs write 0 bytes); the page shows it by the one method."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("stability", query={"job": "h200-ncu-softmax"})
    at.selectbox(key="stability-metric").set_value("dram__bytes_write.sum").run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert (table["CI95_Lower"] >= 0).all() and "below zero" not in texts(at)
    assert "cut at 0 for quantities that cannot be negative" in texts(at)


def test_a_percentage_above_100_is_shown_escaped(store, app) -> None:
    """A note recorded in the manifest reaches the page that draws its metric, Markdown-escaped."""
    import json
    import shutil

    from profiling_worker.bundle.writer import finish_bundle, write_table
    from profiling_worker.bundle.loader import read_table
    from profiling_worker.bundle.schema import columns as C

    job = store["results"] / "pct-176"
    shutil.copytree(SCENARIOS / "h200-ncu-softmax", job)
    runs = read_table(job, C.TABLE_RUNS)
    pct = "dram__throughput.avg.pct_of_peak_sustained_elapsed"
    runs.loc[runs.index[runs[C.METRIC] == pct][0], C.VALUE] = 176.0
    write_table(job, C.TABLE_RUNS, runs)
    finish_bundle(job, {**json.loads((job / C.MANIFEST_FILE).read_text()), "job_id": job.name})
    at = app("stability", query={"job": job.name})
    at.selectbox(key="stability-metric").set_value(pct).run()
    assert not at.exception, at.exception
    box = next(str(w.value) for w in at.warning if "Plausibility check" in str(w.value))
    assert "176.0 %" in box and "dram\\_\\_throughput" in box
