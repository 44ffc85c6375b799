"""The clocks page's timeline frames and the Files page's trace, on the bundled H200 jobs."""

from __future__ import annotations

import dataclasses
import json

import pytest

from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.timeline import PLACED_IN_RUN_ORDER, build_trace

from app.core import frame_columns as F
from app.core.figures.timeline import build_timeline_figure
from app.core.metrics import MissingData
from app.core.views.timeline import timeline_problem, timeline_view, trace_bytes
from profiling_worker.bundle.loader import load_bundle
from tests.unit.app.bundled import bundled
from tests.unit.profiling_worker.test_timeline import with_cupti_times


def test_view_holds_every_launch_of_the_trace_with_its_duration() -> None:
    bundle = bundled("h200-ncu-matmul-sweep")
    view = timeline_view(bundle)
    launches = bundle.table(C.TABLE_LAUNCHES)
    timed = launches[launches[C.METRIC] == C.GPU_TIME]
    assert len(view.launches) == len(timed)
    assert sorted(view.launches[F.DURATION_US] * 1e3) == pytest.approx(sorted(timed[C.VALUE]))
    assert view.placement == PLACED_IN_RUN_ORDER and not view.aligned
    assert view.counters.empty  # NVML is not on the run-order axis
    assert set(view.launches[F.CONFIG_LABEL]) == {f"n={n}" for n in timed["n"].unique()}
    fig = build_timeline_figure(view.launches, view.counters, view.measured_starts)
    assert len(fig.data) == timed["n"].nunique()  # one bar trace per config
    assert set(view.launches[F.TRACK]) == {f"region {a}" for a in timed[C.ANNOTATION]}
    assert "run order" in fig.layout.title.text


def test_trace_bytes_are_the_cli_trace() -> None:
    bundle = bundled("h200-cupti-stability")
    assert json.loads(trace_bytes(bundle)) == build_trace(bundle.path)
    assert timeline_problem(bundle) is None


def test_bundle_without_launches_says_so(tmp_path) -> None:
    bundle = bundled("h200-cupti-stability")
    no_launches = {**bundle.tables, C.TABLE_LAUNCHES: bundle.table(C.TABLE_LAUNCHES).iloc[0:0]}
    empty = dataclasses.replace(bundle, path=tmp_path, tables=no_launches)
    assert timeline_problem(empty) == "the job has no per-launch table"
    with pytest.raises(MissingData, match="No timeline"):
        timeline_view(empty)


def test_cupti_times_put_the_nvml_clocks_under_the_launches(tmp_path) -> None:
    with_cupti_times(tmp_path / "b")  # launch_times built from the bundle's own durations
    view = timeline_view(load_bundle(tmp_path / "b"))
    assert view.aligned and view.measured_starts
    assert set(view.counters[F.COUNTER]) == {"SM clock", "memory clock", "GPU temperature", "power"}
    fig = build_timeline_figure(view.launches, view.counters, view.measured_starts, 1980)
    clocks = [t for t in fig.data if t.name in ("SM clock", "memory clock")]
    assert len(clocks) == 2 and all(t.yaxis == "y2" for t in clocks)
    assert view.launches[F.START_MS].min() == pytest.approx(2.0)  # NVML started 2 ms earlier


def test_recorded_cupti_timeline_opens_on_its_launches() -> None:
    """The H200 timeline job (device run 14): every launch at its CUPTI start, NVML clocks on the
    same axis; the NVML trace starts with the worker, long before the first launch, so the
    chart opens on the launches' span and every launch lies inside it."""
    bundle = bundled("h200-cupti-timeline")
    view = timeline_view(bundle)
    runs = bundle.manifest["spec"]["runs"] * len(bundle.manifest["spec"]["configs"])
    assert view.aligned and view.measured_starts and len(view.launches) == runs
    fig = build_timeline_figure(view.launches, view.counters, view.measured_starts, 1980)
    low, high = fig.layout.xaxis.range
    starts = view.launches[F.START_MS]
    ends = starts + view.launches[F.DURATION_US] / 1e3
    assert low <= starts.min() and ends.max() <= high
    sm = view.counters[view.counters[F.COUNTER] == "SM clock"]
    assert sm[F.START_MS].min() < low  # samples before the launches exist, outside the view


@pytest.mark.parametrize("name, host_timer", [("cpu", True), ("h200-ncu-matmul-sweep", False)])
def test_the_run_order_axis_names_what_the_backend_measured(name, host_timer, cpu_bundle) -> None:
    """Issue 37: a cpu job's timeline read "Kernel time so far" where it summed host wall-clock
    times (no kernel time exists on the cpu backend); a GPU job's sums kernel durations."""
    from app.core.figures.theme import axis_title
    from app.core.figures.timeline import run_order_axis

    bundle = load_bundle(cpu_bundle) if name == "cpu" else bundled(name)
    view = timeline_view(bundle)
    assert not view.measured_starts and view.host_timer is host_timer
    fig = build_timeline_figure(view.launches, view.counters, view.measured_starts,
                                host_timer=view.host_timer)
    said = fig.layout.xaxis.title.text
    assert said == axis_title(run_order_axis(host_timer), "ms")
    assert ("Kernel" in said) is not host_timer and ("wall-clock" in said) is host_timer
