"""GPU checks behind the analysis views (issues 3, 4, 5): counter FLOPs, CUDA-event cross-check,
info collectors, thermal and cache variants, and a worker killed mid-job. Run on the H200 by
scripts/gpu_check.sh after it recorded the bundles into $KPROF_GPU_RESULTS."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import read_manifest

pytestmark = pytest.mark.gpu
RESULTS = Path(os.environ.get("KPROF_GPU_RESULTS", "/nonexistent"))


def _table(job: str, name: str) -> pd.DataFrame:
    return pd.read_parquet(RESULTS / job / C.TABLES_DIR / f"{name}.parquet")


def _value(agg: pd.DataFrame, annotation: str, n: int, metric: str) -> float:
    row = agg[(agg[C.ANNOTATION] == annotation) & (agg["n"] == n) & (agg[C.METRIC] == metric)]
    return float(row[C.AVG].iloc[0])


def test_fp16_gemm_tensor_flops_equal_2n3() -> None:
    agg = _table("h200-ncu-roofline", "aggregated")
    flops = _value(agg, "fp16", 4096, "sm__ops_path_tensor_src_fp16.sum")
    print("fp16 4096^3 tensor FLOPs", flops, "2n^3", 2 * 4096**3)
    assert flops == 2 * 4096**3


def _recorded_in_this_call(job: str) -> bool:
    """True when the bundle was recorded by this device call (not seeded from an earlier one):
    cross-checks between two timings are only fair on the same machine at the same time."""
    run = read_manifest(RESULTS / job).get("provenance", {}).get("device_run")
    return bool(run) and run == os.environ.get("DEVICE_RUN")


@pytest.mark.parametrize("case", ["fp32-4096", "fp32-8192", "fp16-8192", "bf16-8192"])
def test_gemm_duration_within_3pct_of_cuda_events(case: str) -> None:
    if not _recorded_in_this_call("h200-ncu-roofline"):
        pytest.skip("h200-ncu-roofline was not recorded in this device call")
    events = json.loads((RESULTS / "cuda_events_gemm.json").read_text())[case]["mean_ns"]
    dtype, n = case.split("-")
    ncu = _value(_table("h200-ncu-roofline", "aggregated"), dtype, int(n), C.GPU_TIME)
    print(case, "ncu", round(ncu), "cuda events", round(events), round(ncu / events, 4))
    assert ncu >= 1e6 and abs(ncu / events - 1) < 0.03


def test_collectors_sampled_before_every_run() -> None:
    col = _table("h200-cupti-stability", "collectors")
    assert len(col) == 3 * 30 * 3  # configs x runs x collectors
    clock = col[col[C.COLLECTOR] == "sm_clock"][C.VALUE]
    print(col.groupby(C.COLLECTOR)[C.VALUE].describe())
    assert clock.between(300, 1980).all()


def test_thermal_auto_and_off_both_finish() -> None:
    for job in ("h200-cupti-stability", "h200-cupti-stability-thermal-off"):
        m = read_manifest(RESULTS / job)
        print(job, m["status"], m["wall_s"], m["spec"]["thermal_mode"])
        assert m["status"] == "done"


def test_cache_none_job_finishes_and_differs_only_where_l2_holds_data() -> None:
    hot = _table("h200-ncu-elementwise-cache-none", "aggregated")
    cold = _table("h200-ncu-elementwise", "aggregated")
    small, big = 1 << 20, 1 << 26
    for n in (small, big):
        print(n, _value(cold, "x*2", n, C.GPU_TIME), _value(hot, "x*2", n, C.GPU_TIME))
    # 256 MiB does not fit the 60 MiB L2: cache control cannot matter there.
    assert abs(_value(hot, "x*2", big, C.GPU_TIME) / _value(cold, "x*2", big, C.GPU_TIME) - 1) < 0.05


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        h.update(f.name.encode() + f.read_bytes())
    return h.hexdigest()


def test_worker_killed_mid_job_is_marked_failed_and_nothing_else_changes(tmp_path: Path) -> None:
    from app.services.job_manager import JobManager
    from profiling_worker.catalog.builtin import CATALOG
    from profiling_worker.bundle.schema.spec import validate_spec

    finished = RESULTS / "h200-cupti-j1-fp16"
    before = _digest(finished)
    manager = JobManager(tmp_path, sys.executable, env=dict(os.environ))
    spec = validate_spec({"kernels": ["matmul"], "annotations": ["fp32"], "configs": [{"n": 8192}],
                          "runs": 400, "backend": "cupti", "warmup": 0}, CATALOG)
    job_id = manager.submit(spec)
    deadline = time.monotonic() + 120
    while (manager.get(job_id).done < 2) and time.monotonic() < deadline:
        time.sleep(0.2)
    subprocess.run(["pkill", "-9", "-f", f"profiling_worker run .*{job_id}"], check=False)
    status = manager.wait(job_id, 60)
    job = manager.get(job_id)
    print(status, job.error)
    assert status == "failed" and job.error["kind"] == "worker_died"
    assert "signal 9" in job.error["message"]
    assert _digest(finished) == before
    manager.shutdown()


@pytest.mark.parametrize("job,regions", [
    ("h200-cupti-triton-vector-add", {"torch", "triton"}),
    ("h200-ncu-triton-vector-add", {"torch", "triton"}),
    ("h200-cupti-cuda-core-saxpy", {"torch", "cuda_cpp"}),
    ("h200-ncu-cuda-core-saxpy", {"torch", "cuda_cpp"}),
    ("h200-cupti-linear-backward", {"forward", "backward"}),
])
def test_example_kernel_files_profile_every_region(job: str, regions: set[str]) -> None:
    agg = _table(job, "aggregated")
    time = agg[agg[C.METRIC] == C.GPU_TIME]
    print(job, time[[C.ANNOTATION, *[c for c in time.columns if c in ("n", "block_size",
          "batch", "features")], C.AVG, C.KERNELS]].to_string())
    assert set(time[C.ANNOTATION]) == regions and (time[C.AVG] > 0).all()
