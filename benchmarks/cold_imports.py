"""What a cold CUPTI job imports that the bare nsight-python script does not (issue 40).

``benchmarks/overhead.py`` finds the cold CUPTI job slower to its result than the bare script
(1.07x in device run "gpu 2026-12-07-s23merged") and places the gap before the first profiled
run. This script names it: each round runs the bare script (``bare_nsight_j1.py``) and a cold
worker on job J1 under ``python -X importtime``, alternating who goes first, and compares the
two processes' import trees. A module's cost is its ``self`` time (us) as ``-X importtime``
prints it (CPython's import system, its own time without its sub-imports); importtime's own
cost inflates every figure a little on both sides alike.

Writes JSON: per side the median total import time (s) and, for modules only the worker
imports, each module's median self time (ms), largest first, with the top-level package that
brought it in; plus the cold job's steps (``overhead.cold_steps``) per round.
Usage, on the GPU machine: ``python benchmarks/cold_imports.py OUT_JSON CUPTI_PATH
[--rounds 3]`` (CUPTI_PATH: scripts/gpu_env.sh's).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

#: ``import time:       123 |        456 |   name`` (self us, cumulative us, indented name).
LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def parse_importtime(stderr: str) -> dict[str, tuple[int, str]]:
    """``-X importtime`` lines -> {module: (self us, top-level module that imported it)}.

    A line's indent is its depth; CPython prints a module after its sub-imports, so a module's
    top-level owner is the next depth-0 line below it."""
    rows = [(int(m[1]), len(m[3]) // 2, m[4]) for m in map(LINE.match, stderr.splitlines()) if m]
    out: dict[str, tuple[int, str]] = {}
    owner = ""
    for self_us, depth, name in reversed(rows):
        owner = name if depth == 0 else owner
        out[name] = (self_us, owner)
    return out


def run_side(side: str, root: Path, pythonpath: str, libcupti: str) -> tuple[str, dict]:
    """One process of ``side`` (bare or cold) under ``-X importtime``: its import lines (the
    worker's stderr and its ``worker.log``), and for the cold worker its steps (s from start)."""
    from overhead import _env, _job_dir, cold_steps

    imp = [sys.executable, "-X", "importtime"]
    if side == "bare":
        cmd = imp + [str(REPO / "benchmarks" / "bare_nsight_j1.py"), "cupti", str(root), libcupti]
        job = None
    else:
        job = _job_dir(root, "cupti")
        cmd = imp + ["-m", "profiling_worker", "run", str(job)]
    started = time.time()
    done = subprocess.run(cmd, cwd=REPO, env=_env(pythonpath), capture_output=True, text=True,
                          check=True)
    if job is None:
        return done.stderr, {}
    # the worker points fds 1 and 2 at its worker.log once its first imports are done
    log = (job / "worker.log").read_text(encoding="utf-8", errors="replace")
    return done.stderr + log, cold_steps(job, started)


def summarise(trees: dict[str, list[dict[str, tuple[int, str]]]],
              steps: list[dict]) -> dict:
    """Median totals per side and the worker-only modules' median self time (ms)."""
    def total_s(tree: dict[str, tuple[int, str]]) -> float:
        return sum(us for us, _ in tree.values()) / 1e6

    bare_mods = set().union(*(t.keys() for t in trees["bare"]))
    only: dict[str, list[float]] = defaultdict(list)
    owners: dict[str, str] = {}
    for tree in trees["cold"]:
        for name, (us, owner) in tree.items():
            if name not in bare_mods:
                only[name].append(us / 1e3)
                owners[name] = owner
    worker_only = sorted(((statistics.median(v), k) for k, v in only.items()), reverse=True)
    by_owner: dict[str, float] = defaultdict(float)
    for ms, name in worker_only:
        by_owner[owners[name]] += ms
    return {"both_modules_slower_in_worker_ms": both_slower(trees),
            "import_total_s": {s: statistics.median(map(total_s, t)) for s, t in trees.items()},
            "worker_only_total_ms": sum(ms for ms, _ in worker_only),
            "worker_only_by_top_level_ms": dict(sorted(by_owner.items(), key=lambda kv: -kv[1])),
            "worker_only_modules_ms": [[name, round(ms, 2), owners[name]]
                                       for ms, name in worker_only[:80]],
            "cold_steps_s": steps}


def both_slower(trees: dict[str, list[dict[str, tuple[int, str]]]]) -> list[list[object]]:
    """Modules both sides import, by how much more self time (median ms) the worker's import
    took than the bare script's, the 40 largest differences: [module, worker ms, bare ms]."""
    def medians(side: str) -> dict[str, float]:
        names = set.intersection(*(set(t) for t in trees[side]))
        return {n: statistics.median(t[n][0] for t in trees[side]) / 1e3 for n in names}

    cold, bare = medians("cold"), medians("bare")
    rows = sorted(((cold[n] - bare[n], n) for n in cold.keys() & bare.keys()), reverse=True)
    return [[n, round(cold[n], 2), round(bare[n], 2)] for _, n in rows[:40]]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("cupti_path")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from profiling_worker.probes.environment import find_libcupti

    sys.path[1:1] = args.cupti_path.split(":")
    libcupti = find_libcupti()[0]["path"]
    root = Path(tempfile.mkdtemp(prefix="cold-imports-"))
    path = f"{REPO}:{args.cupti_path}"
    trees: dict[str, list] = {"bare": [], "cold": []}
    steps: list[dict] = []
    for i in range(args.rounds):
        for side in ("bare", "cold") if i % 2 == 0 else ("cold", "bare"):
            stderr, step = run_side(side, root, path, libcupti)
            trees[side].append(parse_importtime(stderr))
            steps += [step] if step else []
        result = summarise(trees, steps)
        args.out.write_text(json.dumps(result, indent=1))
        print(f"round {i + 1}: imports bare {result['import_total_s']['bare']:.2f} s, cold "
              f"{result['import_total_s']['cold']:.2f} s, worker-only "
              f"{result['worker_only_total_ms']:.0f} ms", flush=True)


if __name__ == "__main__":
    main()
