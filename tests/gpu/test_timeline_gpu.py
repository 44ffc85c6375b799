"""The timeline of a CUPTI job recorded on the H200 (job ``h200-cupti-timeline`` of
scripts/record_h200.py): every launch at its CUPTI start/end, the NVML trace on the same axis,
loaded back by Perfetto's trace processor where its binary is available (the device machine has
no internet: that part skips unless KPROF_TRACE_PROCESSOR_SHELL names a copy)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from profiling_worker.bundle.loader import read_table
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import read_manifest
from profiling_worker.bundle.timeline import (PLACED_BY_CUPTI, build_trace, trace_problems,
                                              write_trace)

pytestmark = pytest.mark.gpu
BUNDLE = Path(os.environ.get("KPROF_GPU_RESULTS", "/nonexistent")) / "h200-cupti-timeline"
MAX_SM_CLOCK_MHZ = 1980  # H200, NVML max SM clock (manifest environment.gpus)


@pytest.fixture(scope="module")
def bundle() -> Path:
    if not (BUNDLE / C.MANIFEST_FILE).exists():
        pytest.skip("h200-cupti-timeline was not recorded in this call")
    return BUNDLE


def test_every_launch_has_cupti_start_and_end_matching_its_duration(bundle: Path) -> None:
    launches = read_table(bundle, C.TABLE_LAUNCHES)
    times = read_table(bundle, C.TABLE_LAUNCH_TIMES)
    keys = [C.ANNOTATION, C.CONFIG, C.RUN, C.LAUNCH]
    both = launches[launches[C.METRIC] == C.GPU_TIME].merge(times, on=[*keys, C.KERNEL, "n"])
    print(len(launches), len(times), both[[C.START_NS, C.END_NS, C.VALUE]].describe())
    assert len(both) == len(launches) == len(times)
    assert ((both[C.END_NS] - both[C.START_NS]) == both[C.VALUE]).all()  # nsight: end - start
    ordered = both.sort_values([C.CONFIG, C.RUN, C.LAUNCH])
    assert ordered[C.START_NS].is_monotonic_increasing  # runs one after another on one stream


def test_trace_puts_launches_and_nvml_on_one_axis(bundle: Path, tmp_path: Path) -> None:
    manifest = read_manifest(bundle)
    assert manifest["backend"]["nvml_trace_start_ns"] > 0
    trace = build_trace(bundle)
    assert trace["otherData"]["placement"] == PLACED_BY_CUPTI and trace["otherData"]["nvml_aligned"]
    assert trace_problems(trace) == []
    kernels = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    clocks = [e for e in trace["traceEvents"] if e["ph"] == "C" and e["name"] == "SM clock"]
    first, last = min(e["ts"] for e in kernels), max(e["ts"] + e["dur"] for e in kernels)
    print(json.dumps(trace["otherData"]), first, last, len(clocks))
    # the sampler runs around the whole collection (every 10 ms): a sample before the first
    # launch and one at most two intervals before the last ends; none above the device maximum
    interval_us = read_manifest(bundle)["spec"]["nvml_interval_ms"] * 1e3
    assert min(e["ts"] for e in clocks) <= first
    assert max(e["ts"] for e in clocks) >= last - 2 * interval_us
    assert all(0 < e["args"]["MHz"] <= MAX_SM_CLOCK_MHZ for e in clocks)
    during = [e["args"]["MHz"] for e in clocks if first <= e["ts"] <= last]
    print("SM clock during the launches (MHz):", pd.Series(during).describe().to_dict())
    out = write_trace(bundle, tmp_path / "trace.json")

    from tests.trace_processor import summary  # skips without trace_processor_shell

    read = summary(out)
    print(read)
    assert read["kernel_slices"] == len(kernels) and not read["errors"]
    assert read["kernel_ns"] == sum(int(e["args"]["duration_ns"]) for e in kernels)
