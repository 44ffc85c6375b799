"""Record the bundled H200 results with this project's worker (run by scripts/gpu_check.sh).

Usage: ``python scripts/record_h200.py RESULTS_DIR NCU_PYTHONPATH CUPTI_PYTHONPATH [JOB ...]``.
Each job runs as ``python -m profiling_worker run`` with the PYTHONPATH that holds the
nsight-python version its backend needs (0.9.6 for ncu 2025.3.1, 1.1 for CUPTI).
Prints one JSON line per job: job id, status, wall time (s).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# what the deep-dive action asks
from profiling_worker.bundle.schema.metrics import DEEP_DIVE_COLLECT

MATMUL = [512, 1024, 2048, 4096, 8192]
ELEMENTWISE = [1 << 20, 1 << 22, 1 << 24, 1 << 26]
BOUND = ["gpu__time_duration.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
         "dram__throughput.avg.pct_of_peak_sustained_elapsed",
         "gpc__cycles_elapsed.avg.per_second", "dram__bytes_read.sum", "dram__bytes_write.sum"]

# Roofline metrics (docs/measurements-h200.md, "Numbers the analyses rest on"): achieved tensor
# and FP32 FLOPs, DRAM bytes, the clocks the kernel ran at, and per-cycle dense peaks (the per-op
# `_sparsity_off` peaks, not the roll-up that is the 2:4-sparse rate). Names this GPU's ncu does
# not know are dropped before the job is written (listed in the record output).
ROOFLINE = BOUND + [
    "sm__cycles_elapsed.avg.per_second", "dram__cycles_elapsed.avg.per_second",
    "dram__bytes.sum.peak_sustained",
    "sm__ops_path_tensor_src_fp16.sum", "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
    "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum.peak_sustained",
    "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained",
]
STABILITY = {"kernels": ["matmul"], "annotations": ["fp16"], "configs": [256, 1024, 8192],
             "runs": 30, "backend": "cupti", "collectors": ["sm_clock", "temperature", "power"]}

JOBS: dict[str, dict[str, Any]] = {
    "h200-ncu-matmul-sweep": {"kernels": ["matmul"], "configs": MATMUL, "runs": 10,
                              "metrics": BOUND, "backend": "ncu"},
    "h200-ncu-elementwise": {"kernels": ["scale", "vector_add", "fusion"],
                             "configs": ELEMENTWISE, "runs": 10, "metrics": BOUND, "backend": "ncu"},
    "h200-ncu-softmax": {"kernels": ["softmax"], "configs": [1024, 2048, 4096, 8192], "runs": 10,
                         "metrics": BOUND, "backend": "ncu"},
    "h200-cupti-matmul-sweep": {"kernels": ["matmul"], "configs": MATMUL, "runs": 10,
                                "backend": "cupti"},
    "h200-cupti-elementwise": {"kernels": ["scale", "vector_add", "fusion"],
                               "configs": ELEMENTWISE, "runs": 10, "backend": "cupti"},
    "h200-cupti-elementwise-cache-none": {"kernels": ["scale", "vector_add", "fusion"],
                                          "configs": ELEMENTWISE, "runs": 10, "backend": "cupti",
                                          "cache_control": "none"},
    "h200-ncu-j1-fp16": {"kernels": ["matmul"], "annotations": ["fp16"],
                         "configs": [1024, 2048, 4096, 8192], "runs": 10, "backend": "ncu"},
    "h200-cupti-j1-fp16": {"kernels": ["matmul"], "annotations": ["fp16"],
                           "configs": [1024, 2048, 4096, 8192], "runs": 10, "backend": "cupti"},
    # J1 timed with CUDA events (issue 22; tests/gpu/test_events_gpu.py holds it against CUPTI)
    "h200-events-j1-fp16": {"kernels": ["matmul"], "annotations": ["fp16"],
                            "configs": [1024, 2048, 4096, 8192], "runs": 10, "backend": "events"},
    "h200-ncu-roofline": {"kernels": ["matmul"], "configs": [1024, 2048, 4096, 8192], "runs": 5,
                          "metrics": ROOFLINE, "backend": "ncu"},
    "h200-ncu-elementwise-cache-none": {"kernels": ["scale", "vector_add", "fusion"],
                                        "configs": ELEMENTWISE, "runs": 10, "metrics": BOUND,
                                        "backend": "ncu", "cache_control": "none"},
    "h200-cupti-stability": {**STABILITY, "thermal_mode": "auto"},
    # The three example kernel files (examples/kernels/, KPROF_KERNEL_DIRS), default configs.
    "h200-cupti-triton-vector-add": {"kernels": ["triton_vector_add"], "runs": 10,
                                     "backend": "cupti"},
    "h200-ncu-triton-vector-add": {"kernels": ["triton_vector_add"], "runs": 5,
                                   "metrics": BOUND, "backend": "ncu"},
    "h200-cupti-cuda-core-saxpy": {"kernels": ["cuda_core_saxpy"], "runs": 10, "backend": "cupti"},
    "h200-ncu-cuda-core-saxpy": {"kernels": ["cuda_core_saxpy"], "runs": 5, "metrics": BOUND,
                                 "backend": "ncu"},
    "h200-cupti-linear-backward": {"kernels": ["linear_backward"], "runs": 10, "backend": "cupti"},
    # Autograd's backward kernels under Nsight Compute (issue 11): the worker runs autograd on
    # the calling thread while profiling, so the backward region holds its GEMMs on ncu too.
    "h200-ncu-linear-backward": {"kernels": ["linear_backward"], "runs": 3, "metrics": BOUND,
                                 "backend": "ncu"},
    "h200-cupti-stability-thermal-off": {**STABILITY, "thermal_mode": "off"},
    # x*2 alone at 4 Mi fp32 (issue 11): CUPTI with the L2 flushed, and warm (cache_control none)
    "h200-cupti-scale-4mi": {"kernels": ["scale"], "configs": [1 << 22], "runs": 20,
                             "backend": "cupti"},
    # The timeline (issue 13): CUPTI start/end of every launch and a dense NVML trace beside it.
    "h200-cupti-timeline": {"kernels": ["matmul"], "annotations": ["fp16"],
                            "configs": [1024, 8192], "runs": 100, "backend": "cupti",
                            "nvml_interval_ms": 10},
    # Deep dive (issue 13): one matmul point with Nsight Compute's full section set, and the
    # matmul sweep with the detailed set so that its rule results can be digested.
    "h200-ncu-deepdive-fp16-4096": {"kernels": ["matmul"], "annotations": ["fp16"],
                                    "configs": [4096], "runs": 3, "backend": "ncu",
                                    "section_set": "full", "metrics": list(DEEP_DIVE_COLLECT)},
    "h200-ncu-matmul-rules": {"kernels": ["matmul"], "configs": MATMUL, "runs": 3,
                              "metrics": BOUND, "backend": "ncu", "section_set": "detailed"},
    # One run per config (a tester's find): spread and CI95 are undefined, not 0, on both backends.
    "h200-cupti-one-run": {"kernels": ["matmul"], "annotations": ["fp16"],
                           "configs": [1024, 4096], "runs": 1, "backend": "cupti"},
    "h200-ncu-one-run": {"kernels": ["matmul"], "annotations": ["fp16"],
                         "configs": [1024, 4096], "runs": 1, "backend": "ncu"},
    "h200-cupti-scale-4mi-cache-none": {"kernels": ["scale"], "configs": [1 << 22], "runs": 20,
                                        "backend": "cupti", "cache_control": "none"},
}
# Regression gate pairs (issue 13, part 4; tests/gpu/test_gate_h200.py): the same job twice
# (same), TF32 on vs off for one fp32 matmul (regressed, region fp32, config n),
# and an ncu job against its CUPTI twin (not comparable). "env" is set for the worker only.
GATE_KERNELS = str(Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "kernel_files_gate")
GATE_MATMUL = {"kernels": ["matmul"], "annotations": ["fp16"], "configs": [2048, 4096, 8192],
               "runs": 20, "backend": "cupti"}
GATE_TF32 = {"kernels": ["gate_matmul"], "configs": [2048, 4096], "runs": 10, "backend": "cupti"}
JOBS.update({
    "h200-cupti-gate-base": GATE_MATMUL,
    "h200-cupti-gate-again": GATE_MATMUL,
    "h200-ncu-gate-base": {**GATE_MATMUL, "runs": 10, "backend": "ncu"},
    "h200-cupti-gate-tf32": {**GATE_TF32, "env": {"KPROF_KERNEL_DIRS": GATE_KERNELS,
                                                  "KPROF_GATE_TF32": "1"}},
    "h200-cupti-gate-fp32": {**GATE_TF32, "env": {"KPROF_KERNEL_DIRS": GATE_KERNELS,
                                                  "KPROF_GATE_TF32": "0"}},
})


def known_metrics(metrics: list[str]) -> tuple[list[str], list[str]]:
    """(kept, dropped): the metric names this GPU's ncu knows, and the others."""
    from profiling_worker.probes.environment import ncu_metric_bases, probe_ncu, unknown_metrics

    bases = ncu_metric_bases(probe_ncu()["path"] or "ncu")
    dropped = unknown_metrics(tuple(metrics), bases) if bases else []
    return [m for m in metrics if m not in dropped], dropped


