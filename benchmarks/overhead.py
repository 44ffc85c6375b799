"""Dashboard worker vs a bare nsight-python script, measured side by side in one run.

Job J1 (fp16 ``a @ b``, n = 1024..8192, 10 runs, duration only). For each backend it runs,
``--repeats`` times each and interleaved: the bare script (benchmarks/bare_nsight_j1.py), the
worker cold (``python -m profiling_worker run``, one process per job), and, for CUPTI, a new
job manager with a warm worker and two jobs through it, each timed from submit to result: the
first (which starts the worker) and its repeat. Prints and writes JSON: wall times, the
ratios cold / bare and first warm job / cold (min / median / max, pair by pair), each process's
seconds from its last result on disk to its exit, and the profiling efficiency (sum of kernel
time x runs over wall time).

Usage: ``python benchmarks/overhead.py OUT_JSON NCU_PYTHONPATH CUPTI_PYTHONPATH [--repeats 3]``
"""

from __future__ import annotations

import argparse
import collections
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


def time_warm(root: Path, pythonpath: str, jobs: int) -> tuple[list[float], list[float]]:
    """``jobs`` J1 jobs through a new job manager with a warm CUPTI worker: seconds from submit
    to result per job (the first starts the worker) and each job's kernel time (s)."""
    from app.services.job_manager import JobManager
    from profiling_worker.catalog.builtin import CATALOG
    from profiling_worker.schema.spec import validate_spec

    store = Path(tempfile.mkdtemp(prefix="warm-", dir=root))
    manager = JobManager(store, sys.executable, env=_env(f"{REPO}:{pythonpath}"), warm=True)
    walls, kernels = [], []
    try:
        for _ in range(jobs):
            t0 = time.perf_counter()
            job_id = manager.submit(validate_spec({**J1, "backend": "cupti"}, CATALOG))
            assert manager.wait(job_id, 300) == "done", manager.get(job_id).error
            walls.append(time.perf_counter() - t0)
            kernels.append(kernel_time_s(store / job_id))
    finally:
        manager.shutdown()
    return walls, kernels


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
        runs: dict[str, list[float]] = collections.defaultdict(list)
        for _ in range(args.repeats):  # interleaved, so drift hits all alike
            wall, after = time_bare(backend, root, path, libcupti)
            runs["bare_s"].append(wall)
            runs["bare_last_line_to_exit_s"].append(after)
            wall, kernels, after = time_cold(backend, root, path)
            runs["cold_s"].append(wall)
            runs["cold_manifest_to_exit_s"].append(after)
            runs["cold_eff"].append(kernels / wall)
            if backend == "cupti":  # a new warm worker: its first job, then a repeat
                walls, kernels_s = time_warm(root, args.cupti_path, jobs=2)
                runs["warm_first_job_s"].append(walls[0])
                runs["warm_s"].append(walls[1])
                runs["warm_eff"].append(kernels_s[1] / walls[1])
        pairs = zip(runs["cold_s"], runs["bare_s"])
        result[backend] = {**{k: v for k, v in runs.items() if not k.endswith("_eff")},
                           "cold_over_bare": _stats([c / b for c, b in pairs]),
                           "cold_efficiency": _stats(runs["cold_eff"])}
        if backend == "cupti":
            pairs = zip(runs["warm_first_job_s"], runs["cold_s"])
            result[backend].update(
                first_warm_over_cold=_stats([w / c for w, c in pairs]),
                warm_submit_to_result=_stats(runs["warm_s"]),
                warm_efficiency=_stats(runs["warm_eff"]))
        args.out.write_text(json.dumps(result, indent=1))  # keep what is measured so far
    print(json.dumps(result, indent=1))
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
