"""Dashboard worker vs a bare nsight-python script, measured side by side in one run.

Job J1 (fp16 ``a @ b``, n = 1024..8192, 10 runs, duration only). In ``--repeats`` rounds, each
backend runs one pair: the bare script (benchmarks/bare_nsight_j1.py) and the worker cold
(``python -m profiling_worker run``, one process per job), the side that goes first
alternating by round; in the first ``--warm-rounds`` rounds a new job manager with a warm
CUPTI worker then runs 1 + ``--warm-jobs`` jobs, each timed from submit to result (the first
starts the worker). Each process is timed to its result on disk (the bare script's last line,
the worker's manifest: what the user waits for) and to its exit, apart. Prints and writes JSON
after every round: the raw times, and per figure the paired ratio with its CI95, Wilcoxon p
and verdict (benchmarks/paired.py), and the profiling efficiency (sum of kernel time x runs
over wall time). Without a profiler, each cold job's steps are read from its own events
(:func:`cold_steps`) and each bare script's nsight-python call from its JSON (``bare_call_s``),
so where a cold job's time goes is known pair by pair (``cold_steps_median_s``).

Usage: ``python benchmarks/overhead.py OUT_JSON NCU_PYTHONPATH CUPTI_PYTHONPATH [--repeats 10]
[--warm-rounds 3] [--warm-jobs 3] [--backends ncu,cupti]``
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
from typing import Any

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


def time_bare(backend: str, root: Path, pythonpath: str, libcupti: str
              ) -> tuple[float, float, float]:
    """The bare script's wall (s), the seconds from its last line to its exit (the
    interpreter's teardown, plus the reaping) and its nsight-python call (s)."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, str(REPO / "benchmarks" / "bare_nsight_j1.py"), backend,
                    str(root), libcupti], env=_env(pythonpath), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall, ended = time.perf_counter() - t0, time.time()
    said = json.loads((root / f"bare_{backend}.json").read_text())
    return wall, ended - said["end_epoch_s"], said["profile_call_s"]


#: A cold job's steps, each read from its events.jsonl (the manifest: its mtime).
COLD_STEPS = ("prepared", "first_run", "last_run", "collected", "result")


def cold_steps(job: Path, started: float) -> dict[str, float]:
    """Seconds from a cold worker's start (``started``: epoch s, just before the process was
    started) to each step of its job, from the events it wrote (``t``, ms): ``prepared`` (its
    ``backend ...`` log line: the worker's imports, the spec and the environment probe done),
    ``first_run`` and ``last_run`` (the progress of the first and last profiled run: before the
    first, nsight-python's and torch's imports and the warm-up), ``collected`` (the ``writing
    bundle`` progress: nsight-python's call returned) and ``result`` (the manifest written:
    the tables, the run audit and the checks). A step whose event the job lacks is left out
    (Nsight Compute's launch mode counts its runs in the child under ncu).
    """
    from profiling_worker.bundle.schema.events import parse_line

    lines = (job / "events.jsonl").read_text(encoding="utf-8").splitlines()
    events = [e for e in map(parse_line, lines) if e]
    runs = [e["t"] for e in events if e["event"] == "progress" and e.get("stage") == "profiling"]
    at = {"prepared": next((e["t"] for e in events if e["event"] == "log"
                            and str(e.get("message", "")).startswith("backend ")), None),
          "first_run": runs[0] if runs else None, "last_run": runs[-1] if runs else None,
          "collected": next((e["t"] for e in events if e.get("stage") == "writing bundle"),
                            None),
          "result": (job / "manifest.json").stat().st_mtime}
    return {step: at[step] - started for step in COLD_STEPS if at[step] is not None}


def time_cold(backend: str, root: Path, pythonpath: str
              ) -> tuple[float, float, float, dict[str, float]]:
    """The cold worker's wall (s), its kernels' time (s), the seconds from its manifest
    on disk (the bundle's last file) to its exit, and its :func:`cold_steps`."""
    job = _job_dir(root, backend)
    t0, started = time.perf_counter(), time.time()
    subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(job)], cwd=REPO,
                   env=_env(pythonpath), check=True, stdout=subprocess.DEVNULL)
    wall, ended = time.perf_counter() - t0, time.time()
    return (wall, kernel_time_s(job), ended - (job / "manifest.json").stat().st_mtime,
            cold_steps(job, started))


def time_warm(root: Path, pythonpath: str, jobs: int) -> tuple[list[float], list[float]]:
    """``jobs`` J1 jobs through a new job manager with a warm CUPTI worker: seconds from submit
    to result per job (the first starts the worker) and each job's kernel time (s)."""
    from app.services.job_manager import JobManager
    from profiling_worker.catalog.builtin import CATALOG
    from profiling_worker.bundle.schema.spec import validate_spec

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


