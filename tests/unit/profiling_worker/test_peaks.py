"""Datasheet peaks (dense vs sparse kept apart) and clock-adjusted peaks."""

from __future__ import annotations

import pytest

from profiling_worker.bundle.schema import peaks


@pytest.mark.parametrize("name, model, dram", [
    ("NVIDIA H200", "NVIDIA H200 SXM 141GB", 4800.0),
    ("NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM5 80GB", 3350.0),
    ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 SXM4 80GB", 2039.0),
    ("NVIDIA A100-PCIE-40GB", "NVIDIA A100 40GB", 1555.0),
    ("NVIDIA L4", "NVIDIA L4", 300.0),
])
def test_match_by_manifest_name(name: str, model: str, dram: float) -> None:
    device = peaks.match_device(name)
    assert device is not None and device.name == model and device.dram_gbps == dram
    assert device.source.startswith("https://")


def test_unknown_and_excluded_names() -> None:
    assert peaks.match_device("NVIDIA H200 NVL") is None  # different clocks and power
    assert peaks.match_device("NVIDIA H100 PCIe") is None
    assert peaks.match_device("Tesla V100") is None
    assert peaks.datasheet_compute(None, "fp16") is None


def test_dense_not_sparse() -> None:
    h200 = peaks.match_device("NVIDIA H200")
    fp16 = peaks.datasheet_compute(h200, "fp16")
    assert fp16 is not None and fp16.value == pytest.approx(989.4)
    assert h200.fp16_sparse == pytest.approx(2 * h200.fp16_dense, rel=1e-3)
    assert peaks.datasheet_compute(h200, "bf16").value == fp16.value
    assert peaks.datasheet_compute(h200, "fp32").value == 67.0  # CUDA cores, not TF32 (494.7)
    assert "dense" in fp16.label and "h200" in fp16.source


def test_counter_peaks_from_h200_per_cycle_values() -> None:
    # Per-cycle peaks measured on the H200 (docs/measurements-h200.md, "Numbers the analyses rest on").
    values = {"sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum.peak_sustained": 540672,
              "sm__ops_path_tensor_src_fp16.sum.peak_sustained": 1081344,  # the sparse trap
              "sm__cycles_elapsed.avg.per_second": 1.83e9,
              "dram__bytes.sum.peak_sustained": 1504, "dram__cycles_elapsed.avg.per_second": 3.199e9}
    fp16 = peaks.counter_peak("fp16", values)
    assert fp16.value == pytest.approx(989.4, rel=1e-3)
    assert "sparsity_off" in fp16.source
    assert peaks.counter_dram_peak(values).value == pytest.approx(4811, rel=1e-3)
    assert peaks.counter_peak("bf16", values) is None  # its dense peak was not collected
    fp32 = peaks.counter_peak("fp32", {
        "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained": 16896,
        "gpc__cycles_elapsed.avg.per_second": 1.98e9})
    assert fp32.value == pytest.approx(66.9, rel=1e-3)


def test_clock_scaled_peak() -> None:
    h200 = peaks.match_device("NVIDIA H200")
    scaled = peaks.clock_scaled_peak(h200, "fp16", 1.5e9)
    assert scaled.value == pytest.approx(989.4 * 1500 / 1830)
    assert "measured clock" in scaled.source
    assert peaks.clock_scaled_peak(h200, "fp16", float("nan")) is None
