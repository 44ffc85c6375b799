"""A click's CPU time, server and browser, for checkouts measured in the same rounds (issue 40).

Wall-clock times are no measure on a loaded machine; CPU times hold better. For each checkout
(``TAG=DIR``), interleaved round by round (the order alternates), this starts its dashboard as
:mod:`benchmarks.page_speed` does (a new server each round, ``python -m app.cli``, bundled H200
results), loads the Size sweep twice (page_speed's cold and warm loads), waits ``--settle``
seconds (the prefetch of :mod:`app.ui.prefetch` finishes), then clicks the links of
:data:`page_speed.CLICK_PAGES` in that order, each click under Chromium's performance trace.
Per click:

- **server**: the script thread's CPU time (``time.thread_time``) for the page's run, in all
  (``server_cpu_ms``) and up to its first ``plotly_chart`` element (``server_chart_cpu_ms``);
  logged by ``benchmarks/click_cpu_hook/sitecustomize.py``, which the server loads;
- **browser**: the renderer main thread's CPU time (trace events' ``tdur``) from the click event
  to the animation frame after the page's chart has traces (``browser_cpu_ms``; a
  ``performance.mark`` at that frame), and the same span's wall time (``browser_wall_ms``);
- ``drawn_ms``: :data:`page_speed.PROBE`'s click-to-chart time, the benchmark's own measure;
- the garbage collections of the run (``server_gc_*``: the hook's ``gc_*`` fields).

Prints each checkout's medians per page and, with two checkouts, the first against the second
pair by pair (:func:`paired.paired_ratio` over every click: each round and page one pair).

Usage: ``python benchmarks/click_cpu.py TAG=DIR [TAG=DIR ...] [--rounds 3] [--settle 3]
[--json out.json]`` (e.g. ``this=. main=/tmp/main``, the second a ``git archive`` copy).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]
from benchmarks.page_speed import (CHROMIUM, CLICK_PAGES, PROBE, TIMEOUT_MS,  # noqa: E402
                                   _drawn_at, cold_then_warm, serve)
from benchmarks.page_trace import CATEGORIES  # noqa: E402
from paired import paired_ratio, ratio_line  # noqa: E402

HOOK = Path(__file__).resolve().parent / "click_cpu_hook"
#: Marks (``performance.mark('chart-frame')``) the animation frame after a chart first has
#: traces, as :data:`page_speed.PROBE` times it, so that the trace shows it.
MARK = """
new MutationObserver(() => {
  for (const chart of document.querySelectorAll("[data-testid='stPlotlyChart']")) {
    if (chart.__marked || !chart.querySelector('.main-svg .trace')) continue;
    chart.__marked = true;
    requestAnimationFrame(() => performance.mark('chart-frame'));
  }
}).observe(document, {subtree: true, childList: true});
"""
FIELDS = ("server_chart_cpu_ms", "server_cpu_ms", "browser_cpu_ms", "browser_wall_ms",
          "drawn_ms")


def browser_cpu(trace: Path) -> tuple[float, float]:
    """(CPU ms, wall ms) of the renderer's main thread from the trace's click event to its first
    ``chart-frame`` mark after it; a task that straddles either end counts in proportion."""
    events = json.loads(trace.read_text())["traceEvents"]
    main = {(e["pid"], e["tid"]) for e in events
            if e.get("name") == "thread_name" and e["args"].get("name") == "CrRendererMain"}
    start = next(e["ts"] for e in events if e.get("name") == "EventDispatch"
                 and e.get("args", {}).get("data", {}).get("type") == "click")
    end = min(e["ts"] for e in events if e.get("name") == "chart-frame" and e["ts"] > start)
    cpu = 0.0
    for e in events:
        if ((e.get("pid"), e.get("tid")) in main and e.get("name") == "RunTask"
                and e.get("ph") == "X" and e["ts"] < end and e["ts"] + e.get("dur", 0) > start):
            inside = min(end, e["ts"] + e["dur"]) - max(start, e["ts"])
            cpu += inside / max(e["dur"], 1) * e.get("tdur", e["dur"]) / 1e3
    return cpu, (end - start) / 1e3


def to_chart(runs: list[dict[str, Any]]) -> float:
    """The script thread's CPU ms of a click's runs up to the first chart: the runs before the
    one that drew it (a short rerun may come first) and that run to its chart."""
    total = 0.0
    for run in runs:
        total += run["chart_cpu_ms"]
        if run.get("chart", True):
            break
    return total


def one_checkout(browser: Any, tag: str, root: Path, round_: int, settle: float,
                 work: Path) -> list[dict[str, Any]]:
    """One round of ``root``'s dashboard: its clicks, each as a dict of :data:`FIELDS`."""
    log = work / f"{tag}-{round_}.jsonl"
    log.touch()
    env = {"KPROF_RESULTS_DIR": tempfile.mkdtemp(prefix="click-cpu-"),
           "PYTHONPATH": os.pathsep.join([str(HOOK), str(root)]), "CLICK_CPU_LOG": str(log)}
    out = []
    with serve(root / "app" / "streamlit_app.py", env, root) as url:
        page = cold_then_warm(browser, url, PROBE + MARK)
        running = ("() => document.querySelector(\"[data-testid='stApp']\")"
                   ".dataset.testScriptState === 'notRunning'")
        page.wait_for_function(running, timeout=TIMEOUT_MS)
        time.sleep(settle)
        for path, title in CLICK_PAGES.items():
            runs_before = len(log.read_text().splitlines())
            page.evaluate("window.__drawn = {}")
            trace = work / f"{tag}-{round_}-{path or 'sweep'}.json"
            browser.start_tracing(page=page, path=str(trace),
                                  categories=[*CATEGORIES, "blink.user_timing"])
            page.locator(f"[data-testid='stPageLink-NavLink'][href='{path}']").first.click(
                timeout=30_000)
            drawn = _drawn_at(page, title)
            page.wait_for_function(running, timeout=TIMEOUT_MS)
            browser.stop_tracing()
            clicked = float(page.evaluate("window.__clicks[window.__clicks.length - 1]"))
            deadline = time.monotonic() + 60  # the run's line is written as it ends
            while len(log.read_text().splitlines()) <= runs_before:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{tag}: no script run logged for the click on {path!r}")
                time.sleep(0.05)
            runs = [json.loads(line) for line in log.read_text().splitlines()[runs_before:]]
            cpu, wall = browser_cpu(trace)
            trace.unlink()
            out.append({"tag": tag, "round": round_, "page": path or "sweep",
                        "server_chart_cpu_ms": to_chart(runs),
                        "server_cpu_ms": sum(r["cpu_ms"] for r in runs), "runs": len(runs),
                        "server_gc_ms": sum(r["gc_ms"] for r in runs),
                        "server_gc_full": sum(r["gc_full"] for r in runs),
                        "server_gc_full_before_chart": sum(r["gc_full_before_chart"]
                                                           for r in runs),
                        "server_gc_full_any_ms": sum(r["gc_full_any_ms"] for r in runs),
                        "browser_cpu_ms": cpu, "browser_wall_ms": wall,
                        "drawn_ms": drawn - clicked})
        page.context.close()
    return out