def to_result(runs: dict[str, list[Any]], side: str) -> list[float]:
    """Seconds from a process's start to its result on disk (what the user waits for): its
    wall to exit less the seconds from its last result to its exit (the bare script's last
    line, the worker's manifest). Works on every ``overhead.json`` since device run s6run1."""
    after = "bare_last_line_to_exit_s" if side == "bare" else "cold_manifest_to_exit_s"
    return [w - a for w, a in zip(runs[f"{side}_s"], runs[after])]


def summarise(backend: str, runs: dict[str, list[Any]]) -> dict[str, Any]:
    """The raw lists of one backend plus, pair by pair (benchmarks/paired.py), cold / bare to
    the result and to exit, and for CUPTI first warm job / cold and the warm repeat."""
    from paired import paired_ratio  # benchmarks/ is on sys.path: the script's own folder

    out: dict[str, Any] = {k: v for k, v in runs.items() if not k.endswith("_eff")}
    out["cold_over_bare_to_result"] = paired_ratio(to_result(runs, "cold"), to_result(runs, "bare"))
    out["cold_over_bare"] = paired_ratio(runs["cold_s"], runs["bare_s"])  # to exit
    out["cold_efficiency"] = _stats(runs["cold_eff"])
    if runs.get("cold_steps"):  # each step's median over the cold jobs, s from the start
        out["cold_steps_median_s"] = {
            step: statistics.median(j[step] for j in runs["cold_steps"] if step in j)
            for step in COLD_STEPS if any(step in j for j in runs["cold_steps"])}
    if runs.get("bare_call_s"):
        out["bare_call_median_s"] = statistics.median(runs["bare_call_s"])
    if runs.get("warm_s"):
        n = len(runs["warm_first_job_s"])
        out["first_warm_over_cold"] = paired_ratio(runs["warm_first_job_s"], runs["cold_s"][:n])
        out["warm_submit_to_result"] = _stats(runs["warm_s"])
        out["warm_efficiency"] = _stats(runs["warm_eff"])
    return out


def one_round(backend: str, path: str, root: Path, libcupti: str, bare_first: bool,
              runs: dict[str, list[Any]]) -> None:
    """One pair (bare script, cold worker) in the order given, appended to ``runs``."""
    for side in ("bare", "cold") if bare_first else ("cold", "bare"):
        if side == "bare":
            wall, after, call = time_bare(backend, root, path, libcupti)
            runs["bare_s"].append(wall)
            runs["bare_last_line_to_exit_s"].append(after)
            runs["bare_call_s"].append(call)
        else:
            wall, kernels, after, steps = time_cold(backend, root, path)
            runs["cold_s"].append(wall)
            runs["cold_manifest_to_exit_s"].append(after)
            runs["cold_eff"].append(kernels / wall)
            runs["cold_steps"].append(steps)
    runs["bare_first"].append(float(bare_first))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("ncu_path")
    parser.add_argument("cupti_path")
    parser.add_argument("--repeats", type=int, default=10, help="pairs per backend")
    parser.add_argument("--warm-rounds", type=int, default=3,
                        help="rounds that also start a new job manager with a warm CUPTI worker")
    parser.add_argument("--warm-jobs", type=int, default=3, help="repeats after its first job")
    parser.add_argument("--backends", default="ncu,cupti")
    args = parser.parse_args()
    from profiling_worker.probes.environment import find_libcupti

    sys.path[1:1] = args.cupti_path.split(os.pathsep)  # find the carried libcupti >= 13.4 first
    libcupti = find_libcupti()[0]["path"]
    root = Path(tempfile.mkdtemp(prefix="overhead-"))
    paths = {"ncu": f"{REPO}:{args.ncu_path}", "cupti": f"{REPO}:{args.cupti_path}"}
    backends = args.backends.split(",")
    runs = {b: collections.defaultdict(list) for b in backends}
    result: dict[str, Any] = {}
    for i in range(args.repeats):  # rounds: both backends, sides alternating who goes first
        for backend in backends:
            one_round(backend, paths[backend], root, libcupti, i % 2 == 0, runs[backend])
            if backend == "cupti" and i < args.warm_rounds:  # a new warm worker, then repeats
                walls, kernels_s = time_warm(root, args.cupti_path, jobs=1 + args.warm_jobs)
                runs[backend]["warm_first_job_s"].append(walls[0])
                runs[backend]["warm_s"].extend(walls[1:])
                runs[backend]["warm_eff"].extend(k / w for k, w in zip(kernels_s[1:], walls[1:]))
            result[backend] = summarise(backend, runs[backend])
        args.out.write_text(json.dumps(result, indent=1))  # a call cut short keeps its rounds
        print(f"round {i + 1}: " + ", ".join(
            f"{b} cold/bare to result {result[b]['cold_over_bare_to_result']['estimate']:.3f}"
            for b in backends), flush=True)
    print(json.dumps(result, indent=1))
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
