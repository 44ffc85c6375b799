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


def _names_per_launch(bundle, frame):  # type: ignore[no-untyped-def]
    """The Kernel column as it was made before issue 37's 10,000 configs: every launch's name
    joined per group (5.9 s at 1.9M launches), the reference the faster one must equal."""
    import pandas as pd

    launches = bundle.table("launches")
    keys = ["Annotation", "Config"]
    names = (launches.dropna(subset=["Kernel"]).groupby(keys, sort=False)["Kernel"]
             .agg(lambda s: " + ".join(dict.fromkeys(str(k) for k in s))).rename("Kernel"))
    return pd.Series(frame[keys].join(names, on=keys)["Kernel"], name="Kernel")


def test_the_kernel_names_are_those_of_every_launch_joined_per_region_and_config(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Every bundled job with launches, a scale bundle (a region of 2 kernels) and launches with
    a missing name and one name repeated: the same Kernel column as every launch's names
    joined, first seen first."""
    import pandas as pd

    from benchmarks.results_page_scale import build_scale_bundle

    build_scale_bundle(tmp_path / "scale", configs=10, runs=2)
    bundles = [load_bundle(d) for d in sorted(SCENARIOS.iterdir()) if d.is_dir()]
    bundles.append(load_bundle(tmp_path / "scale"))
    checked = 0
    for bundle in bundles:
        launches = bundle.table("launches")
        if launches.empty or "Kernel" not in launches:
            continue
        for edit in (False, True):
            if edit:  # a missing name, a repeated one after another kernel, a number
                launches = launches.copy()
                launches["Kernel"] = launches["Kernel"].astype(object)
                launches.loc[launches.index[:3], "Kernel"] = [None, "b", 7]
                bundle.tables["launches"] = launches
            table = bundle.table("aggregated")
            pd.testing.assert_series_equal(with_seed_columns(table, bundle)["Kernel"],
                                           _names_per_launch(bundle, table))
            checked += 1
    assert checked >= 20
