"""Each note once, where it applies (issue 37): the note that an older bundle's CI95 lower
bounds of DRAM bytes are shown cut at 0 sat on every page of the job, time-only pages
included; it belongs under a table that shows those bounds."""

from __future__ import annotations

import pytest
from apptest_helpers import texts

from tests.scenarios import SCENARIOS, scenario

JOB = "h200-ncu-elementwise-cache-none"  # 4 CI95_Lower of dram__bytes_write.sum below 0
CUT = "written before the worker cut CI95 lower bounds at 0"


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