def summary(clicks: list[dict[str, Any]], tags: list[str]) -> dict[str, Any]:
    """Medians per checkout and page (and over every click), and with two or more checkouts the
    first against the second, pair by pair (same round and page), for each field."""
    pages = list(dict.fromkeys(c["page"] for c in clicks))
    out: dict[str, Any] = {"medians": {tag: {page: {f: statistics.median(
        c[f] for c in clicks if c["tag"] == tag and page in (c["page"], "all"))
        for f in FIELDS} for page in [*pages, "all"]} for tag in tags}}
    if len(tags) >= 2:
        key = {(c["tag"], c["round"], c["page"]): c for c in clicks}
        pairs = [(key[(tags[0], r, p)], key[(tags[1], r, p)]) for (t, r, p) in key
                 if t == tags[0] and (tags[1], r, p) in key]
        out["paired"] = {f: paired_ratio([a[f] for a, _ in pairs], [b[f] for _, b in pairs])
                         for f in FIELDS}
    return out


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkouts", nargs="+", help="TAG=DIR, e.g. this=. main=/tmp/main")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--settle", type=float, default=3.0)
    parser.add_argument("--json", type=Path, help="also write every click and the summary")
    args = parser.parse_args()
    roots = [(tag, Path(root).resolve()) for tag, root in
             (item.split("=", 1) for item in args.checkouts)]
    work = Path(tempfile.mkdtemp(prefix="click-cpu-"))
    clicks: list[dict[str, Any]] = []
    load_before = os.getloadavg()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])
        for i in range(args.rounds):
            for tag, root in roots if i % 2 == 0 else roots[::-1]:
                clicks += one_checkout(browser, tag, root, i, args.settle, work)
                print(json.dumps(clicks[-4:]), flush=True)
        browser.close()
    tags = [tag for tag, _ in roots]
    out = {"clicks": clicks, **summary(clicks, tags), "rounds": args.rounds,
           "cpus": os.cpu_count(), "load_average_before": load_before,
           "load_average_after": os.getloadavg()}
    print("medians, ms: " + ", ".join(FIELDS))
    for tag in tags:
        for page, m in out["medians"][tag].items():
            print(f"  {tag:8s} {page:11s} " + " ".join(f"{m[f]:7.0f}" for f in FIELDS))
    for field, r in out.get("paired", {}).items():
        print(f"{tags[0]} / {tags[1]}, {field}: {ratio_line(r)}")
    print(f"load average {load_before[0]:.1f} -> {out['load_average_after'][0]:.1f} "
          f"on {out['cpus']} CPUs")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
