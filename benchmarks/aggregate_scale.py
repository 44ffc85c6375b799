"""CPU time of the worker's two group reductions (``launches_to_runs``, ``aggregate_runs``) on
recorded H200 tables, from a warm job's few rows to an import's 30,000-45,000.

The large tables are a recorded table repeated with its Config numbers shifted per copy (so
each copy's groups are new groups of the same recorded values): h200-ncu-elementwise's runs
(960 rows) 32 and 47 times, its launches (1,200 rows) 30 times. CPU time (``time.thread_time``)
of one call, the median of 5 batches, so another process on a shared machine sways it little.

Usage: ``python benchmarks/aggregate_scale.py [--json OUT]``, or before/after:
``python benchmarks/aggregate_scale.py --against CHECKOUT [--rounds 5]`` (e.g. ``git archive
main | tar -x -C /tmp/base``): each side in a fresh process with that checkout first on
PYTHONPATH, interleaved (A B A B), then per case each side's median and the paired ratio
after / before (benchmarks/paired.py).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parent.parent
BUNDLED = REPO / "app" / "bundled"
if str(REPO) not in sys.path:
    sys.path.append(str(REPO))  # after PYTHONPATH: a "before" checkout given there wins


def _table(bundle: str, table: str, copies: int = 1) -> pd.DataFrame:
    frame = pd.read_parquet(BUNDLED / bundle / "tables" / f"{table}.parquet")
    step = int(frame["Config"].max()) + 1
    return pd.concat([frame.assign(Config=frame["Config"] + i * step) for i in range(copies)],
                     ignore_index=True)


def cases() -> dict[str, tuple[Callable[[pd.DataFrame], object], pd.DataFrame]]:
    """Case name -> (the reduction, its input)."""
    from profiling_worker.bundle.stats.aggregate import aggregate_runs, launches_to_runs

    return {
        "aggregate_runs, gate-base": (aggregate_runs, _table("h200-cupti-gate-base", "runs")),
        "launches_to_runs, gate-base": (launches_to_runs,
                                        _table("h200-cupti-gate-base", "launches")),
        "aggregate_runs, matmul sweep": (aggregate_runs, _table("h200-ncu-matmul-sweep", "runs")),
        "aggregate_runs, elementwise x32": (aggregate_runs,
                                            _table("h200-ncu-elementwise", "runs", 32)),
        "aggregate_runs, elementwise x47": (aggregate_runs,
                                            _table("h200-ncu-elementwise", "runs", 47)),
        "launches_to_runs, elementwise x30": (launches_to_runs,
                                              _table("h200-ncu-elementwise", "launches", 30)),
    }


def measure() -> dict[str, dict[str, float]]:
    """Each case's rows and median CPU ms per call (5 batches, after one warm-up call)."""
    out = {}
    for name, (reduce, frame) in cases().items():
        reduce(frame)
        calls = 30 if len(frame) < 2_000 else 3
        batches = []
        for _ in range(5):
            start = time.thread_time()
            for _ in range(calls):
                reduce(frame)
            batches.append((time.thread_time() - start) / calls * 1e3)
        out[name] = {"rows": len(frame), "cpu_ms": statistics.median(batches)}
    return out


def against(base: Path, rounds: int) -> None:
    """Before (``base``) and after (this checkout), interleaved ``rounds`` times; prints each
    case's median CPU ms per side and the paired ratio after / before."""
    from benchmarks.paired import paired_ratio

    sides = {"before": str(base.resolve()), "after": str(REPO)}
    got: dict[str, list[dict[str, dict[str, float]]]] = {side: [] for side in sides}
    with tempfile.TemporaryDirectory(prefix="aggregate-scale-") as tmp:
        for i in range(rounds):
            for side, path in sides.items():
                out = Path(tmp) / f"{side}-{i}.json"
                subprocess.run([sys.executable, __file__, "--json", str(out)], check=True,
                               env={**os.environ, "PYTHONPATH": path},
                               stdout=subprocess.DEVNULL)
                got[side].append(json.loads(out.read_text()))
    for name in got["after"][0]:
        before = [r[name]["cpu_ms"] for r in got["before"]]
        after = [r[name]["cpu_ms"] for r in got["after"]]
        ratio = paired_ratio(after, before)
        print(f"{name} ({got['after'][0][name]['rows']:,} rows): before "
              f"{statistics.median(before):.2f} ms, after {statistics.median(after):.2f} ms CPU; "
              f"after/before {ratio['estimate']:.2f} (CI95 {ratio['ci95'][0]:.2f}-"
              f"{ratio['ci95'][1]:.2f}, {ratio['n']} pairs)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", type=Path)
    ap.add_argument("--against", type=Path, help="another checkout (before): A B A B")
    ap.add_argument("--rounds", type=int, default=5, help="with --against")
    args = ap.parse_args(argv)
    if args.against:
        against(args.against, args.rounds)
        return 0
    rows = measure()
    if args.json:
        args.json.write_text(json.dumps(rows))
    for name, row in rows.items():
        print(f"{name} ({row['rows']:,} rows): {row['cpu_ms']:.2f} ms CPU per call")
    return 0


if __name__ == "__main__":
    sys.exit(main())
