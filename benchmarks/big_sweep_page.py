"""A finished 1,000- or 10,000-config sweep in the browser (issue 37: its Size sweep took 55-88 s
to show; target: first chart within 3 s of navigation on the 2-core machine).

Builds a SCALE-TEST bundle (not a measurement: real H200 per-run rows of
app/bundled/h200-ncu-matmul-sweep tiled to CONFIGS configs x 10 runs, ``results_page_scale``'s
builder), starts the dashboard on it as the README does (``python -m app.cli``), and in headless
Chromium times navigation start -> the Size sweep chart's traces drawn (``page_speed``'s in-page
probe), first in a fresh context on a newly started server (cold: the server's first run reads
the bundle), then in a fresh context on the same server (warm). Also counts the chart's SVG
nodes and drawn tick labels.

With ``--baseline DIR`` (a checkout of an earlier commit, e.g. ``git archive REV | tar -x -C
DIR``) both dashboards are measured in every round, who goes first alternating, on the same
bundle: the paired ratio candidate / baseline with its CI95 and Wilcoxon p
(``benchmarks/paired.py``), so the load of the shared machine hits both sides alike. The load
average is recorded before and after.

With ``--trace`` every load also runs under Chromium's performance trace, and the renderer
main thread's CPU time up to the chart is recorded (``page_trace.main_thread_ms``'s
``busy_cpu``, ms) and paired like the times: the figure to judge by when other processes load
the machine, where wall times are not (the tracing itself adds to every side alike).

With ``--bare`` a bare Streamlit page (``benchmarks/bare_streamlit_page.py``: one plotly chart
of the small bundled sweep and its table, nothing else) is measured in the same rounds: what
any Streamlit page with a plotly chart takes on the machine at that load, for reference.

With ``--clicks`` each dashboard's warm server is also used as an open dashboard is: from the
Size sweep, a click on the page bar's Stability link and one back on its Size sweep link,
twice, each timed from the click event to that page's chart drawn (``page_speed.click_times``);
with ``--baseline`` too, each page's clicks are paired click by click (the same round and place
in it: a first visit with a first visit).

Usage: ``python benchmarks/big_sweep_page.py [--configs 1000] [--rounds 3] [--baseline DIR]
[--bare] [--trace] [--clicks] [--results DIR] [--json out.json]``; prints seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from benchmarks.page_speed import (BARE, CHROMIUM, PROBE, VIEWPORT,  # noqa: E402
                                   click_times, load_time, serve)
from benchmarks.page_trace import CATEGORIES, main_thread_ms  # noqa: E402
from benchmarks.paired import paired_ratio, ratio_line  # noqa: E402
from benchmarks.results_page_scale import build_scale_bundle  # noqa: E402

TARGET_S = 3.0
#: In-app navigation (``--clicks``): from the Size sweep to Stability and back, twice (url path,
#: the chart title that tells the page's chart apart).
NAV_CLICKS = [("stability", "Run-to-run spread"), ("", "Time vs n")] * 2
COUNT_NODES = """() => { const c = document.querySelector("[data-testid='stPlotlyChart']");
  return c ? [c.querySelectorAll('svg *').length, c.querySelectorAll('.xtick text').length]
           : [0, 0]; }"""


def measure(configs: int, rounds: int, baseline: Path | None = None, bare: bool = False,
            results: Path | None = None, trace: bool = False,
            clicks: bool = False) -> dict[str, Any]:
    """Cold and warm seconds to the first chart per side (``dash``: this checkout; ``base``:
    ``baseline``; ``bare``: :data:`page_speed.BARE`, a bare Streamlit page with one plotly
    chart and its table, for reference), per round; SVG nodes and x tick labels of the chart;
    the paired ratios dash / base; the load average before and after. ``results``: a folder
    that already holds the bundle (else it is built in a new one). ``trace``: also the main
    thread's CPU ms to the chart per load (``cpu_ms``) and their paired ratios
    (``cpu_ratios``). ``clicks``: also, on each dashboard's warm server in a fresh context, the
    seconds from a click on a link of the page bar to that page's chart drawn
    (:data:`NAV_CLICKS`, ``page_speed.click_times``; ``nav_s``: per side and url path, the
    Size sweep's as ``sweep``), what a user of an open dashboard waits for, and with
    ``baseline`` their paired ratios dash / base per page (``nav_ratios``)."""
    from playwright.sync_api import sync_playwright

    results = results or Path(tempfile.mkdtemp(prefix="big-sweep-"))
    job = f"scale-{configs}-configs"
    if not (results / job).is_dir():
        build_scale_bundle(results / job, configs=configs, runs=10)
    rows = int(pq.ParquetFile(results / job / "tables" / "runs.parquet").metadata.num_rows)
    roots = {"dash": REPO, **({"base": baseline} if baseline else {}),
             **({"bare": REPO} if bare else {})}
    times: dict[str, list[float]] = {f"{n}_{k}": [] for n in roots for k in ("cold", "warm")}
    cpu: dict[str, list[float]] = {key: [] for key in times} if trace else {}
    nodes: dict[str, list[int]] = {}
    nav: dict[str, dict[str, list[float]]] = {n: {} for n in roots if n != "bare"} if clicks else {}
    load_before = os.getloadavg()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])
        order = list(roots)
        for i in range(rounds):
            for name in order[i % len(order):] + order[:i % len(order)]:  # who goes first
                root = roots[name]
                env = {"KPROF_RESULTS_DIR": str(results), "PYTHONPATH": str(root),
                       "KPROF_BUNDLED_DIR": str(results / "none")}
                script = BARE if name == "bare" else root / "app" / "streamlit_app.py"
                with serve(script, env, root) as url:
                    for kind in ("cold", "warm"):
                        context = browser.new_context(viewport=VIEWPORT)
                        context.add_init_script(PROBE)
                        if trace:  # browser-wide: the tab load_time opens is in it
                            browser.start_tracing(path=str(results / "trace.json"),
                                                  categories=CATEGORIES)
                        times[f"{name}_{kind}"].append(load_time(context, f"{url}/?job={job}")[0])
                        if trace:
                            browser.stop_tracing()
                            cpu[f"{name}_{kind}"].append(
                                main_thread_ms(results / "trace.json")["busy_cpu"])
                        nodes[name] = context.pages[-1].evaluate(COUNT_NODES)
                        context.close()
                    if name in nav:
                        _navigate(browser, f"{url}/?job={job}", nav[name])
        browser.close()
    ratios = ({kind: paired_ratio(times[f"dash_{kind}"], times[f"base_{kind}"])
               for kind in ("cold", "warm")} if baseline else {})
    cpu_ratios = ({kind: paired_ratio(cpu[f"dash_{kind}"], cpu[f"base_{kind}"])
                   for kind in ("cold", "warm")} if baseline and trace else {})
    nav_ratios = ({path: paired_ratio(nav["dash"][path], nav["base"][path])
                   for path in nav["dash"]} if baseline and clicks else {})
    return {"configs": configs, "per_run_rows": rows, "rounds": rounds, "times_s": times,
            "cpu_ms": cpu, "cpu_ratios": cpu_ratios,
            "svg_nodes": {n: v[0] for n, v in nodes.items()},
            "x_tick_labels": {n: v[1] for n, v in nodes.items()}, "ratios": ratios,
            "nav_s": nav, "nav_ratios": nav_ratios, "cpus": os.cpu_count(),
            "load_average_before": load_before,
            "load_average_after": os.getloadavg()}


def _navigate(browser: Any, url: str, into: dict[str, list[float]]) -> None:
    """Append to ``into`` (url path, ``sweep`` for the Size sweep's -> seconds) each click of
    :data:`NAV_CLICKS` in a fresh context opened on ``url``."""
    context = browser.new_context(viewport=VIEWPORT)
    context.add_init_script(PROBE)
    failed: list[str] = []
    times = click_times(context, url, failed, NAV_CLICKS)
    context.close()
    if failed:
        raise SystemExit(f"cannot time the clicks: {'; '.join(failed)}")
    for (path, _title), timed in zip(NAV_CLICKS, times):
        assert timed is not None  # a failed click ended the run above
        into.setdefault(path or "sweep", []).append(timed[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="another checkout measured in the same "
                        "rounds (e.g. `git archive REV | tar -x -C DIR`)")
    parser.add_argument("--bare", action="store_true", help="also a bare Streamlit page "
                        "(benchmarks/bare_streamlit_page.py), in the same rounds, for reference")
    parser.add_argument("--trace", action="store_true", help="also the browser main thread's "
                        "CPU time to the chart, from a performance trace of every load")
    parser.add_argument("--clicks", action="store_true", help="also in-app navigation: a click "
                        "on the page bar to Stability and back to the Size sweep, twice")
    parser.add_argument("--results", type=Path, help="a folder that holds (or gets) the bundle")
    parser.add_argument("--json", type=Path, help="also write every sample here")
    args = parser.parse_args()
    out = measure(args.configs, args.rounds, args.baseline, args.bare, args.results, args.trace,
                  args.clicks)
    print(f"{out['configs']:,} configs ({out['per_run_rows']:,} per-run rows), {args.rounds} "
          f"rounds, load average {out['load_average_before'][0]:.1f} -> "
          f"{out['load_average_after'][0]:.1f} on {out['cpus']} CPUs:")
    for key, values in out["times_s"].items():
        print(f"  {key}: median {statistics.median(values):.2f} s {[round(v, 2) for v in values]}"
              f" (target <= {TARGET_S} s)")
    for kind, r in out["ratios"].items():
        print(f"  {kind} dash / base: {ratio_line(r)}")
    for key, values in out["cpu_ms"].items():
        print(f"  {key}: browser main thread CPU to the chart, median "
              f"{statistics.median(values):.0f} ms {[round(v) for v in values]}")
    for kind, r in out["cpu_ratios"].items():
        print(f"  {kind} CPU dash / base: {ratio_line(r)}")
    for name, pages in out["nav_s"].items():
        for path, values in pages.items():
            print(f"  {name} click to {path}: median {statistics.median(values):.2f} s "
                  f"{[round(v, 2) for v in values]}")
    for path, r in out["nav_ratios"].items():
        print(f"  click to {path} dash / base: {ratio_line(r)}")
    print(f"  chart SVG nodes {out['svg_nodes']}, x tick labels {out['x_tick_labels']}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
