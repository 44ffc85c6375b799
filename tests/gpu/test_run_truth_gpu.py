"""Issue 11 on the H200 (run by scripts/gpu_check.sh after recording into $KPROF_GPU_RESULTS):
the backward region measured on both backends, CUPTI with a flushed L2 below the DRAM roof."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import read_manifest

pytestmark = pytest.mark.gpu
RESULTS = Path(os.environ.get("KPROF_GPU_RESULTS", "/nonexistent"))
HBM_PEAK_BYTES_PER_S = 4.8e12  # H200 datasheet HBM3e bandwidth


def _launches(job: str) -> pd.DataFrame:
    if not (RESULTS / job / C.MANIFEST_FILE).exists():
        pytest.skip(f"{job} was not recorded in this device call")
    table = pd.read_parquet(RESULTS / job / C.TABLES_DIR / "launches.parquet")
    return table[table[C.METRIC] == C.GPU_TIME]


def _per_launch_mean(launches: pd.DataFrame, annotation: str) -> pd.DataFrame:
    """Mean duration (ns) of each launch position of a region, per features."""
    region = launches[launches[C.ANNOTATION] == annotation]
    return region.groupby(["features", C.LAUNCH])[C.VALUE].mean().rename("ns").reset_index()


def test_backward_on_ncu_within_10pct_of_cupti_for_kernels_of_100us_and_more() -> None:
    ncu = _per_launch_mean(_launches("h200-ncu-linear-backward"), "backward")
    cupti = _per_launch_mean(_launches("h200-cupti-linear-backward"), "backward")
    both = ncu.merge(cupti, on=["features", C.LAUNCH], how="outer", suffixes=("_ncu", "_cupti"))
    print(json.dumps(both.to_dict("records"), indent=0))
    assert both.notna().all().all(), "the two backends saw different kernel counts"
    long = both[both["ns_cupti"] >= 100_000]
    assert set(long["features"]) >= {1024, 4096}
    ratio = long["ns_ncu"] / long["ns_cupti"]
    print("ncu/cupti for kernels >= 100 us:", ratio.round(3).tolist())
    assert ((ratio - 1).abs() <= 0.10).all()
    manifest = read_manifest(RESULTS / "h200-ncu-linear-backward")
    assert not any("not attributed" in w for w in manifest["warnings"])


def _scale_4mi(job: str) -> tuple[float, float]:
    """(mean µs, bytes/s) of x*2 at 4 Mi fp32 (reads n, writes n) in a recorded CUPTI job."""
    launches = _launches(job)
    scale = launches[(launches[C.ANNOTATION] == "x*2") & (launches["n"] == 1 << 22)]
    mean_ns = scale.groupby(C.RUN)[C.VALUE].sum().mean()
    return mean_ns / 1e3, 8 * (1 << 22) / (mean_ns * 1e-9)


@pytest.mark.parametrize("job", ["h200-cupti-scale-4mi", "h200-cupti-elementwise"])
def test_cupti_scale_4mi_with_flushed_l2_is_at_most_the_dram_roof(job: str) -> None:
    """Also every region of the elementwise job: ``fused`` after ``unfused`` on the same inputs
    read 6.0 TB/s at 1 Mi with one flush per run instead of one per region."""
    us, rate = _scale_4mi(job)
    agg = pd.read_parquet(RESULTS / job / C.TABLES_DIR / "aggregated.parquet")
    work = pd.read_parquet(RESULTS / job / C.TABLES_DIR / "work.parquet")
    both = agg[agg[C.METRIC] == C.GPU_TIME].merge(work, on=[C.ANNOTATION, C.CONFIG])
    rates = both[C.BYTES] / (both[C.AVG] * 1e-9)
    print(job, "highest analytic-bytes rate", f"{rates.max() / 1e12:.2f} TB/s")
    assert (rates <= HBM_PEAK_BYTES_PER_S).all()
    print(f"{job}: x*2 at 4 Mi fp32, CUPTI, L2 flushed: {us:.2f} us, {rate / 1e12:.2f} TB/s")
    assert rate <= HBM_PEAK_BYTES_PER_S
    manifest = read_manifest(RESULTS / job)
    flush = manifest["backend"]["cache_flush"]
    print("cache_flush", flush)
    assert flush["bytes"] > flush["l2_bytes"] > 0
    runs = pd.read_parquet(RESULTS / job / C.TABLES_DIR / "runs.parquet")
    assert flush["flushes"] == (runs[C.METRIC] == C.GPU_TIME).sum()  # one per region and run


def test_cupti_scale_4mi_warm_l2_reads_above_the_flushed_rate() -> None:
    """cache_control none keeps the old behaviour (warm L2), named in the manifest."""
    warm_us, warm_rate = _scale_4mi("h200-cupti-scale-4mi-cache-none")
    cold_us, _ = _scale_4mi("h200-cupti-scale-4mi")
    print(f"x*2 at 4 Mi, CUPTI, warm L2: {warm_us:.2f} us, {warm_rate / 1e12:.2f} TB/s; "
          f"flushed: {cold_us:.2f} us")
    flush = read_manifest(RESULTS / "h200-cupti-scale-4mi-cache-none")["backend"]["cache_flush"]
    assert flush["bytes"] == 0 and warm_us < cold_us


def test_cupti_jobs_ran_on_the_gpu_nvml_names() -> None:
    for job in sorted(p.name for p in RESULTS.glob("h200-cupti-*")):
        manifest = read_manifest(RESULTS / job)
        if "cuda_device" not in manifest.get("backend", {}):
            continue  # recorded before this check existed (SEED=1 copies)
        cuda = manifest["backend"]["cuda_device"]["uuid"]
        assert manifest["gpu"]["uuid"] == f"GPU-{cuda}", job
