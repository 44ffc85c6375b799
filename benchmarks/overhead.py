"""Dashboard worker vs a bare nsight-python script, measured side by side in one run.

Job J1 (fp16 ``a @ b``, n = 1024..8192, 10 runs, duration only). For each backend it runs,
``--repeats`` times each and interleaved: the bare script (benchmarks/bare_nsight_j1.py), the
worker cold (``python -m profiling_worker run``, one process per job), and, for CUPTI, jobs
through the dashboard's job manager on a warm worker (timed from submit to result; the first
job, which starts the worker, is reported apart). Prints and writes JSON: wall times, ratios to the bare script (min / median / max) and
the profiling efficiency (sum of kernel time x runs over wall time).

Usage: ``python benchmarks/overhead.py OUT_JSON NCU_PYTHONPATH CUPTI_PYTHONPATH [--repeats 3]``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
J1 = {"kernels": ["matmul"], "annotations": ["fp16"],
      "configs": [{"n": n} for n in (1024, 2048, 4096, 8192)], "runs": 10}


def _env(pythonpath: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": pythonpath}


def _job_dir(root: Path, backend: str) -> Path:
    job = Path(tempfile.mkdtemp(prefix=f"j1-{backend}-", dir=root))
    (job / "spec.json").write_text(json.dumps({**J1, "backend": backend}))
    return job


def kernel_time_s(job: Path) -> float:
    """Sum of the job's per-run kernel durations (s): sum of kernel time x runs."""
    runs = pd.read_parquet(job / "tables" / "runs.parquet")
    return float(runs[runs["Metric"] == "gpu__time_duration.sum"]["Value"].sum()) / 1e9


def time_bare(backend: str, root: Path, pythonpath: str, libcupti: str) -> tuple[float, float]:
    """The bare script's wall (s), and the seconds from its last line to its exit (the
    interpreter's teardown, plus the reaping)."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, str(REPO / "benchmarks" / "bare_nsight_j1.py"), backend,
                    str(root), libcupti], env=_env(pythonpath), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall, ended = time.perf_counter() - t0, time.time()
    return wall, ended - json.loads((root / f"bare_{backend}.json").read_text())["end_epoch_s"]


def time_cold(backend: str, root: Path, pythonpath: str) -> tuple[float, float, float]:
    """The cold worker's wall (s), its kernels' time (s), and the seconds from its manifest
    on disk (the bundle's last file) to its exit."""
    job = _job_dir(root, backend)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(job)], cwd=REPO,
                   env=_env(pythonpath), check=True, stdout=subprocess.DEVNULL)
    wall, ended = time.perf_counter() - t0, time.time()
    return wall, kernel_time_s(job), ended - (job / "manifest.json").stat().st_mtime


def time_warm(root: Path, pythonpath: str, repeats: int) -> tuple[float, list[float], list[float]]:
    """J1 through the dashboard's job manager with a warm CUPTI worker: seconds from submit to
    result per job (the first job starts the worker and is reported apart)."""
    from app.services.job_manager import JobManager
    from profiling_worker.catalog.builtin import CATALOG
    from profiling_worker.schema.spec import validate_spec

    manager = JobManager(root / "warm", sys.executable, env=_env(f"{REPO}:{pythonpath}"),
                         warm=True)
    walls, kernels = [], []
    try:
        for _ in range(repeats + 1):
            t0 = time.perf_counter()
            job_id = manager.submit(validate_spec({**J1, "backend": "cupti"}, CATALOG))
            assert manager.wait(job_id, 300) == "done", manager.get(job_id).error
            walls.append(time.perf_counter() - t0)
            kernels.append(kernel_time_s(root / "warm" / job_id))
    finally:
        manager.shutdown()
    return walls[0], walls[1:], kernels[1:]


def _stats(values: list[float]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("ncu_path")
    parser.add_argument("cupti_path")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from profiling_worker.environment import find_libcupti

    sys.path[1:1] = args.cupti_path.split(os.pathsep)  # find the carried libcupti >= 13.4 first
    libcupti = find_libcupti()[0]["path"]
    root = Path(tempfile.mkdtemp(prefix="overhead-"))
    result: dict[str, dict] = {}
    for backend, path in (("ncu", f"{REPO}:{args.ncu_path}"), ("cupti", f"{REPO}:{args.cupti_path}")):
        bare, cold, eff, bare_exit, cold_exit = [], [], [], [], []
        for _ in range(args.repeats):  # interleaved, so drift hits both alike
            wall, after = time_bare(backend, root, path, libcupti)
            bare.append(wall)
            bare_exit.append(after)
            wall, kernels, after = time_cold(backend, root, path)
            cold.append(wall)
            cold_exit.append(after)
            eff.append(kernels / wall)
        result[backend] = {"bare_s": bare, "cold_s": cold, "bare_last_line_to_exit_s": bare_exit,
                           "cold_manifest_to_exit_s": cold_exit,
                           "cold_over_bare": _stats([c / b for c, b in zip(cold, bare)]),
                           "cold_efficiency": _stats(eff)}
        args.out.write_text(json.dumps(result, indent=1))  # keep what is measured so far
    first, walls, kernels = time_warm(root, args.cupti_path, args.repeats)
    result["cupti"].update(warm_first_job_s=first, warm_s=walls,
                           warm_submit_to_result=_stats(walls),
                           warm_efficiency=_stats([k / w for k, w in zip(kernels, walls)]))
    args.out.write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
