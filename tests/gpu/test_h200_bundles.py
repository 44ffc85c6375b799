"""GPU checks on the H200 (``pytest -m gpu``, run by scripts/gpu_check.sh after it recorded the
bundles into $KPROF_GPU_RESULTS with this project's worker). Never run in CI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import read_manifest

pytestmark = pytest.mark.gpu
RESULTS = Path(os.environ.get("KPROF_GPU_RESULTS", "/nonexistent"))
UNDERSTATED_DIR = Path(__file__).parents[1] / "fixtures" / "kernel_files_gpu"
MAX_SM_CLOCK_HZ = 1980e6 * 1.02  # H200 max SM clock (NVML), 2% slack for counter rounding


def _bundles() -> list[Path]:
    return sorted(p for p in RESULTS.iterdir() if (p / C.MANIFEST_FILE).exists())


def _agg(job: str) -> pd.DataFrame:
    return pd.read_parquet(RESULTS / job / C.TABLES_DIR / "aggregated.parquet")


def test_every_recorded_job_finished() -> None:
    statuses = {p.name: read_manifest(p)["status"] for p in _bundles()}
    print(statuses)
    assert statuses and all(s == "done" for s in statuses.values()), statuses


def test_no_combined_percentage_above_100_or_rate_above_device_max() -> None:
    for bundle in _bundles():
        runs = pd.read_parquet(bundle / C.TABLES_DIR / "runs.parquet")
        pct = runs[runs[C.METRIC].str.contains("pct_of_peak")]
        assert (pct[C.VALUE] <= 100.0).all(), (bundle.name, pct[C.VALUE].max())
        clock = runs[runs[C.METRIC] == "gpc__cycles_elapsed.avg.per_second"]
        assert (clock[C.VALUE] <= MAX_SM_CLOCK_HZ).all(), (bundle.name, clock[C.VALUE].max())


def test_matmul_sweep_survives_different_kernel_counts() -> None:
    agg = _agg("h200-ncu-matmul-sweep")
    time = agg[agg[C.METRIC] == C.GPU_TIME]
    counts = time.pivot_table(index="n", columns=C.ANNOTATION, values=C.KERNELS)
    print(counts)
    assert len(time) == 5 * 3  # every config of every annotation, none dropped
    assert not time[C.KERNELS_VARY].any()
    assert (time[C.KERNELS] == 2).any(), "cuBLAS split-K (2 kernels) expected at one size"


def test_scale_dram_read_bytes_match_analytic() -> None:
    """x * 2 on 2^26 fp32 = 256 MiB: DRAM reads within 5% of the analytic 256 MiB."""
    agg = _agg("h200-ncu-elementwise")
    row = agg[(agg[C.ANNOTATION] == "x*2") & (agg["n"] == 1 << 26)
              & (agg[C.METRIC] == "dram__bytes_read.sum")]
    read = float(row[C.AVG].iloc[0])
    print("x*2 read bytes", read, "analytic", 4 << 26)
    assert abs(read / (4 << 26) - 1) < 0.05


@pytest.mark.parametrize("backend", ["ncu", "cupti"])
def test_worker_matches_bare_nsight_python(backend: str) -> None:
    """J1 (fp16 matmul 1024..8192, 10 runs): per-config durations within 5% of a bare
    nsight-python script run in the same device call, for kernels >= 100 us."""
    if not (RESULTS / f"bare_{backend}.json").exists():
        pytest.skip(f"the bare {backend} script did not run in this device call (BARE_BACKENDS)")
    bare = json.loads((RESULTS / f"bare_{backend}.json").read_text())["avg_ns"]
    agg = _agg(f"h200-{backend}-j1-fp16")
    ours = agg[agg[C.METRIC] == C.GPU_TIME].set_index("n")[C.AVG]
    for n, ref in bare.items():
        ratio = ours[int(n)] / ref
        print(backend, n, round(ours[int(n)]), round(ref), round(ratio, 4))
        if ref >= 100_000:
            assert abs(ratio - 1) < 0.05


def _run_worker(job: Path, spec: dict) -> dict:
    job.mkdir()
    (job / "spec.json").write_text(json.dumps(spec))
    env = {**os.environ, "KPROF_KERNEL_DIRS": str(UNDERSTATED_DIR)}
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(job)],
                          capture_output=True, text=True, timeout=200, env=env)
    manifest = read_manifest(job)
    print(manifest.get("error"))
    assert proc.returncode == 1 and manifest["status"] == "failed"
    return manifest


def test_sizes_beyond_the_gpu_memory_are_refused_before_profiling(tmp_path: Path) -> None:
    """matmul fp32 at n = 400,000 holds 1.8 TiB (its inputs and result): refused by the worker's
    spec check with the fix, before any CUDA allocation."""
    manifest = _run_worker(tmp_path / "big", {
        "kernels": ["matmul"], "annotations": ["fp32"], "configs": [{"n": 400_000}], "runs": 1,
        "backend": "cupti", "warmup": 0})
    assert "more than the" in manifest["error"]["message"]
    assert "smaller" in manifest["error"]["message"] + manifest["error"].get("hint", "")


def test_a_size_over_the_free_memory_is_refused_naming_it(tmp_path: Path) -> None:
    """The memory check counts what is free on the job's GPU now (NVML), not the card's total:
    with all but a tenth of the card held by this test process, fp32 matmul at a size that
    needs about 30 % of the card is refused before CUDA, naming the free memory."""
    torch = pytest.importorskip("torch")
    from profiling_worker.bundle.schema import memory_need as mn
    from profiling_worker.catalog.builtin import CATALOG

    free, total = torch.cuda.mem_get_info()
    n = int((0.3 * total / 12) ** 0.5)  # two fp32 inputs and a result: 12 n^2 bytes
    need = mn.together([mn.kernel_need("matmul", CATALOG["matmul"], {"n": n}, ("fp32",))])
    held = torch.empty(int(free - 0.1 * total), dtype=torch.uint8, device="cuda")
    try:
        left, _total = torch.cuda.mem_get_info()
        assert left < need < total, (left, need, total)  # fits the card, not what is left
        manifest = _run_worker(tmp_path / "held", {
            "kernels": ["matmul"], "annotations": ["fp32"], "configs": [{"n": n}], "runs": 1,
            "backend": "events", "warmup": 0})
    finally:
        del held
        torch.cuda.empty_cache()
    message = manifest["error"]["message"]
    assert manifest["error"]["kind"] == "spec_invalid", manifest["error"]
    assert "memory free on GPU" in message and "in all" in message, message


def test_out_of_memory_fails_cleanly(tmp_path: Path) -> None:
    """A kernel whose byte formula understates its allocation (4 TiB) reaches CUDA: out of
    memory is named, with the fix."""
    manifest = _run_worker(tmp_path / "oom", {
        "kernels": ["understated_alloc"], "runs": 1, "backend": "cupti", "warmup": 0})
    assert "out of memory" in manifest["error"]["message"].lower()
    assert "smaller" in manifest["error"]["message"] + manifest["error"].get("hint", "")


def test_a_gpu_jobs_warm_up_names_each_config_before_its_runs() -> None:
    """The CUPTI J1 recorded in this call (warmup 1): a ``warm-up`` progress event per config,
    all before the first profiled run, so the job panel names the config a long warm-up is in."""
    bundle = RESULTS / "h200-cupti-j1-fp16"
    run = read_manifest(bundle).get("provenance", {}).get("device_run") if bundle.is_dir() else None
    if not run or run != os.environ.get("DEVICE_RUN"):  # seeded from the repo (SEED=1)
        pytest.skip("h200-cupti-j1-fp16 was not recorded in this device call")
    events = [json.loads(line) for line in (bundle / "events.jsonl").read_text().splitlines()]
    stages = [(e.get("stage"), e.get("config")) for e in events if e.get("event") == "progress"]
    warm = [config for stage, config in stages if stage == "warm-up"]
    first_run = next(i for i, (stage, _c) in enumerate(stages) if stage == "profiling")
    spec = json.loads((bundle / "spec.json").read_text())
    assert warm == list(range(len(spec["configs"]))), stages
    assert all(stage != "warm-up" for stage, _c in stages[first_run:]), stages