def _configs(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Sizes as {"n": size}; a user kernel without configs gets its declared defaults."""
    if "configs" in spec:
        return [{"n": n} for n in spec["configs"]]
    from profiling_worker.catalog.registry import load_registry

    return [dict(c) for c in load_registry().kernels[spec["kernels"][0]].default_configs]


def run_job(results: Path, job_id: str, spec: dict[str, Any], pythonpath: str,
            device_run: str) -> dict[str, Any]:
    """Write the spec, run the worker, return {job, status, wall_s}."""
    dropped: list[str] = []
    spec = dict(spec)
    job_env = spec.pop("env", {})  # worker environment of this job only, not part of the spec
    if spec["backend"] == "ncu" and len(spec.get("metrics", [])) > len(BOUND):
        kept, dropped = known_metrics(spec["metrics"])
        spec = {**spec, "metrics": kept}
    job_dir = results / job_id
    shutil.rmtree(job_dir, ignore_errors=True)  # a fresh recording, never mixed with an old one
    job_dir.mkdir(parents=True)
    spec = {**spec, "configs": _configs(spec), "label": job_id}
    (job_dir / "spec.json").write_text(json.dumps(spec, indent=1))
    env = {**os.environ, **job_env, "PYTHONPATH": pythonpath,
           "KPROF_PROVENANCE": json.dumps({"device_run": device_run,
                                           "recorded_with": "scripts/record_h200.py"})}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(job_dir)],
                          env=env, stdout=subprocess.DEVNULL, timeout=420, check=False)
    manifest = json.loads((job_dir / "manifest.json").read_text()) if (job_dir / "manifest.json").exists() else {}
    return {"job": job_id, "rc": proc.returncode, "status": manifest.get("status"),
            "wall_s": round(time.perf_counter() - t0, 2), "error": manifest.get("error"),
            "dropped_metrics": dropped}


def main() -> None:
    results, ncu_path, cupti_path = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    wanted = sys.argv[4:] or list(JOBS)
    if wanted == ["none"]:  # record nothing (a call that only tests or benchmarks)
        return
    device_run = os.environ.get("DEVICE_RUN", "")
    for job_id in wanted:
        spec = JOBS[job_id]
        path = ncu_path if spec["backend"] == "ncu" else cupti_path
        try:
            out = run_job(results, job_id, spec, path, device_run)
        except subprocess.TimeoutExpired:
            out = {"job": job_id, "status": "timeout"}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
