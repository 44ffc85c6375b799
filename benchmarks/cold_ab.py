"""A cold CUPTI job with and without one worker setting, beside the bare script (issue 40).

Each round runs, in rotating order, the bare nsight-python script (``bare_nsight_j1.py``), a
cold worker on job J1 as it is, and a cold worker with ``--env NAME=VALUE`` set (for
``KPROF_GC_PAUSE=0``: the collector left on during start-up, ``profiling_worker/job/
gc_pause.py``). Each side is timed to its result on disk (``overhead.to_result``: the wall
less the seconds from the result to the exit). Writes JSON with the raw lists and, pair by
pair (``paired.paired_ratio``), worker / bare and worker / worker-with-the-setting.
Usage, on the GPU machine: ``python benchmarks/cold_ab.py OUT_JSON CUPTI_PATH --env
KPROF_GC_PAUSE=0 [--rounds 10]``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

SIDES = ("bare", "cold", "setting")


def one_side(side: str, root: Path, path: str, libcupti: str, env: tuple[str, str],
             runs: dict[str, list[Any]]) -> None:
    """Time one process of ``side`` and append its seconds to the result to ``runs``."""
    from overhead import time_bare, time_cold

    if side == "bare":
        wall, after, _ = time_bare("cupti", root, path, libcupti)
    else:
        name, value = env
        before = os.environ.get(name)
        if side == "setting":
            os.environ[name] = value
        try:
            wall, _, after, steps = time_cold("cupti", root, path)
        finally:
            os.environ.pop(name, None) if before is None else os.environ.update({name: before})
        runs[f"{side}_steps"].append(steps)
    runs[f"{side}_to_result_s"].append(wall - after)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("cupti_path")
    parser.add_argument("--env", required=True, help="NAME=VALUE set for the third side")
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    from paired import paired_ratio
    from profiling_worker.probes.environment import find_libcupti

    sys.path[1:1] = args.cupti_path.split(os.pathsep)
    libcupti = find_libcupti()[0]["path"]
    name, value = args.env.split("=", 1)
    root = Path(tempfile.mkdtemp(prefix="cold-ab-"))
    path = f"{REPO}:{args.cupti_path}"
    runs: dict[str, list[Any]] = collections.defaultdict(list)
    for i in range(args.rounds):
        for k in range(3):  # each side first, second and third in turn
            one_side(SIDES[(i + k) % 3], root, path, libcupti, (name, value), runs)
        cold, bare, setting = (runs[f"{s}_to_result_s"] for s in ("cold", "bare", "setting"))
        result = {"setting": args.env, **runs,
                  "cold_over_bare": paired_ratio(cold, bare),
                  "setting_over_bare": paired_ratio(setting, bare),
                  "cold_over_setting": paired_ratio(cold, setting)}
        args.out.write_text(json.dumps(result, indent=1))  # a call cut short keeps its rounds
        print(f"round {i + 1}: cold/bare {result['cold_over_bare']['estimate']:.3f}, "
              f"{args.env}/bare {result['setting_over_bare']['estimate']:.3f}, "
              f"cold/{args.env} {result['cold_over_setting']['estimate']:.3f}", flush=True)


if __name__ == "__main__":
    main()
