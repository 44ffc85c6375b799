"""Deep-dive page (issue 28): the kernel's own timeline (PM sampling) and baselines, on reports
Nsight Compute wrote on the H200: the full-set fp16 matmul bundle (tests/fixtures/bundles) and
the default-set import (tests/fixtures/h200_import). Expected values are read here with
ncu_report from the bundle's report, not copied from the page."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import ncu_report
import pytest
from apptest_helpers import (IMPORTED, displayed, plotly_specs, text_number_problems, texts,
                             trace_values)

from app.core import derived
from profiling_worker.bundle.number_text import shown_unit
from profiling_worker.bundle.schema import interval_words as W, metrics as M
from tests.scenarios import scenario_dir

FULL = "h200-ncu-deepdive-fp16-4096"
FIXTURE = scenario_dir(FULL)
TENSOR = "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed"
TITLE = "The kernel's own timeline (PM sampling)"


@pytest.fixture
def jobs(store: dict[str, Path], default_set_import: Path) -> dict[str, Path]:
    shutil.copytree(FIXTURE, store["results"] / FULL)
    shutil.copytree(default_set_import, store["results"] / IMPORTED)
    return store


_OPEN: list[object] = []  # ncu_report frees a report's actions with the report


def _tensor_series(tmp_path: Path, launch: int) -> tuple[list[int], list[float], float]:
    """(ns from the kernel's start, values) of the tensor-pipe series inside the kernel, and
    the sample interval, read with ncu_report from the fixture's report."""
    plain = tmp_path / "r.ncu-rep"
    plain.write_bytes(gzip.decompress(
        (FIXTURE / "nsight" / "ncu-output-profiled-0.ncu-rep.gz").read_bytes()))
    ctx = ncu_report.load_report(str(plain))
    _OPEN.append(ctx)
    action = ctx.range_by_idx(0).action_by_idx(launch)
    start = action["profiler__timestamp_workload_start_0"].correlation_ids().as_uint64(0)
    end = action["profiler__timestamp_workload_end_0"].correlation_ids().as_uint64(0)
    interval = float(action["profiler__pmsampler_interval_time"].value())
    metric = action[f"TPC.TriageCompute.{TENSOR}"]
    ids = metric.correlation_ids()
    pairs = [(int(ids.as_uint64(i)) - start, metric.as_double(i))
             for i in range(metric.num_instances())
             if ids.as_uint64(i) and ids.as_uint64(i) + interval > start and ids.as_uint64(i) < end]
    return [t for t, _ in pairs], [v for _, v in pairs], interval


def _timeline(at) -> dict:
    (spec,) = [s for s in plotly_specs(at) if s["layout"]["title"]["text"] == TITLE]
    return spec


def test_the_kernels_own_timeline(jobs: dict[str, Path], app, tmp_path: Path) -> None:
    at = app("deep_dive", query={"job": FULL})
    assert not at.exception, at.exception
    t, values, interval = _tensor_series(tmp_path, 0)
    shown = texts(at)
    assert f"sampled every {interval:g} ns" in shown
    assert "not sampled in this report: occupancy, warp stalls" in shown
    spec = _timeline(at)
    layout = spec["layout"]
    assert layout["xaxis"]["title"]["text"] == "Time from kernel start (ns)"
    assert layout["yaxis"]["title"]["text"] == "% of peak" and layout["yaxis"]["range"] == [0, 100]
    (tensor,) = [tr for tr in spec["data"] if tr["name"] == TENSOR]
    assert trace_values(tensor, "x") == t and trace_values(tensor, "y") == values
    table = next(d.value for d in at.dataframe if "Time from kernel start (ns)" in d.value.columns)
    assert list(table[f"{TENSOR} (%)"]) == values
    assert at.get("download_button")  # the chart's CSV (and the others of the page)
    at.selectbox(key="deep-dive-launch").set_value(2).run()
    t2, values2, _ = _tensor_series(tmp_path, 2)
    (tensor,) = [tr for tr in _timeline(at)["data"] if tr["name"] == TENSOR]
    assert trace_values(tensor, "y") == values2 != values


def test_a_report_without_pm_sampling_says_so(jobs: dict[str, Path], app) -> None:
    at = app("deep_dive", query={"job": IMPORTED})
    assert not at.exception, at.exception
    assert "Not in this report: PM Sampling (section `PmSampling`)" in texts(at)
    assert not [s for s in plotly_specs(at) if s["layout"]["title"]["text"] == TITLE]


def test_baselines_of_an_import_and_of_a_run_at_once(jobs: dict[str, Path], app) -> None:
    at = app("deep_dive", query={"job": IMPORTED})
    at.button(key="deep-dive-pin").click().run()
    assert at.session_state["deep-dive-baselines"] == [f"{IMPORTED}:0"]
    assert at.query_params["baseline"] in (f"{IMPORTED}:0", [f"{IMPORTED}:0"])  # the URL too
    at.selectbox(key="sidebar-job").set_value(FULL).run()
    at.switch_page("app_pages/deep_dive.py").run()
    assert not at.exception, at.exception
    at.button(key="deep-dive-pin").click().run()  # run 0 of the matmul as a second baseline
    at.selectbox(key="deep-dive-launch").set_value(1).run()
    assert not at.exception, at.exception
    assert [t.label for t in at.tabs] == [f"vs {IMPORTED}:0", f"vs {FULL}:0"]
    frames = [displayed(d) for d in at.dataframe if "Told apart" in d.value.columns]
    assert len(frames) == 2
    across, same = frames
    duration = across[(across["Metric"] == "gpu__time_duration.sum")
                      & (across["Section"] == "GPU Speed Of Light Throughput")].iloc[0]
    assert duration["Told apart"] == "yes" and duration["Change"] == "worse"
    assert set(same["Told apart"]) == {"same runs"}  # three runs of one point: not compared
    assert same["Difference"].str.startswith("-").any()  # its sign shown (a narrow column hid it)
    # each unit's numbers with one number of decimals (each to 4 significant digits mixed them)
    tables = [d for d in at.dataframe if "Told apart" in d.value.columns]
    in_unit = ("Baseline", "This launch", "Difference", "Mean difference", "CI95 ±")
    assert not [p for d in tables for p in text_number_problems(displayed(d), {}, in_unit)]
    assert all(d.value[c].dtype == float for d in tables for c in in_unit)  # sorted by value
    # each row in the unit the other pages show it in (issue 37: the baselines showed ns, Hz)
    units = dict(zip(across["Metric"], across["Unit"]))
    assert units["gpu__time_duration.sum"] == derived.DEFAULT_TIME_UNIT
    assert units.get(M.GPC_HZ, shown_unit("Hz")[0]) == shown_unit("Hz")[0]
    stored = {"ns", "Hz", "hz"}  # Nsight Compute's report files spell it "hz"
    assert not stored & set(across["Unit"]) and not stored & set(same["Unit"])
    shown = texts(at)
    assert "Both launches are runs of the same measurement" in shown
    assert "coloured by sign only" in shown and "no spread is known" in shown
    assert W.line(W.DIFFERENCE) in shown  # Welch's CI95 ±: its method and coverage beside it
    rules = next(d.value for d in at.dataframe if "This launch's saving %" in d.value.columns)
    assert "—" in set(rules["Baseline"])  # full-set rules the default-set import does not have
    at.button(key="deep-dive-unpin-0").click().run()
    assert at.session_state["deep-dive-baselines"] == [f"{FULL}:0"]


def test_a_shared_link_reopens_the_pins(jobs: dict[str, Path], app) -> None:
    at = app("deep_dive", query={"job": FULL, "baseline": f"{IMPORTED}:3"})
    assert not at.exception, at.exception
    assert [t.label for t in at.tabs] == [f"vs {IMPORTED}:3"]
    (frame,) = [d.value for d in at.dataframe if "Told apart" in d.value.columns]
    shared = frame[~frame["Change"].str.startswith("only in")]
    assert set(shared["Told apart"]) == {"no spread known"}  # the (Half) region ran once
