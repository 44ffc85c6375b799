"""The Size sweep's first chart computed ahead (app/ui/sweep_chart.py, issue 37): the page opens
with every control at :func:`app.core.views.sweep.default_options`, so a page whose frame and
chart were computed with those defaults (what kernel-dashboard's prewarm thread does for the
likely jobs, app/ui/prewarm.py) computes neither again and draws the same chart and table."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
import streamlit as st

from apptest_helpers import count_cache_misses, plotly_specs
from app.ui import cached, prewarm, sweep_chart
from tests.scenarios import REPO, SCENARIOS

#: What the page computes before its chart (module, function).
BEFORE_CHART = (("app.core.views.sweep", "sweep_frame"),
                ("app.core.views.sweep", "rate_units"),
                ("app.core.figures.sweep", "build_sweep_figure"))
CASE_03 = REPO / "tests" / "fixtures" / "import_cases" / "03-derived-0.9.5"


@pytest.fixture
def computed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of every call of :data:`BEFORE_CHART` made by app/ui/cached.py: a cache miss."""
    return count_cache_misses(monkeypatch, BEFORE_CHART)


def _page(app, job: str) -> tuple[list[dict], pd.DataFrame]:  # type: ignore[no-untyped-def]
    """The Size sweep of ``job``: its chart's figure JSON and its table."""
    at = app(query={"job": job})
    assert not at.exception, at.exception
    return plotly_specs(at), at.dataframe[0].value


def _import_case_03(store: dict[str, Path]) -> str:
    from profiling_worker.importing import import_nsight_output

    import_nsight_output(sorted(CASE_03.glob("*.csv")), store["results"], "derived-095")
    return "derived-095"


@pytest.mark.parametrize("job", [
    "h200-ncu-matmul-sweep",  # durations, one x: the guide's sweep
    "h200-ncu-triton-vector-add",  # two parameters vary: the X axis box is drawn
    "derived-095",  # no durations: nsight-python's compute_tflops, the Y axis box
])
def test_a_page_computed_ahead_with_the_defaults_computes_nothing(store, monkeypatch,
                                                                    computed, app,
                                                                    job) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    if job == "derived-095":
        _import_case_03(store)
    st.cache_data.clear()
    plain, plain_table = _page(app, job)
    # the frame and chart and the units the Quantity control names (sweep_chart.quantity_units:
    # the two throughputs' frames were built for them, most of a 1,000-config fresh load)
    frames = ["rate_units", "sweep_frame"]
    assert sorted(computed) == ["build_sweep_figure", *frames]  # the page computed them
    st.cache_data.clear()
    computed.clear()
    bundle = cached.bundle_for(job)
    assert bundle is not None
    sweep_chart.compute_default(bundle)
    assert sorted(computed) == ["build_sweep_figure", *frames]
    computed.clear()
    specs, table = _page(app, job)
    assert computed == []  # the frame and the chart: cache hits
    assert specs == plain
    pd.testing.assert_frame_equal(table, plain_table)


def test_the_prewarm_read_leaves_the_first_page_nothing_to_compute(store, computed, app,
                                                                   caplog) -> None:
    """The thread's work after its imports (here in the test's thread, which has no script
    run either, as kernel-dashboard's thread runs it): the read of the newest finished job and
    its Size sweep's first chart, without Streamlit's "missing ScriptRunContext" warning,
    which the thread logged once per job at every server start (issue 37)."""
    job = "h200-ncu-matmul-sweep"
    shutil.copytree(SCENARIOS / job, store["results"] / job)
    st.cache_resource.clear()
    st.cache_data.clear()
    reads = prewarm._register_likely()
    assert [read[0] for read in reads] == [job]
    with caplog.at_level("WARNING"):
        prewarm._read(reads)
    assert not [r for r in caplog.records if "ScriptRunContext" in r.getMessage()], caplog.text
    assert sorted(computed) == ["build_sweep_figure", "rate_units", "sweep_frame"]
    computed.clear()
    _page(app, job)
    assert computed == []
