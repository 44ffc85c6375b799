"""Per-kernel breakdown on the H200 bundles."""

from __future__ import annotations

import pytest
from bundled import bundled

from app.core.figures.kernels import build_kernels_figure
from app.core.figures.theme import TITLE_LINE_CHARS
from app.core.metrics import MissingData
from app.core.views.kernels import (combine_rules_frame, kernel_counts_frame, kernel_time_frame,
                                    launches_frame)
from profiling_worker.bundle.schema import columns as C


def _one(frame, annotation, n):
    return frame[(frame[C.ANNOTATION] == annotation) & (frame["n"] == n)]


def test_fp32_512_is_split_k_with_two_kernels() -> None:
    bundle = bundled("h200-ncu-matmul-sweep")
    counts = kernel_counts_frame(bundle)
    row = _one(counts, "fp32", 512).iloc[0]
    assert row["KernelsPerRun"] == 2 and not row["VariesBetweenRuns"]
    assert "split_k" in row["Kernels"]
    assert (_one(counts, "fp32", 1024)["KernelsPerRun"] == 1).all()
    times = _one(kernel_time_frame(bundle), "fp32", 512)
    assert len(times) == 2 and times["Share"].sum() == pytest.approx(100)
    assert times["MeanTimeNs"].sum() == pytest.approx(16768.0)  # = the region's aggregated time


def test_launches_have_every_metric_and_grid() -> None:
    launches = launches_frame(bundled("h200-ncu-matmul-sweep"))
    assert len(launches) == 160  # 150 regions x runs + 10 split-K extra launches
    assert "gpu__time_duration.sum [ns]" in launches and "dram__bytes_read.sum [byte]" in launches
    assert launches[C.GRID].notna().all()


def test_unfused_is_two_kernels_and_rules() -> None:
    bundle = bundled("h200-ncu-elementwise")
    counts = kernel_counts_frame(bundle)
    assert (counts[counts[C.ANNOTATION] == "unfused"]["KernelsPerRun"] == 2).all()
    rules = combine_rules_frame(bundle).set_index(C.METRIC)[C.COMBINE_RULE]
    assert "sum" in rules["gpu__time_duration.sum"]
    assert "duration-weighted mean" in rules["dram__throughput.avg.pct_of_peak_sustained_elapsed"]


def test_cupti_launches_have_no_grid() -> None:
    launches = launches_frame(bundled("h200-cupti-elementwise"))
    assert launches[C.GRID].isna().all() and "gpu__time_duration.sum [ns]" in launches


def test_figure() -> None:
    times = kernel_time_frame(bundled("h200-ncu-matmul-sweep"))
    fig = build_kernels_figure(times)
    assert fig.layout.barmode == "stack" and fig.layout.yaxis.title.text == "Mean time per run (µs)"
    bars = [t for t in fig.data if t.type == "bar"]  # not the run audit's × over 5 regions
    assert len(bars) == 13  # distinct kernel names in the sweep
    assert fig.layout.yaxis.type == "linear"  # stacked segments only add up on a linear axis
    assert len({t.marker.color for t in bars}) == 13  # no two kernels share a colour
    assert len({t.name for t in bars}) == 13  # nor a legend name
    assert all(len(t.name) <= 64 for t in bars)
    assert {t.customdata[0][1] for t in bars} == set(times[C.KERNEL])  # full name in hover
    share = build_kernels_figure(times, share=True)
    assert share.layout.yaxis.title.text == "Share of the region's time (%)"
    # no room above 100 %: no region's runs failed the run audit (the × over failed regions
    # needs it, test_chart_audit_marks; the job's pooled median clock failed 5 regions' runs)
    assert list(share.layout.yaxis.range) == [0, 100]
    # a cpu job's title: each line fits the narrowest chart (session 26's fresh user read
    # "...(host wall-clock, not GP" at 1000x700), and it still reads whole
    cpu = build_kernels_figure(times, host_timer=True, share=True)
    lines = cpu.layout.title.text.split("<br>")
    assert len(lines) > 1 and max(map(len, lines)) <= TITLE_LINE_CHARS, lines
    assert " ".join(lines).endswith("(host wall-clock, not GPU)")


def test_short_names_keep_both_ends_and_stay_distinct() -> None:
    from app.core.figures.kernels import short_name, short_names

    gemm = "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize{}_stage3_warpsize1x4x1_ffma_execute_kernel__5x_cublas"
    names = [gemm.format("64x64x8"), gemm.format("128x64x8"), "Kernel2"]
    short = short_names(names)
    assert short["Kernel2"] == "Kernel2"
    assert len(set(short.values())) == 3
    for full in names[:2]:
        head, *_, tail = short[full].split("…")
        assert full.startswith(head) and full.endswith(tail) and tail.endswith("cublas")
    assert "tilesize64x64x8" in short[names[0]] and "tilesize128x64x8" in short[names[1]]
    assert short_name(names[0]) == "sm80_xmma_gemm…execute_kernel__5x_cublas"
    same_but_middle = ["a" * 60 + "x" + "b" * 60, "a" * 60 + "y" + "b" * 60]
    assert len(set(short_names(same_but_middle).values())) == 2


def test_missing_launches(tmp_path) -> None:
    import dataclasses

    bundle = dataclasses.replace(bundled("h200-ncu-softmax"), tables={})
    with pytest.raises(MissingData):
        kernel_time_frame(bundle)
