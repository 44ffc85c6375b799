"""A/A and power study of the regression gate (issue 21): how often identical jobs get a verdict
other than ``same``, and how often a planted slowdown of twice the allowed change is found.

``record`` runs identical jobs of :mod:`benchmarks.gate_aa_kernels.gate_aa` (a GEMM and a
stream region per size) one after another with this project's worker
(``python -m profiling_worker run``), until it has ``--pairs + 1`` jobs or its time budget is
spent. ``analyse`` pairs consecutive jobs (job i as baseline, job i+1 as candidate: N+1 jobs
give N pairs; neighbouring pairs share a job, so they are not independent), or with
``--disjoint`` (and ``record --disjoint``: 2N jobs) jobs 0-1, 2-3, ...: independent pairs, whose
rows can bound a rate (``record --gap-s`` spreads the pairs over time), judges each pair
with the gate (:func:`profiling_worker.bundle.gate.judge.judge`, the CLI's judgement) and counts per
kind of row:

- ``small``: both regions at the first config (n=1024 on the GPU: kernels of 5-10 µs);
- ``gemm``: the GEMM region at the other configs (compute-bound sweep);
- ``memory``: the stream region at the other configs (memory-bound sweep).

**Planted slowdown**: the candidate's per-run durations (its runs table and the aggregated
mean and std dev of the duration metric) multiplied by ``1 + 2 T / 100`` (T the allowed change,
%), its clocks left as they were: a planted effect on real measured noise, not a measured
slowdown. Found = judged ``regressed``.

Rates carry their Clopper-Pearson 95 % interval (exact binomial; C. J. Clopper, E. S. Pearson,
Biometrika 26 (1934) 404-413), from :func:`scipy.stats.beta`.

Usage::

    python benchmarks/gate_aa.py record OUT --backend cpu --pairs 3 --runs 10 [--sizes 64,128]
    python benchmarks/gate_aa.py analyse OUT [--max-slowdown 3] [--json OUT/gate_aa.json]

On the GPU machine: ``bash scripts/gate_aa.sh`` (both backends, then ``analyse``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from profiling_worker.bundle.gate.judge import OUTCOME, GateOptions, judge
from profiling_worker.bundle.gate.sides import GateSide
from profiling_worker.bundle.gate.verdict import Outcome
from profiling_worker.bundle.schema import backends as B, columns as C, metrics as M

KERNELS = Path(__file__).resolve().parent / "gate_aa_kernels"
#: Per backend: what a job asks besides kernels and runs (the clock for the cycle check).
EXTRA: dict[str, dict[str, Any]] = {
    B.NCU: {"metrics": [M.GPU_TIME, M.GPC_HZ]},
    B.CUPTI: {"collectors": ["sm_clock"]},
    B.CPU: {},
}
KINDS = ("small", "gemm", "memory")


def record(out: Path, backend: str, pairs: int, runs: int, budget_s: float,
           sizes: list[int] | None = None, disjoint: bool = False,
           gap_s: float = 0.0) -> list[dict[str, Any]]:
    """Run up to ``pairs + 1`` identical jobs (``2 pairs`` when ``disjoint``: no job in two
    pairs) under ``out/<backend>/aa-<i>``, each its own process (``sizes``: the configs' n,
    None: the kernel's defaults for the backend), waiting ``gap_s`` seconds after each pair so
    the pairs spread over time; stop starting new ones once ``budget_s`` seconds have passed.
    Returns one {job, rc, status, wall_s} per job."""
    root = out / backend
    root.mkdir(parents=True, exist_ok=True)
    spec = {"kernels": ["gate_aa"], "runs": runs, "warmup": 1, "backend": backend,
            "label": f"gate A/A {backend}", **EXTRA[backend],
            **({"configs": [{"n": n} for n in sizes]} if sizes else {})}
    dirs = os.pathsep.join(filter(None, [str(KERNELS), os.environ.get("KPROF_KERNEL_DIRS")]))
    env = {**os.environ, "KPROF_KERNEL_DIRS": dirs, "OMP_NUM_THREADS": "1"}
    start, done = time.perf_counter(), []
    for i in range(2 * pairs if disjoint else pairs + 1):
        if time.perf_counter() - start > budget_s:
            break
        if gap_s and i and i % 2 == 0:
            time.sleep(gap_s)
        job = root / f"aa-{i:02d}"
        job.mkdir()
        (job / C.SPEC_FILE).write_text(json.dumps(spec))
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(job)],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, timeout=300, check=False)
        status = json.loads((job / "manifest.json").read_text()).get("status") \
            if (job / "manifest.json").is_file() else None
        line = {"job": job.name, "rc": proc.returncode, "status": status,
                "wall_s": round(time.perf_counter() - t0, 2)}
        print(json.dumps(line), flush=True)
        done.append(line)
    return done


def planted(side: GateSide, factor: float) -> GateSide:
    """``side`` with every run's duration (and the aggregated mean and std dev of it) times
    ``factor``; clocks unchanged (module docstring)."""
    metric = side.duration_metric
    agg, runs = side.aggregated.copy(), side.runs.copy()
    rows = agg[C.METRIC] == metric
    agg.loc[rows, [C.AVG, C.STD]] = agg.loc[rows, [C.AVG, C.STD]] * factor
    timed = runs[C.METRIC] == metric
    runs.loc[timed, C.VALUE] = runs.loc[timed, C.VALUE].astype(float) * factor
    return dataclasses.replace(side, aggregated=agg, runs=runs)


def kind_of(rows: pd.DataFrame, first_config: Any) -> pd.Series:
    """small / gemm / memory per gate row (module docstring)."""
    first = rows["n"] == first_config
    return pd.Series(["small" if f else ("gemm" if a == "gemm" else "memory")
                      for f, a in zip(first, rows[C.ANNOTATION])], index=rows.index)


def clopper_pearson(k: int, n: int) -> tuple[float, float]:
    """Exact 95 % interval of a binomial rate ``k / n`` (module docstring)."""
    from scipy.stats import beta

    if n == 0:
        return float("nan"), float("nan")
    low = 0.0 if k == 0 else float(beta.ppf(0.025, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(0.975, k + 1, n - k))
    return low, high


def _rate(k: int, n: int) -> dict[str, Any]:
    low, high = clopper_pearson(k, n)
    return {"k": k, "n": n, "rate_pct": 100.0 * k / n if n else None,
            "ci95_pct": [100.0 * low, 100.0 * high]}


def analyse_backend(root: Path, allowed_pct: float, disjoint: bool = False) -> dict[str, Any]:
    """A/A and planted-slowdown counts of one backend's jobs (module docstring); ``disjoint``:
    jobs 0-1, 2-3, ... (independent pairs) instead of every consecutive pair."""
    jobs = [GateSide.load(p) for p in sorted(root.glob("aa-*"))
            if (p / "manifest.json").is_file()]
    jobs = [j for j in jobs if j.manifest.get("status") == "done"]
    options, factor = GateOptions(max_slowdown_pct=allowed_pct), 1 + 2 * allowed_pct / 100
    aa: dict[str, Counter[str]] = {k: Counter() for k in KINDS}
    found: dict[str, Counter[str]] = {k: Counter() for k in KINDS}
    pairs = list(zip(jobs[::2], jobs[1::2]) if disjoint else zip(jobs, jobs[1:]))
    for base, cand in pairs:
        first = (base.manifest["spec"]["configs"] or [{}])[0].get("n")
        for counts, candidate in ((aa, cand), (found, planted(cand, factor))):
            rows = judge(base, candidate, options).rows
            for kind, outcome in zip(kind_of(rows, first), rows[OUTCOME]):
                counts[kind][outcome] += 1
    out: dict[str, Any] = {"jobs": len(jobs), "pairs": len(pairs),
                           "pairing": "disjoint" if disjoint else "consecutive",
                           "planted_factor": factor, "kinds": {}}
    for kind in KINDS:
        n_aa, n_pl = sum(aa[kind].values()), sum(found[kind].values())
        out["kinds"][kind] = {
            "aa_outcomes": dict(aa[kind]), "planted_outcomes": dict(found[kind]),
            "aa_not_same": _rate(n_aa - aa[kind][Outcome.SAME.value], n_aa),
            "planted_found": _rate(found[kind][Outcome.REGRESSED.value], n_pl)}
    return out


def markdown(results: dict[str, Any], allowed_pct: float) -> str:
    """The table the gate's documentation quotes."""
    lines = [f"| backend | kind | pairs | rows | A/A not `same` (95 % CI) | planted "
             f"+{2 * allowed_pct:g} % found (95 % CI) | A/A outcomes |",
             "| --- | --- | ---: | ---: | ---: | ---: | --- |"]
    for backend, res in results.items():
        for kind, k in res["kinds"].items():
            a, p = k["aa_not_same"], k["planted_found"]
            if not a["n"]:
                continue
            lines.append(
                f"| {backend} | {kind} | {res['pairs']} | {a['n']} | {a['rate_pct']:.1f} % "
                f"({a['ci95_pct'][0]:.1f}-{a['ci95_pct'][1]:.1f}) | {p['rate_pct']:.1f} % "
                f"({p['ci95_pct'][0]:.1f}-{p['ci95_pct'][1]:.1f}) | "
                + ", ".join(f"{n} {o}" for o, n in sorted(k["aa_outcomes"].items())) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="run identical jobs")
    rec.add_argument("out", type=Path)
    rec.add_argument("--backend", choices=list(EXTRA), required=True)
    rec.add_argument("--pairs", type=int, default=20)
    rec.add_argument("--runs", type=int, default=10)
    rec.add_argument("--budget-s", type=float, default=float("inf"),
                     help="start no job after this many seconds")
    rec.add_argument("--sizes", type=lambda t: [int(x) for x in t.split(",")],
                     help="configs' n, e.g. 1024,2048,4096 (default: the kernel's)")
    rec.add_argument("--disjoint", action="store_true", help="2 x pairs jobs, no job shared")
    rec.add_argument("--gap-s", type=float, default=0.0, help="seconds to wait between pairs")
    ana = sub.add_parser("analyse", help="judge consecutive jobs, A/A and planted")
    ana.add_argument("out", type=Path)
    ana.add_argument("--max-slowdown", type=float, default=GateOptions().max_slowdown_pct)
    ana.add_argument("--json", type=Path)
    ana.add_argument("--disjoint", action="store_true", help="judge jobs 0-1, 2-3, ... only")
    args = parser.parse_args(argv)
    if args.command == "record":
        lines = record(args.out, args.backend, args.pairs, args.runs, args.budget_s, args.sizes,
                       args.disjoint, args.gap_s)
        return 0 if any(line["status"] == "done" for line in lines) else 1
    results = {p.name: analyse_backend(p, args.max_slowdown, args.disjoint)
               for p in sorted(args.out.iterdir()) if p.is_dir() and any(p.glob("aa-*"))}
    if args.json:
        args.json.write_text(json.dumps({"max_slowdown_pct": args.max_slowdown,
                                         "backends": results}, indent=1))
    print(markdown(results, args.max_slowdown), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
