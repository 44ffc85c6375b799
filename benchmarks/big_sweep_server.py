"""The server's part of a big sweep's Size sweep page, before and after, paired (issue 37).

The scale-test bundle of :mod:`benchmarks.big_sweep_page` (real H200 per-run rows tiled to
CONFIGS configs; NOT a measurement). Each round runs, for each side (``dash``: this checkout;
``base``: ``--baseline DIR``, e.g. ``git archive REV | tar -x -C DIR``; who goes first
alternates), a fresh interpreter on that side's code that times Streamlit's AppTest script runs
of the page (``?job=scale-<CONFIGS>-configs``): the first (cold: the bundle is read and the
frame computed) and then ``--warm`` more in the same session (warm: the caches hold them; the
median is kept). Pair by pair, after / before with its CI95 and Wilcoxon p
(``benchmarks/paired.py``). This is the server's script time only: the browser's part is
``big_sweep_page.py``'s.

With ``--page NAME`` (``app_pages/NAME.py``, e.g. ``stability``) the Size sweep is run first,
untimed (the bundle read, as in an open dashboard), and then the page: cold is its first
visit (its frames computed), warm the median of ``--warm`` more.

Usage: ``python benchmarks/big_sweep_server.py --baseline DIR [--configs 10000] [--rounds 4]
[--warm 3] [--page NAME] [--results DIR] [--json out.json]``; prints seconds.
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
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def child(root: Path, results: Path, job: str, warm: int, page: str | None = None) -> None:
    """In a fresh interpreter on ``root``'s code: print the cold and warm script runs' seconds
    (of ``app_pages/<page>.py`` after an untimed run of the Size sweep, if ``page``)."""
    from streamlit.testing.v1 import AppTest

    os.environ.update(KPROF_RESULTS_DIR=str(results), KPROF_BUNDLED_DIR=str(results / "none"))
    at = AppTest.from_file(str(root / "app" / "streamlit_app.py"), default_timeout=600)
    at.query_params["job"] = job
    if page:
        at.run()
        at.switch_page(f"app_pages/{page}.py")
    times, cpu = [], []
    for _ in range(1 + warm):
        start, start_cpu = time.perf_counter(), time.process_time()
        at.run()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)  # every thread of this interpreter
        assert not at.exception and at.get("plotly_chart"), at.exception
    print(json.dumps({"cold": times[0], "warm": statistics.median(times[1:]),
                      "cpu_cold": cpu[0], "cpu_warm": statistics.median(cpu[1:])}))


def measure(configs: int, rounds: int, warm: int, baseline: Path,
            results: Path | None, page: str | None = None) -> dict[str, Any]:
    """Cold and warm seconds per side and round (of ``page``'s first and later visits, if set),
    wall (``times_s``) and the interpreter's CPU (``cpu_s``), their paired ratios dash / base,
    the load."""
    sys.path.insert(0, str(REPO))
    from benchmarks.paired import paired_ratio
    from benchmarks.results_page_scale import build_scale_bundle

    results = results or Path(tempfile.mkdtemp(prefix="big-sweep-server-"))
    job = f"scale-{configs}-configs"
    if not (results / job).is_dir():
        build_scale_bundle(results / job, configs=configs, runs=10)
    roots = {"dash": REPO, "base": baseline}
    times: dict[str, list[float]] = {f"{n}_{k}": [] for n in roots for k in ("cold", "warm")}
    cpu: dict[str, list[float]] = {key: [] for key in times}
    load_before = os.getloadavg()
    for i in range(rounds):
        for name in (["dash", "base"] if i % 2 == 0 else ["base", "dash"]):
            root = roots[name]
            out = subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "--child", str(root),
                 "--results", str(results), "--configs", str(configs), "--warm", str(warm),
                 *(["--page", page] if page else [])],
                cwd=root, env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True,
                text=True, timeout=1200, check=True)
            got = json.loads(out.stdout.strip().splitlines()[-1])
            for kind in ("cold", "warm"):
                times[f"{name}_{kind}"].append(got[kind])
                cpu[f"{name}_{kind}"].append(got[f"cpu_{kind}"])
    return {"configs": configs, "page": page, "rounds": rounds, "warm_runs": warm,
            "times_s": times,
            "ratios": {k: paired_ratio(times[f"dash_{k}"], times[f"base_{k}"])
                       for k in ("cold", "warm")},
            "cpu_s": cpu, "cpu_ratios": {k: paired_ratio(cpu[f"dash_{k}"], cpu[f"base_{k}"])
                                         for k in ("cold", "warm")},
            "cpus": os.cpu_count(), "load_average_before": load_before,
            "load_average_after": os.getloadavg()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path)
    parser.add_argument("--configs", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--warm", type=int, default=3)
    parser.add_argument("--page", help="a page of app_pages/ (e.g. stability), timed after "
                        "an untimed run of the Size sweep")
    parser.add_argument("--results", type=Path)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.results, f"scale-{args.configs}-configs", args.warm, args.page)
        return
    if args.baseline is None:
        parser.error("--baseline DIR is needed (the checkout to compare with)")
    out = measure(args.configs, args.rounds, args.warm, args.baseline, args.results, args.page)
    print(f"{args.configs:,} configs, {args.rounds} rounds, load average "
          f"{out['load_average_before'][0]:.1f} -> {out['load_average_after'][0]:.1f}:")
    for key, values in out["times_s"].items():
        print(f"  {key}: median {statistics.median(values):.2f} s {[round(v, 2) for v in values]}")
    from benchmarks.paired import ratio_line  # on the path since measure()

    for kind, r in out["ratios"].items():
        print(f"  {kind} dash / base: {ratio_line(r)}")
    for key, values in out["cpu_s"].items():
        print(f"  {key} CPU: median {statistics.median(values):.2f} s")
    for kind, r in out["cpu_ratios"].items():
        print(f"  {kind} CPU dash / base: {ratio_line(r)}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
