"""One kernel view and figure on the H200 bundles."""

from __future__ import annotations

import pytest
from bundled import bundled

from app.core.figures.one_kernel import LEGEND_CHARS, REGION_TOTAL, build_one_kernel_figure
from app.core.table_text import shorten_middle
from app.core.metrics import GPC_HZ, MissingData
from app.core.provenance import profiled_scope
from app.core.views.one_kernel import (GBPS_ROW, MEASURED, SM_CLOCK_ROW, SOURCE,
                                       TFLOPS_ROW, OneKernelOptions, annotation_configs,
                                       one_kernel_frame, one_kernel_launches_frame,
                                       one_kernel_summary, opening_options)
from profiling_worker.bundle.schema import columns as C

SPLIT_K = "fp32", 0  # cuBLAS picks a split-K GEMM (two kernels) for fp32 n=512 on the H200


def _row(frame, metric):
    return frame[frame[C.METRIC] == metric].iloc[0]


def test_fp32_512_every_value_with_kernels_clock_and_tflops() -> None:
    bundle = bundled("h200-ncu-matmul-sweep")
    frame = one_kernel_frame(bundle, OneKernelOptions(*SPLIT_K))
    assert list(frame.columns[:3]) == [C.METRIC, C.UNIT, C.NUM_RUNS]
    assert set(frame["GPU"]) == {"NVIDIA H200"}
    kernels = frame["Kernels"].iloc[0].split(" + ")
    assert len(kernels) == 2 and any("split_k" in k for k in kernels)
    duration = _row(frame, C.GPU_TIME)
    assert duration[C.AVG] == pytest.approx(16.768) and duration[C.UNIT] == "µs"
    assert duration[SOURCE] == MEASURED and duration[C.NUM_RUNS] == 10
    clock = _row(frame, SM_CLOCK_ROW)  # the clock the kernel ran at, not the rated one
    assert clock[C.UNIT] == "MHz" and 1900 < clock[C.AVG] < 1980
    assert clock[C.AVG] == pytest.approx(_row(frame, GPC_HZ)[C.AVG] / 1e6)
    tflops = _row(frame, TFLOPS_ROW)  # 2 n^3 FLOP / 16.768 µs
    assert tflops[C.UNIT] == "TFLOP/s"
    assert tflops[C.AVG] == pytest.approx(2 * 512**3 / 16.768e-6 / 1e12, rel=0.01)
    assert tflops[C.CI95_LOWER] < tflops[C.AVG] < tflops[C.CI95_UPPER]
    assert _row(frame, GBPS_ROW)[C.UNIT] == "GB/s"


def test_summary_and_time_unit() -> None:
    bundle = bundled("h200-ncu-matmul-sweep")
    frame = one_kernel_frame(bundle, OneKernelOptions("fp16", 4, time_unit="ms"))
    summary = one_kernel_summary(bundle, frame)
    assert summary.time_unit == "ms" and summary.duration == pytest.approx(1.4583, rel=1e-3)
    assert summary.kernels and summary.gpu == "NVIDIA H200" and summary.stable
    assert summary.sm_clock_mhz == pytest.approx(1515.5, abs=1)  # ncu replay ran it at 1.5 GHz
    assert summary.throughput == pytest.approx(754, rel=0.01)
    assert summary.throughput_unit == "TFLOP/s"


def test_cupti_job_has_no_clock_row_and_defaults_to_first_pair() -> None:
    bundle = bundled("h200-cupti-stability")
    frame = one_kernel_frame(bundle, OneKernelOptions())
    assert set(frame[C.ANNOTATION]) == {"fp16"} and set(frame["n"]) == {256}
    assert SM_CLOCK_ROW not in set(frame[C.METRIC])
    summary = one_kernel_summary(bundle, frame)
    assert summary.sm_clock_mhz is None and summary.num_runs == 30 and not summary.stable


def test_choices_and_missing_pairs() -> None:
    bundle = bundled("h200-ncu-matmul-sweep")
    choices = annotation_configs(bundle)
    assert list(choices) == ["fp32", "fp16", "bf16"] and choices["fp32"][4] == "n=8192"
    with pytest.raises(MissingData, match="no annotation"):
        one_kernel_frame(bundle, OneKernelOptions("int8", 0))
    with pytest.raises(MissingData, match="no config 9"):
        one_kernel_frame(bundle, OneKernelOptions("fp32", 9))


def test_the_page_opens_on_the_first_annotation_and_config() -> None:
    """app/ui/prefetch computes the page's opening through :func:`opening_options`."""
    assert opening_options(bundled("h200-ncu-matmul-sweep")) == OneKernelOptions(
        annotation="fp32", config=0, time_unit="µs")


def test_cpu_job_says_what_is_measured(cpu_bundle) -> None:
    from profiling_worker.bundle.loader import load_bundle

    bundle = load_bundle(cpu_bundle)
    frame = one_kernel_frame(bundle, OneKernelOptions())
    assert C.HOST_TIME in set(frame[C.METRIC])
    assert "annotated region" in profiled_scope(bundle.manifest)


def test_launches_frame_and_figure() -> None:
    bundle = bundled("h200-ncu-matmul-sweep")
    launches = one_kernel_launches_frame(bundle, OneKernelOptions(*SPLIT_K))
    assert len(launches) == 30  # 10 runs x (2 launches + region total)
    total = launches[launches[C.KERNEL] == REGION_TOTAL]
    per_run = launches[launches[C.KERNEL] != REGION_TOTAL].groupby(C.RUN)[C.VALUE].sum()
    assert total.set_index(C.RUN)[C.VALUE].to_numpy() == pytest.approx(per_run.to_numpy())
    fig = build_one_kernel_figure(launches, "fp32 · n=512")
    names = [t.name for t in fig.data]
    assert REGION_TOTAL in names and len(set(names)) == 3  # the two kernels stay apart
    assert fig.layout.yaxis.title.text == "Duration (µs)"
    single = one_kernel_launches_frame(bundle, OneKernelOptions("fp16", 4))
    assert REGION_TOTAL not in [t.name for t in build_one_kernel_figure(single, "x").data]


def test_legend_names_keep_the_distinguishing_tail() -> None:
    a = "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_execute_kernel__5x_cublas"
    b = "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_execute_split_k_kernel__5x_cublas"
    assert shorten_middle(a, LEGEND_CHARS) != shorten_middle(b, LEGEND_CHARS)
    assert len(shorten_middle(b, LEGEND_CHARS)) == 48
    assert shorten_middle("Kernel2", LEGEND_CHARS) == "Kernel2"
