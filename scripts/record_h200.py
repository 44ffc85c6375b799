"""Record the bundled H200 results with this project's worker (run by scripts/gpu_check.sh).

Usage: ``python scripts/record_h200.py RESULTS_DIR NCU_PYTHONPATH CUPTI_PYTHONPATH [JOB ...]``.
Each job runs as ``python -m profiling_worker run`` with the PYTHONPATH that holds the
nsight-python version its backend needs (0.9.6 for ncu 2025.3.1, 1.1 for CUPTI).
Prints one JSON line per job: job id, status, wall time (s).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

MATMUL = [512, 1024, 2048, 4096, 8192]
ELEMENTWISE = [1 << 20, 1 << 22, 1 << 24, 1 << 26]
BOUND = ["gpu__time_duration.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
         "dram__throughput.avg.pct_of_peak_sustained_elapsed",
         "gpc__cycles_elapsed.avg.per_second", "dram__bytes_read.sum", "dram__bytes_write.sum"]

JOBS: dict[str, dict] = {
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
    "h200-ncu-j1-fp16": {"kernels": ["matmul"], "annotations": ["fp16"],
                         "configs": [1024, 2048, 4096, 8192], "runs": 10, "backend": "ncu"},
    "h200-cupti-j1-fp16": {"kernels": ["matmul"], "annotations": ["fp16"],
                           "configs": [1024, 2048, 4096, 8192], "runs": 10, "backend": "cupti"},
}


def run_job(results: Path, job_id: str, spec: dict, pythonpath: str, device_run: str) -> dict:
    """Write the spec, run the worker, return {job, status, wall_s}."""
    job_dir = results / job_id
    job_dir.mkdir(parents=True, exist_ok=True)
    spec = {**spec, "configs": [{"n": n} for n in spec["configs"]], "label": job_id}
    (job_dir / "spec.json").write_text(json.dumps(spec, indent=1))
    env = {**os.environ, "PYTHONPATH": pythonpath,
           "KPROF_PROVENANCE": json.dumps({"device_run": device_run,
                                           "recorded_with": "scripts/record_h200.py"})}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(job_dir)],
                          env=env, stdout=subprocess.DEVNULL, timeout=420, check=False)
    manifest = json.loads((job_dir / "manifest.json").read_text()) if (job_dir / "manifest.json").exists() else {}
    return {"job": job_id, "rc": proc.returncode, "status": manifest.get("status"),
            "wall_s": round(time.perf_counter() - t0, 2), "error": manifest.get("error")}


def main() -> None:
    results, ncu_path, cupti_path = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    wanted = sys.argv[4:] or list(JOBS)
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
