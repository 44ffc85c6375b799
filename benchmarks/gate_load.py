"""The gate's read of one bundle before and after it went through the one loader (issue 38),
paired: ``GateSide.load`` as it was at ``--before`` (its own reads of the aggregated, runs,
collectors and audit tables) against ``GateSide.load`` now (``load_bundle``: every table, the
file list, the plausibility notes where the manifest lacks them, then the gate's policy).

Each pair loads the same bundle once with each side, in one process, the side that goes first
alternating (both read the same files from a warm cache: what differs is the work). Bundles: the
recorded scenarios ``--scenarios`` (tests/fixtures/bundles; some were recorded before manifests
kept their notes, so the loader checks their tables at each load) and a SCALE-TEST bundle of
``--configs`` configs (:func:`benchmarks.results_page_scale.build_scale_bundle`: real H200
per-run rows tiled, NOT a measurement; its manifest keeps its notes, as a real job's does).
With ``--cli``, also the whole command CI runs, ``python -m profiling_worker compare BASE
CANDIDATE`` on the recorded gate pair (h200-cupti-gate-base, -again), in a process of its own:
``REF``'s tree (``git archive``) against this one, paired the same way (interpreter start and
imports included, as CI pays them).
Method: :func:`benchmarks.paired.paired_ratio` (after / before: geometric mean of the pair
ratios, t CI95 of the mean log ratio, Wilcoxon p), verdict against at most 1.0x with the CI95
below ``--bound``.

Usage: ``python benchmarks/gate_load.py --before REF [--pairs 20] [--configs 1000]
[--scenarios NAME ...] [--cli] [--json out.json]``; prints one JSON line per bundle.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]
from benchmarks.paired import paired_ratio  # noqa: E402
from benchmarks.results_page_scale import build_scale_bundle  # noqa: E402
from profiling_worker.bundle.gate.sides import GateSide  # noqa: E402

SIDES = "profiling_worker/bundle/gate/sides.py"
SCENARIOS = ("h200-ncu-matmul-sweep", "h200-ncu-elementwise", "h200-cupti-stability",
             "h200-cupti-gate-base")


def before_module(ref: str, folder: Path) -> ModuleType:
    """``bundle/gate/sides.py`` as it was at ``ref``, imported under another name (it reads
    tables through ``loader.read_table_file``, which both versions share)."""
    path = folder / "gate_sides_before.py"
    path.write_text(subprocess.run(["git", "-C", str(REPO), "show", f"{ref}:{SIDES}"],
                                   check=True, capture_output=True, text=True).stdout)
    spec = importlib.util.spec_from_file_location("gate_sides_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def seconds(load: Callable[[Path], Any], bundle: Path) -> float:
    t0 = time.perf_counter()
    load(bundle)
    return time.perf_counter() - t0


def pairs(before: Callable[[Path], Any], after: Callable[[Path], Any], bundle: Path,
          n: int, bound: float) -> dict[str, Any]:
    """``n`` pairs (one warm-up load of each first), the first side alternating."""
    before(bundle)
    after(bundle)
    times: dict[str, list[float]] = {"before": [], "after": []}
    for i in range(n):
        order = (("before", before), ("after", after))
        for name, load in order[::-1] if i % 2 else order:
            times[name].append(seconds(load, bundle))
    a, b = times["after"], times["before"]
    summary = paired_ratio(a, b, target=1.0, bound=bound)
    summary.pop("ratios")
    manifest = bundle / "manifest.json"
    notes = "notes" in json.loads(manifest.read_text()) if manifest.is_file() else None
    return {"bundle": bundle.name, "notes_stored": notes,
            "before_ms_median": round(1e3 * sorted(b)[n // 2], 1),
            "after_ms_median": round(1e3 * sorted(a)[n // 2], 1), **summary}


def tree_at(ref: str, folder: Path) -> Path:
    """The repository's files at ``ref`` (``git archive``), under ``folder``."""
    out = folder / "before-tree"
    out.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref, "profiling_worker"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    return out


def compare_command(root: Path) -> Callable[[Path], Any]:
    """``python -m profiling_worker compare`` with ``root``'s package, on BASE and CANDIDATE."""
    bundles = REPO / "tests" / "fixtures" / "bundles"
    argv = [sys.executable, "-m", "profiling_worker", "compare",
            str(bundles / "h200-cupti-gate-base"), str(bundles / "h200-cupti-gate-again")]
    env = {**os.environ, "PYTHONPATH": str(root)}

    def run(_: Path) -> Any:
        done = subprocess.run(argv, cwd=root, env=env, capture_output=True, check=False)
        assert done.returncode == 0, done.stderr  # the pair is judged "same": exit 0
        return done

    return run


def main() -> None:
    bundles = [REPO / "tests" / "fixtures" / "bundles" / s for s in ARGS.scenarios]
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        before = before_module(ARGS.before, Path(tmp)).GateSide.load
        if ARGS.configs:
            scale = Path(tmp) / f"scale-{ARGS.configs}-configs"
            build_scale_bundle(scale, ARGS.configs)
            bundles.append(scale)
        cases = [(before, GateSide.load, b) for b in bundles]
        if ARGS.cli:
            cases.append((compare_command(tree_at(ARGS.before, Path(tmp))),
                          compare_command(REPO), Path("compare-cli")))
        for old, new, bundle in cases:
            line = pairs(old, new, bundle, ARGS.pairs, ARGS.bound)
            line["load_average"] = round(os.getloadavg()[0], 1)
            print(json.dumps(line), flush=True)
            out.append(line)
    if ARGS.json:
        Path(ARGS.json).write_text(json.dumps({"before": ARGS.before, "pairs": ARGS.pairs,
                                               "configs": ARGS.configs, "results": out},
                                              indent=1) + "\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="git ref of the gate before")
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--configs", type=int, default=1000,
                        help="configs of the scale-test bundle (0: none)")
    parser.add_argument("--scenarios", nargs="*", default=list(SCENARIOS))
    parser.add_argument("--cli", action="store_true",
                        help="also time the whole compare command, REF's tree against this one")
    parser.add_argument("--bound", type=float, default=1.10,
                        help="the CI95's upper end must stay below this ratio")
    parser.add_argument("--json", help="write the results here too")
    ARGS = parser.parse_args()
    main()
