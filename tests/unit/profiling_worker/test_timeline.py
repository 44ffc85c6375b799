"""The timeline (profiling_worker/bundle/timeline.py) of recorded H200 scenarios (tests/fixtures/bundles)."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from profiling_worker.bundle.loader import read_table
from profiling_worker.bundle.writer import write_table
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.timeline import (COUNTERS, PLACED_BY_CUPTI, PLACED_IN_RUN_ORDER,
                                              TimelineError, build_trace, trace_problems,
                                              write_trace)
from tests.scenarios import SCENARIOS, scenario_names
from tests.trace_engine import kept_launches
from tests.trace_processor import summary

STABILITY = SCENARIOS / "h200-cupti-stability"  # CUPTI, 3 configs x 30 runs, NVML trace
NCU = SCENARIOS / "h200-ncu-elementwise"  # Nsight Compute, 5 regions


def _events(trace: dict, phase: str) -> list[dict]:
    return [e for e in trace["traceEvents"] if e["ph"] == phase]


def test_stability_launches_in_run_order_with_their_measured_durations() -> None:
    trace = build_trace(STABILITY)
    launches = read_table(STABILITY, C.TABLE_LAUNCHES)
    kernels = _events(trace, "X")
    assert trace_problems(trace) == []
    # Perfetto would read ts as ns under displayTimeUnit "ns" (json_trace_tokenizer.cc)
    assert set(trace) == {"traceEvents", "otherData"}
    assert trace["otherData"]["placement"] == PLACED_IN_RUN_ORDER
    assert len(kernels) == len(launches)
    assert sorted(e["args"]["duration_ns"] for e in kernels) == sorted(launches[C.VALUE])
    assert all(e["dur"] == pytest.approx(e["args"]["duration_ns"] / 1e3) for e in kernels)
    ordered = sorted(kernels, key=lambda e: e["ts"])
    assert all(a["ts"] + a["dur"] == b["ts"] for a, b in zip(ordered, ordered[1:]))  # exact
    assert [(e["args"]["config"], e["args"]["run"]) for e in ordered] == sorted(
        zip(launches[C.CONFIG], launches[C.RUN]))
    names = {e["args"]["name"] for e in _events(trace, "M") if e["name"] == "thread_name"}
    assert names == {"region fp16 (run order, not a clock)"}


def test_nvml_counters_on_their_own_axis_without_cupti_times() -> None:
    trace = build_trace(STABILITY)
    nvml = read_table(STABILITY, C.TABLE_NVML)
    counters = _events(trace, "C")
    assert {e["pid"] for e in counters} == {2} and not trace["otherData"]["nvml_aligned"]
    for column, (name, unit) in COUNTERS.items():
        values = [e["args"][unit] for e in counters if e["name"] == name]
        assert values == list(nvml[column].astype(float)), name
    assert [e["ts"] for e in counters if e["name"] == "power"] == pytest.approx(
        list(nvml[C.TIME_S] * 1e6))


def _perfetto_ns(us: float) -> int:
    """A JSON number as Perfetto's trace processor reads it (CoerceToTs in
    json_trace_tokenizer.cc, v51 and later): ``llround(µs * 1000)``."""
    return math.floor(us * 1000 + 0.5)


def test_durations_read_back_as_exact_ns() -> None:
    """Consumer: Perfetto's reading of a JSON number (``llround(µs * 1000)``, modelled in
    :func:`_perfetto_ns`). 1.001 µs is no exact double; this bundle has such durations (1001 ns
    and others) and run-order starts."""
    kernels = _events(build_trace(SCENARIOS / "h200-cupti-elementwise-cache-none"), "X")
    assert [_perfetto_ns(e["dur"]) for e in kernels] == [int(e["args"]["duration_ns"])
                                                        for e in kernels]
    ordered = sorted(kernels, key=lambda e: e["ts"])
    ends = [_perfetto_ns(a["ts"]) + _perfetto_ns(a["dur"]) for a in ordered]
    assert all(end == _perfetto_ns(b["ts"]) for end, b in zip(ends, ordered[1:]))  # they touch


def _with_launches(name: str) -> bool:
    return (SCENARIOS / name / C.TABLES_DIR / f"{C.TABLE_LAUNCHES}.parquet").is_file()


#: Every recorded job that has launches (the deep-dive bundle has none: a TimelineError).
TIMED = [n for n in scenario_names() if _with_launches(n)]


@pytest.mark.parametrize("name", TIMED)
def test_launches_on_a_track_touch_or_follow_never_overlap(name: str) -> None:
    """Consumer: none (the Trace Event Format's nesting rule, checked by trace_problems with a
    reader's double arithmetic): ts + dur of a launch is at most the next one's ts on its
    track; placed back to back in run order (all regions on one axis), exactly equal to the
    next launch's ts."""
    trace = build_trace(SCENARIOS / name)
    assert trace_problems(trace) == []
    if trace["otherData"]["placement"] == PLACED_IN_RUN_ORDER:
        ordered = sorted(_events(trace, "X"), key=lambda e: e["ts"])
        assert all(a["ts"] + a["dur"] == b["ts"] for a, b in zip(ordered, ordered[1:]))


def test_the_overlap_check_catches_a_one_ps_overlap() -> None:
    """Consumer: none. The export before issue 39 added 1e-6 µs to ts and dur, so each launch
    ended 1 ps after the next began; trace_problems names each such pair."""
    trace = build_trace(STABILITY)
    for event in _events(trace, "X"):
        event["ts"] += 1e-6
        event["dur"] += 1e-6
    problems = trace_problems(trace)
    assert len(problems) == 45 and "without nesting" in problems[0], problems[:2]


def test_chrome_trace_engine_keeps_every_launch_of_every_job(tmp_path: Path) -> None:
    """Consumer: Chrome DevTools' trace engine (npm ``@paulirish/trace_engine``, the Performance
    panel's parser, under node; tests/trace_engine.py). Every recorded job's export: each track
    keeps all its launches (an overlapping one is dropped: 45 of 90 kept for
    h200-cupti-stability before issue 39)."""
    paths = [write_trace(SCENARIOS / name, tmp_path / f"{name}.json") for name in TIMED]
    read = kept_launches(paths)
    for path in paths:
        tracks = read[str(path)]
        given = len(_events(json.loads(path.read_text()), "X"))
        assert sum(n for n, _kept in tracks.values()) == given, path.name
        assert all(n == kept for n, kept in tracks.values()), (path.name, tracks)


def test_every_tid_belongs_to_one_process() -> None:
    """Perfetto starts a new thread when a tid shows up under another pid (tid reuse)."""
    pids_of: dict[int, set[int]] = {}
    for event in build_trace(STABILITY)["traceEvents"]:
        pids_of.setdefault(event["tid"], set()).add(event["pid"])
    assert all(len(pids) == 1 for pids in pids_of.values()), pids_of


def test_ncu_bundle_has_one_track_per_region() -> None:
    trace = build_trace(NCU)
    launches = read_table(NCU, C.TABLE_LAUNCHES)
    timed = launches[launches[C.METRIC] == C.GPU_TIME]
    kernels = _events(trace, "X")
    assert len(kernels) == len(timed) and trace_problems(trace) == []
    by_region = {e["args"]["region"] for e in kernels}
    assert by_region == set(timed[C.ANNOTATION])
    tids = {e["args"]["region"]: e["tid"] for e in kernels}
    assert len(set(tids.values())) == len(by_region)  # one track each


def with_cupti_times(bundle: Path) -> tuple[pd.DataFrame, int]:
    """A copy of the stability bundle at ``bundle`` given a launch_times table built from its own
    durations (start = previous end + 1 µs) and an NVML start 2 ms before the first launch: a
    test input for the placement arithmetic, not a measurement. Returns (times, NVML start)."""
    shutil.copytree(STABILITY, bundle)
    launches = read_table(bundle, C.TABLE_LAUNCHES).sort_values([C.CONFIG, C.RUN, C.LAUNCH])
    ends = 5_000_000_000 + (launches[C.VALUE] + 1000).cumsum().astype("int64")
    times = launches.assign(**{C.END_NS: ends, C.START_NS: ends - launches[C.VALUE].astype("int64")})
    write_table(bundle, C.TABLE_LAUNCH_TIMES, times[[C.ANNOTATION, C.CONFIG, "n", C.RUN, C.LAUNCH,
                                                     C.KERNEL, C.START_NS, C.END_NS]])
    manifest = json.loads((bundle / C.MANIFEST_FILE).read_text())
    nvml_start = int(times[C.START_NS].min()) - 2_000_000
    manifest["backend"]["nvml_trace_start_ns"] = nvml_start
    (bundle / C.MANIFEST_FILE).write_text(json.dumps(manifest))
    return times, nvml_start


def test_cupti_start_end_place_launches_and_align_nvml(tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    times, nvml_start = with_cupti_times(bundle)
    trace = build_trace(bundle)
    assert trace["otherData"]["placement"] == PLACED_BY_CUPTI and trace["otherData"]["nvml_aligned"]
    assert trace["otherData"]["launches_without_start"] == 0
    kernels = sorted(_events(trace, "X"), key=lambda e: e["ts"])
    expected = (times[C.START_NS] - nvml_start) / 1e3
    assert [e["ts"] for e in kernels] == pytest.approx(list(expected))
    counters = [e for e in _events(trace, "C") if e["name"] == "SM clock"]
    nvml = read_table(bundle, C.TABLE_NVML)
    assert {e["pid"] for e in counters} == {1}
    assert [e["ts"] for e in counters] == pytest.approx(list(nvml[C.TIME_S] * 1e6))
    assert trace_problems(trace) == []


def test_overlapping_launches_of_one_region_go_to_a_second_track(tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    shutil.copytree(STABILITY, bundle)
    launches = read_table(bundle, C.TABLE_LAUNCHES)
    start = pd.Series(range(len(launches)), dtype="int64") * 1000 // 2  # each overlaps the next
    times = launches.assign(**{C.START_NS: start, C.END_NS: start + 1000})
    write_table(bundle, C.TABLE_LAUNCH_TIMES, times)
    kernels = _events(build_trace(bundle), "X")
    assert len({e["tid"] for e in kernels}) == 2


def test_trace_problems_names_broken_events() -> None:
    assert trace_problems({}) == ["traceEvents is missing or not a list"]
    bad = {"traceEvents": [{"ph": "X", "name": "k", "ts": 0, "pid": 1, "tid": 1, "dur": -1},
                           {"ph": "C", "name": "c", "ts": 0, "pid": 1, "args": {"MHz": "x"}},
                           {"ph": "B"}, {"ph": "M", "name": "thread_name"}]}
    problems = trace_problems(bad)
    assert len(problems) == 4 and "negative duration" in problems[0]


def test_bundle_without_launches_is_a_clear_error(tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    shutil.copytree(STABILITY, bundle)
    (bundle / C.TABLES_DIR / "launches.parquet").unlink()
    with pytest.raises(TimelineError, match="no launches table"):
        build_trace(bundle)


def test_truncated_table_is_a_clear_error(tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    shutil.copytree(STABILITY, bundle)
    path = bundle / C.TABLES_DIR / "nvml_trace.parquet"
    path.write_bytes(path.read_bytes()[:29])
    with pytest.raises(TimelineError, match="nvml_trace.parquet cannot be read"):
        build_trace(bundle)


def test_cli_writes_the_trace_and_explains_a_bad_bundle(tmp_path: Path) -> None:
    out = tmp_path / "trace.json"
    done = subprocess.run([sys.executable, "-m", "profiling_worker", "timeline", str(NCU),
                           "-o", str(out)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text()) == build_trace(NCU)
    bad = subprocess.run([sys.executable, "-m", "profiling_worker", "timeline", str(tmp_path),
                          "-o", str(out)], capture_output=True, text=True, check=False)
    event = json.loads(bad.stdout)
    assert bad.returncode == 1 and "manifest" in event["message"]


@pytest.mark.parametrize("bundle", [STABILITY, NCU], ids=["cupti", "ncu"])
def test_trace_processor_reads_every_launch_and_counter(bundle: Path, tmp_path: Path) -> None:
    out = write_trace(bundle, tmp_path / "trace.json")
    read = summary(out)  # skips where trace_processor_shell cannot be had
    trace = build_trace(bundle)
    kernels = _events(trace, "X")
    assert read["kernel_slices"] == len(kernels) and not read["errors"]
    assert read["kernel_ns"] == sum(int(e["args"]["duration_ns"]) for e in kernels)  # exact ns
    assert {n.split(" ")[0] for n in read["counters"]} >= {"SM", "power"}


def test_launches_without_a_cupti_start_are_counted_and_named(tmp_path: Path) -> None:
    times, _start = with_cupti_times(tmp_path / "b")
    write_table(tmp_path / "b", C.TABLE_LAUNCH_TIMES, times.iloc[5:])  # 5 launches untimed
    trace = build_trace(tmp_path / "b")
    assert trace["otherData"]["launches_without_start"] == 5
    assert len(_events(trace, "X")) == len(times) - 5
    process = next(e for e in _events(trace, "M") if e["name"] == "process_name")
    assert "(5 launches without a CUPTI start left out)" in process["args"]["name"]
