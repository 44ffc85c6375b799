"""Deep-dive page, rule digest and deep-dive action (issue 13) on reports Nsight Compute wrote on
the H200: the default-set import fixture (4 sections, rule results) and the J1 fp16 scenario (metrics
only: no sections, no rules); the matmul sweep scenario for the sweep page's action."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from apptest_helpers import IMPORTED, open_folds, plotly_specs, texts
from app.core import metric_roles
from profiling_worker.bundle.schema import metrics as M
from tests.scenarios import SCENARIOS

METRICS_ONLY = "h200-ncu-j1-fp16"  # its report is the one shared copy (README of the scenarios)


@pytest.fixture
def imported(store: dict[str, Path], default_set_import: Path) -> dict[str, Path]:
    """The store with the default-set import in its results dir."""
    shutil.copytree(default_set_import, store["results"] / IMPORTED)
    return store


def _open_deep_dive(at, page: str) -> None:
    """Open the page's "Deep dive one point" expander (its content is drawn while open)."""
    assert not at.get("selectbox") or f"{page}-deep-point" not in {
        s.key for s in at.selectbox}  # closed: nothing of it computed or sent
    at.session_state[f"{page}-deep-open"] = True
    at.run()


def test_default_set_report_shows_what_it_has_and_names_what_it_lacks(imported, app) -> None:
    at = app("deep_dive", query={"job": IMPORTED})
    assert not at.exception, at.exception
    shown = texts(at)
    assert "LaunchStats" in shown and "SpeedOfLight" in shown
    for lacking in ("Warp State Statistics", "Memory Workload Analysis", "Source Counters"):
        assert f"Not in this report: {lacking}" in shown, lacking
    tiles = {m.label: m.value for m in at.metric}
    assert float(tiles["Theoretical (%)"]) == 62.5  # sm__maximum_warps_per_active_cycle_pct
    assert 0 < float(tiles["Achieved (%)"]) <= 62.5
    assert tiles["Limited by"] == "registers"  # 5 blocks per SM: the fewest of the limits
    (sol,) = plotly_specs(at)  # speed of light drawn; no stall chart (no WarpStateStats)
    assert sol["layout"]["xaxis"]["range"] == [0, 100]
    (bars,) = sol["data"]  # each bar by its words, its raw Nsight Compute name in its hover
    raw = list(bars["customdata"])
    assert list(bars["y"]) == [metric_roles.words({}, m) for m in raw]
    assert M.SM_PCT in raw and metric_roles.words({}, M.SM_PCT) != M.SM_PCT
    assert "Est. saving % of sweep" in at.dataframe[-1].value.columns  # the job's digest
    assert "TheoreticalOccupancy" in set(at.dataframe[-1].value["Rule"])


