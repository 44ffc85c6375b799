"""nsight-python's GPU, ComputeClock, MemoryClock and Kernel columns beside the aggregated table
(issue 37), from a recorded H200 Nsight Compute job and a CUPTI one."""

from __future__ import annotations

from profiling_worker.bundle.loader import load_bundle
from app.core.views.seed_columns import SEED_COLUMNS, with_seed_columns
from tests.scenarios import SCENARIOS


def test_an_ncu_job_gets_the_device_attributes_and_kernel_names() -> None:
    bundle = load_bundle(SCENARIOS / "h200-ncu-matmul-sweep")
    table = bundle.table("aggregated")
    out = with_seed_columns(table, bundle)
    assert list(out.columns[-4:]) == list(SEED_COLUMNS) and len(out) == len(table)
    assert set(out["GPU"]) == {"NVIDIA H200"}
    assert set(out["ComputeClock"]) == {1980000}  # device__attribute_clock_rate, kHz
    assert out["MemoryClock"].notna().all()
    assert out["Kernel"].notna().all() and out["Kernel"].str.len().gt(0).all()
    assert out["Kernel"].str.contains("gemm").any()  # the cuBLAS kernels of matmul
    assert "GPU" not in table  # the job's table is not changed


def test_a_cupti_job_has_no_rated_clocks_but_its_gpu() -> None:
    bundle = load_bundle(SCENARIOS / "h200-cupti-matmul-sweep")
    out = with_seed_columns(bundle.table("aggregated"), bundle)
    assert out["ComputeClock"].isna().all() and out["GPU"].notna().all()
