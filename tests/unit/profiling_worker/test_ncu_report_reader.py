"""The per-launch reader on a real .ncu-rep recorded on the H200 (job h200-ncu-j1-fp16)."""

import gzip
import shutil

import pytest

from profiling_worker.extract.ncu_report_reader import normalise_unit, read_launches, summarize
from profiling_worker.bundle.schema import columns as C
from tests.scenarios import scenario_report

GZ = scenario_report("h200-ncu-j1-fp16")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    path = tmp_path_factory.mktemp("rep") / "j1.ncu-rep"
    with gzip.open(GZ) as src, open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return path


def test_every_launch_is_attributed_to_its_config_and_run(report):
    rows, device = read_launches(report, [C.GPU_TIME])
    assert len(rows) == 4 * 10  # 4 configs x 10 runs, one kernel each
    keys = {(r[C.CONFIG], r[C.RUN]) for r in rows}
    assert keys == {(c, r) for c in range(4) for r in range(10)}
    assert {r[C.ANNOTATION] for r in rows} == {"fp16"}
    assert all(r[C.UNIT] == "ns" and r[C.VALUE] > 0 for r in rows)
    assert device["device__attribute_display_name"] == "NVIDIA H200"
    assert device["missing_metrics"] == []


def test_durations_grow_with_size(report):
    rows, _ = read_launches(report, [C.GPU_TIME])
    mean = {c: sum(r[C.VALUE] for r in rows if r[C.CONFIG] == c) / 10 for c in range(4)}
    assert mean[0] < mean[1] < mean[2] < mean[3]
    assert 1.3e6 < mean[3] < 1.6e6  # fp16 8192^3 on the H200: about 1.45 ms


def test_missing_metric_is_reported_not_invented(report):
    rows, device = read_launches(report, [C.GPU_TIME, "dram__bytes_read.sum"])
    assert device["missing_metrics"] == ["dram__bytes_read.sum"]
    assert {r[C.METRIC] for r in rows} == {C.GPU_TIME}


def test_summary_counts_launches_per_kernel(report):
    summary = summarize(report)
    assert summary["launches"] == 40 and sum(summary["kernels"].values()) == 40
    assert all(name.startswith("nvjet_sm90") for name in summary["kernels"])


def test_units_are_normalised():
    assert normalise_unit(2.5, "usecond") == (2500.0, "ns")
    assert normalise_unit(1.5, "cycle/nsecond") == (1.5e9, "Hz")
    assert normalise_unit(7, "warp") == (7, "warp")