def test_metrics_only_sweep_has_no_rules_and_offers_a_deep_dive(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("bound_roofline", query={"job": METRICS_ONLY})
    assert not at.exception, at.exception
    assert "No rule results in this report" in texts(at) and "metric list only" in texts(at)
    _open_deep_dive(at, "bound")
    points = at.selectbox(key="bound-deep-point")
    assert "fp16 · n=4096" in points.options
    points.set_value("fp16 · n=4096").run()
    assert not at.exception, at.exception
    button = at.button(key="bound-deep-run")
    assert button.disabled  # no GPU here: the reason is named instead
    assert "Not on this machine" in texts(at) and "--set full" in texts(at)
    assert not any("Open the deep dive" in str(link.label) for link in at.get("page_link"))


def test_kernels_page_of_an_import_lists_the_rules(imported, app) -> None:
    at = app("kernels", query={"job": IMPORTED})
    assert not at.exception, at.exception
    rules = [d.value for d in at.dataframe if "Rule" in d.value.columns]
    assert rules and rules[0]["Est. saving % of sweep"].dropna().is_monotonic_decreasing
    counts = next(d.value for d in at.dataframe if "KernelsPerRun" in d.value.columns)
    regions = {r for cell in rules[0]["Regions"] for r in cell.split(", ")}
    assert regions == set(counts["Annotation"])  # the digest names the regions the page shows


def test_metrics_only_report_on_the_deep_dive_page(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("deep_dive", query={"job": METRICS_ONLY})
    assert not at.exception, at.exception
    shown = texts(at)
    assert "40 launches" in shown and "the --metrics list" in shown
    # launch__* attributes come with every report: shown, with the section named as absent
    assert "The report has no Occupancy section" in shown
    tiles = {m.label: m.value for m in at.metric}
    # Issue 25: "not in report" was cut to "not in r..." in the narrow tile: "—", said below
    # launch__occupancy_limit_registers and _shared_mem are both 1 block (read with ncu_report)
    assert tiles["Achieved (%)"] == "—" and tiles["Limited by"] == "registers and shared memory"
    assert ("Not in this report, shown as —: Achieved (%) "
            "(`sm__warps_active.avg.pct_of_peak_sustained_active`).") in shown
    assert "Not in this report: Warp State Statistics" in shown
    _open_deep_dive(at, "deep-dive")
    assert at.button(key="deep-dive-deep-run").disabled  # offered for another point; no GPU


def test_the_action_queues_that_point_alone_with_the_full_set(store, monkeypatch, app) -> None:
    """The click path up to the worker: no GPU here, so the backend check is lifted for the
    click and the queued job then fails in the worker (no ncu); its spec is what is checked."""
    import json

    from app.ui import deep_dive_action

    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    monkeypatch.setattr(deep_dive_action, "_problems", lambda raw: [])
    at = app("sweep", query={"job": "h200-ncu-matmul-rules"})
    _open_deep_dive(at, "sweep")
    points = at.selectbox(key="sweep-deep-point")
    points.set_value("fp16 · n=4096").run()
    at.button(key="sweep-deep-run").click().run()
    assert not at.exception, at.exception
    (job,) = [p for p in store["results"].iterdir() if (p / "spec.json").exists()]
    spec = json.loads((job / "spec.json").read_text())
    assert (spec["kernels"], spec["annotations"], spec["configs"]) == (
        ["matmul"], ["fp16"], [{"n": 4096}])
    assert spec["backend"] == "ncu" and spec["section_set"] == "full"
    assert at.session_state["sidebar-job"] == job.name  # the new job is the one shown
    assert any(job.name in str(link.label) for link in at.get("page_link"))


def test_picked_point_survives_closing_and_a_job_switch_offers_that_jobs_points(
        store, monkeypatch, app) -> None:
    """A new user's trial: after picking "bf16 · n=8192" and switching to the elementwise job,
    the box still read "bf16 · n=8192" while the spec was built from that job's 15th point; and
    closing the expander forgot the pick."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("sweep", query={"job": "h200-ncu-matmul-rules"})
    _open_deep_dive(at, "sweep")
    at.selectbox(key="sweep-deep-point").set_value("bf16 · n=8192").run()
    at.session_state["sweep-deep-open"] = False
    at.run()
    _open_deep_dive(at, "sweep")
    assert at.selectbox(key="sweep-deep-point").value == "bf16 · n=8192"  # remembered
    at.selectbox(key="sidebar-job").set_value("h200-ncu-elementwise").run()
    points = at.selectbox(key="sweep-deep-point")
    assert "bf16 · n=8192" not in points.options and points.value == points.options[0]
    shown = texts(at)
    annotation = points.value.split(" · ")[0]
    assert annotation in {"x*2", "a+b", "unfused", "fused"} and "Queues a job" in shown


def test_full_set_tables_serialise_without_arrow_fallback(store, monkeypatch, app,
                                                          caplog) -> None:
    """A new user's find: every visit to the full-set deep dive logged a traceback (Arrow could
    not convert a Value column holding "CachePreferNone" among numbers). Such a column is now
    shown as text; the numbers in it are written with thousands separators."""
    import logging

    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    streamlit_log = logging.getLogger("streamlit.dataframe_util")  # does not propagate
    streamlit_log.addHandler(caplog.handler)
    try:
        at = open_folds(app("deep_dive", query={"job": "h200-ncu-deepdive-fp16-4096"}))
    finally:
        streamlit_log.removeHandler(caplog.handler)
    assert not at.exception, at.exception
    assert len(at.dataframe) >= 5
    assert "Serialization of dataframe to Arrow table was unsuccessful" not in caplog.text
    cells = [v for df in at.dataframe for c in df.value.columns for v in df.value[c]]
    assert "CachePreferNone" in cells


def test_a_cpu_job_offers_no_deep_dive_and_says_why(seeded, app) -> None:
    """Issue 37: the "Deep dive one point" expander was offered on cpu jobs, which hold no GPU
    profile to dive into; the Deep dive page says why not instead. The sweep pages say nothing
    (a fresh user's find: the same paragraph stood over the chart of each of them)."""
    from apptest_helpers import JOB_ID

    for page, prefix in (("sweep", "sweep"), ("stability", "stability"),
                         ("bound_roofline", "bound"), ("deep_dive", "deep-dive")):
        at = app(page, query={"job": JOB_ID})
        assert not at.exception, at.exception
        assert not [e for e in at.expander if "Deep dive one point" in str(e.label)], page
        assert f"{prefix}-deep-open" not in at.session_state, page
        said = texts(at).count("No deep dive for a cpu job")
        assert said == (1 if page == "deep_dive" else 0), page
        assert "or profile one of its points" not in texts(at), page


def test_an_import_offers_no_point_to_profile_and_says_why_with_its_command(imported,
                                                                           app) -> None:
    """A fresh user's find: an imported job's "Deep dive one point" drew a Point box that could
    only be refused, said "No deep dive here … `ncu --set full`" with the backticks shown, and
    each empty section said the deep-dive action would profile it. Now the action says why not
    at once (the command as code) and draws no Point box; the sections say an imported job
    needs a report made with the full set."""
    for page in ("sweep", "deep_dive"):
        at = app(page, query={"job": IMPORTED})
        assert not at.exception, at.exception
        prefix = "deep-dive" if page == "deep_dive" else page
        assert not [e for e in at.expander if "Deep dive one point" in str(e.label)], page
        assert f"{prefix}-deep-point" not in {s.key for s in at.selectbox}, page
        said = [c.value for c in at.caption if c.value.startswith("No deep dive here")]
        if page == "sweep":  # said on the Deep dive page, not over each sweep page's chart
            assert not said
            continue
        assert said and "`ncu --set full`" in said[0] and "\\`" not in said[0], (page, said)
    assert "an imported job needs a report made so" in texts(at)


def test_a_single_config_import_gets_an_axis_around_its_value(imported, app) -> None:
    """Issue 37: an import of one config (config_index 0, the H200 default-set report) drew
    its Size sweep on plotly's -1..1 axis with ticks at -1, -0.5, 0.5, 1; one tick at the
    value now."""
    at = app("sweep", query={"job": IMPORTED})
    assert not at.exception, at.exception
    (spec,) = plotly_specs(at)
    axis = spec["layout"]["xaxis"]
    assert axis["tickvals"] == [0.0] and axis["ticktext"] == ["0"]
    assert axis["range"][0] < 0 < axis["range"][1]


def test_whole_launch_statistics_are_shown_without_decimals(store, monkeypatch, app) -> None:
    """New-user trial: Launch statistics read "launch__grid_size 256.0" and "launch__block_size
    128.0": the rows without a unit took the decimals of launch__waves_per_multiprocessor
    (0.4848). Whole values of those rows are whole."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("deep_dive", query={"job": "h200-ncu-matmul-rules"})  # the sweep's deep dive
    assert not at.exception, at.exception
    from apptest_helpers import displayed

    shown = {}
    for df in at.dataframe:
        frame = displayed(df)
        if {"Metric", "Value"} <= set(frame.columns):
            shown.update(zip(frame["Metric"], frame["Value"]))
    assert shown["launch__grid_size"] == "256", shown
    assert shown["launch__block_size"] == "128", shown
    assert shown["launch__waves_per_multiprocessor"] == "0.4848", shown  # a fraction: its digits


def test_every_section_table_has_its_csv(store, monkeypatch, app) -> None:
    """A fresh user's find: the Speed of light, Memory workload, Occupancy and Launch
    statistics tables had no CSV download. Each section's table now has one, named by job,
    launch and section."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("deep_dive", query={"job": "h200-ncu-deepdive-fp16-4096"})
    assert not at.exception, at.exception
    keys = {b.key for b in at.get("download_button")}
    for section in ("sol", "memory", "occupancy", "launch"):
        assert f"deep-dive-{section}-csv" in keys, sorted(keys)


def test_section_tables_read_in_the_pages_units_and_words(store, monkeypatch, app) -> None:
    """Session 23: one unit and one name for a quantity on every page. The Speed of light
    table gave the GPU time in ns and the SM clock in Hz, by raw name only, where Size sweep
    and Stability say µs and the run audit MHz."""
    from app.core import derived
    from profiling_worker.bundle.number_text import shown_unit

    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("deep_dive", query={"job": "h200-ncu-deepdive-fp16-4096"})
    assert not at.exception, at.exception
    sol = next(d.value for d in at.dataframe if "Metric" in d.value.columns
               and M.GPC_HZ in set(d.value["Metric"]))
    rows = sol.set_index("Metric")
    assert rows.loc[M.GPU_TIME, "Unit"] == derived.DEFAULT_TIME_UNIT
    assert rows.loc[M.GPC_HZ, "Unit"] == shown_unit("Hz")[0]
    assert 100 < float(rows.loc[M.GPC_HZ, "Value"]) < 5000  # an H200's clock in MHz
    assert rows.loc[M.GPC_HZ, "MetricWords"] == metric_roles.words({}, M.GPC_HZ)
