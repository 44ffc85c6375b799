"""runs "auto" against fixed runs (issue 22): the same jobs, CI95 half-widths and GPU time.

Two jobs: J1 (fp16 ``a @ b``, n = 1024..8192) and a memory-bound sweep (scale, vector_add and
fusion, n = 2^20..2^26). Each runs with ``runs`` fixed at ``--runs`` and with ``runs: "auto"``
(target ``--target`` % relative CI95 half-width, 5 to ``--runs`` runs, ``--budget`` s), through
the worker CLI (``python -m profiling_worker run``), one process per job, ``--repeats`` times,
interleaved. Per config: the runs taken and the relative CI95 half-width of its widest annotation
(Student-t, profiling_worker/bundle/stats/adaptive.py ``rel_ci95_pct``, from the bundle's runs table). Per job:
GPU time (sum of the measured kernel durations over every run, s) and the job's wall-clock.

Usage: ``python benchmarks/adaptive_runs.py OUT_JSON [--backend cupti] [--runs 100]
[--target 0.5] [--budget 120] [--repeats 1]``; ``--backend cpu`` runs the kernels' small cpu
sizes on the host timer (a dry run of the script, not a GPU figure). Prints a Markdown table
for docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from profiling_worker.bundle.stats.adaptive import rel_ci95_pct  # noqa: E402
from profiling_worker.bundle.schema import columns as C  # noqa: E402

JOBS: dict[str, dict[str, Any]] = {
    "J1": {"kernels": ["matmul"], "annotations": ["fp16"],
           "configs": [{"n": n} for n in (1024, 2048, 4096, 8192)]},
    "memory-bound": {"kernels": ["scale", "vector_add", "fusion"],
                     "configs": [{"n": 1 << p} for p in (20, 22, 24, 26)]},
}
CPU_CONFIGS = {"J1": [{"n": n} for n in (32, 64, 128)],
               "memory-bound": [{"n": 1 << p} for p in (12, 14, 16)]}


def spec_of(job: str, backend: str, runs: int, target: float | None, budget: float
            ) -> dict[str, Any]:
    """The spec of one benchmark job: fixed ``runs``, or runs "auto" up to ``runs``."""
    spec = {**JOBS[job], "backend": backend, "label": f"adaptive-bench {job}"}
    if backend == "cpu":
        spec["configs"] = CPU_CONFIGS[job]
    if target is None:
        return {**spec, "runs": runs}
    return {**spec, "runs": "auto", "run_target": {"rel_ci95_pct": target, "min_runs": 5,
                                                   "max_runs": runs, "budget_s": budget}}


def run_job(root: Path, spec: dict[str, Any]) -> Path:
    """Run the worker on ``spec`` in a new job folder under ``root``; returns the folder.

    Raises:
        RuntimeError: the job did not finish as done (its error in the message).
    """
    job = Path(tempfile.mkdtemp(prefix="adaptive-", dir=root))
    (job / C.SPEC_FILE).write_text(json.dumps(spec))
    subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(job)], cwd=REPO,
                   capture_output=True, text=True, timeout=1800, check=False)
    manifest = json.loads((job / "manifest.json").read_text())
    if manifest.get("status") != "done":
        raise RuntimeError(f"{spec['label']}: {manifest.get('status')}: {manifest.get('error')}")
    return job


def measure(job: Path) -> dict[str, Any]:
    """Per config runs and widest relative CI95 half-width (%), GPU time (s), wall-clock (s)."""
    manifest = json.loads((job / "manifest.json").read_text())
    runs = pd.read_parquet(job / C.TABLES_DIR / "runs.parquet")
    configs = []
    for config, group in runs.groupby(C.CONFIG, sort=True):
        widths = [rel_ci95_pct(g.sort_values(C.RUN)[C.VALUE].tolist())
                  for _a, g in group.groupby(C.ANNOTATION)]
        values = manifest["spec"]["configs"][int(config)]
        configs.append({"config": int(config), "label": ", ".join(f"{k}={v}" for k, v in
                                                                  values.items()),
                        "runs": int(group[C.RUN].nunique()),
                        "rel_ci95_pct": round(max(widths), 4)})
    return {"configs": configs, "gpu_time_s": round(float(runs[C.VALUE].sum()) / 1e9, 6),
            "wall_s": manifest.get("wall_s"),
            "auto_runs": (manifest.get("backend") or {}).get("auto_runs")}


def compare(job: str, backend: str, root: Path, runs: int, target: float, budget: float
            ) -> dict[str, Any]:
    """One fixed and one auto job of ``job``; both measured (:func:`measure`)."""
    fixed = measure(run_job(root, spec_of(job, backend, runs, None, budget)))
    auto = measure(run_job(root, spec_of(job, backend, runs, target, budget)))
    return {"job": job, "backend": backend, "runs": runs, "target_pct": target,
            "budget_s": budget, "fixed": fixed, "auto": auto,
            "gpu_time_ratio": round(auto["gpu_time_s"] / fixed["gpu_time_s"], 4)}


def markdown(results: list[dict[str, Any]]) -> str:
    """The table for docs/performance.md: one row per job x config of every repeat."""
    lines = ["| job | config | fixed runs | fixed CI95 ± % | auto runs | auto CI95 ± % | "
             "GPU time auto / fixed | wall s fixed / auto |", "|---|---|---|---|---|---|---|---|"]
    for r in results:
        for f, a in zip(r["fixed"]["configs"], r["auto"]["configs"]):
            lines.append(f"| {r['job']} | {f['label']} | {f['runs']} | {f['rel_ci95_pct']:.3f} | {a['runs']} | "
                         f"{a['rel_ci95_pct']:.3f} | {r['gpu_time_ratio']:.3f} | "
                         f"{r['fixed']['wall_s']} / {r['auto']['wall_s']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_json", type=Path)
    parser.add_argument("--backend", default="cupti", choices=("cupti", "cpu"))
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--target", type=float, default=0.5)
    parser.add_argument("--budget", type=float, default=120.0)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = [compare(job, args.backend, Path(tmp), args.runs, args.target, args.budget)
                   for _ in range(args.repeats) for job in JOBS]
    args.out_json.write_text(json.dumps(results, indent=1))
    print(markdown(results))


if __name__ == "__main__":
    main()
