"""A finished 1,000-config sweep in the browser (issue 37: its Size sweep took 55-88 s to show;
target: first chart within 3 s of navigation on the 2-core machine).

Builds a SCALE-TEST bundle (not a measurement: real H200 per-run rows of
app/bundled/h200-ncu-matmul-sweep tiled to CONFIGS configs, ``results_page_scale``'s builder),
starts the dashboard on it as the README does (``python -m app.cli``), and in headless Chromium
times navigation start -> the Size sweep chart's traces drawn (``page_speed``'s in-page probe),
first in a fresh context on a newly started server (cold: the server's first run reads the
bundle), then in fresh contexts on the same server (warm). Also counts the chart's SVG nodes and
drawn tick labels.

Usage: ``python benchmarks/big_sweep_page.py [--configs 1000] [--rounds 3]``; prints seconds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from benchmarks.page_speed import (CHROMIUM, DASHBOARD, PROBE, VIEWPORT,  # noqa: E402
                                   load_time, serve)
from benchmarks.results_page_scale import build_scale_bundle  # noqa: E402

TARGET_S = 3.0
COUNT_NODES = """() => { const c = document.querySelector("[data-testid='stPlotlyChart']");
  return c ? [c.querySelectorAll('svg *').length, c.querySelectorAll('.xtick text').length]
           : [0, 0]; }"""


def measure(configs: int, rounds: int) -> dict[str, object]:
    """Cold and warm seconds to the first chart, SVG nodes and x tick labels of that chart."""
    from playwright.sync_api import sync_playwright

    results = Path(tempfile.mkdtemp(prefix="big-sweep-"))
    job = f"scale-{configs}-configs"
    rows = build_scale_bundle(results / job, configs=configs, runs=10)
    env = {"KPROF_RESULTS_DIR": str(results), "KPROF_BUNDLED_DIR": str(results / "none"),
           "PYTHONPATH": str(REPO)}
    cold, warm, nodes = [], [], [0, 0]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])
        for _ in range(rounds):
            with serve(DASHBOARD, env) as url:
                for times in (cold, warm):
                    context = browser.new_context(viewport=VIEWPORT)
                    context.add_init_script(PROBE)
                    times.append(load_time(context, f"{url}/?job={job}")[0])
                    nodes = context.pages[-1].evaluate(COUNT_NODES)
                    context.close()
        browser.close()
    return {"configs": configs, "per_run_rows": rows, "cold_s": cold, "warm_s": warm,
            "svg_nodes": nodes[0], "x_tick_labels": nodes[1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    out = measure(args.configs, args.rounds)
    print(f"{out['configs']:,} configs ({out['per_run_rows']:,} per-run rows): first chart "
          f"cold median {statistics.median(out['cold_s']):.2f} s {out['cold_s']}, warm median "
          f"{statistics.median(out['warm_s']):.2f} s {out['warm_s']} (target <= {TARGET_S} s); "
          f"chart {out['svg_nodes']:,} SVG nodes, {out['x_tick_labels']} x tick labels")


if __name__ == "__main__":
    main()
