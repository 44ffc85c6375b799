"""Where a cold page load spends the browser's time: the dashboard against the bare page.

Serves both pages as :mod:`benchmarks.page_speed` does, loads each once to warm the servers,
then for ``--rounds`` rounds opens each in a fresh browser context under Chromium's performance
trace (``devtools.timeline``, its disabled-by-default part, ``v8``) until its first chart is drawn, and prints,
for the renderer's main thread: the time it was busy (``RunTask``), JavaScript run
(``FunctionCall`` / ``EvaluateScript`` / module evaluation), of which React's (``react-dom``
chunk), style / layout / paint, and when the last WebSocket message arrived.

Usage: ``python benchmarks/page_trace.py [--rounds 2]``
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script: its sibling
from page_speed import BARE, CHROMIUM, DASHBOARD, REPO, VIEWPORT, _chart_drawn, _drawn_at, serve  # noqa: E402

CATEGORIES = ["devtools.timeline", "v8", "disabled-by-default-devtools.timeline"]
SCRIPT = {"FunctionCall", "EvaluateScript", "v8.evaluateModule"}
RENDER = {"Layout", "UpdateLayoutTree", "Paint", "PrePaint", "Layerize"}


def main_thread_ms(trace: Path) -> dict[str, float]:
    """Milliseconds per kind of work on the renderer's main thread (``CrRendererMain``): wall
    time of its tasks (``busy``, ``script``, ``react-dom``, ``style/layout/paint``) and, as
    ``busy_cpu`` and ``react-dom_cpu``, the thread's CPU time in them (the events' ``tdur``),
    the figure that holds when other processes load the machine (wall time then counts the
    time the thread waited for a core)."""
    events = json.loads(trace.read_text())["traceEvents"]
    main = {(e["pid"], e["tid"]) for e in events
            if e.get("name") == "thread_name" and e["args"].get("name") == "CrRendererMain"}
    out: collections.Counter[str] = collections.Counter()
    for e in events:
        if (e.get("pid"), e.get("tid")) not in main or e.get("ph") != "X":
            continue
        dur, cpu = e.get("dur", 0) / 1e3, e.get("tdur", 0) / 1e3
        if e["name"] == "RunTask":
            out["busy"] += dur
            out["busy_cpu"] += cpu
        elif e["name"] in SCRIPT:
            out["script"] += dur
            url = str(e.get("args", {}).get("data", {}).get("url", ""))
            if "react-dom" in url:
                out["react-dom"] += dur
                out["react-dom_cpu"] += cpu
        elif e["name"] in RENDER:
            out["style/layout/paint"] += dur
    return dict(out)


def phases(trace: Path, since_ms: float, until_ms: float) -> dict[str, float]:
    """The renderer main thread's CPU ms between ``since_ms`` and ``until_ms`` (ms since the
    document's request, the trace's first ``ResourceSendRequest``: within a few ms of the
    page's navigation start, the time base of its ``performance.now()``), by kind: React
    (``react-dom``'s calls), module evaluation (``evaluate``: a lazily loaded element kind's
    chunk), other JavaScript (``script``: Streamlit's message handling, Plotly's draw), style,
    layout and paint (``render``), and the rest of the tasks (``other``); also ``plotly_eval``
    (start and wall ms of the longest module evaluation of the whole load: Streamlit's plotly
    chunk). Nested events are counted once, in their outermost kind."""
    events = json.loads(trace.read_text())["traceEvents"]
    main = {(e["pid"], e["tid"]) for e in events
            if e.get("name") == "thread_name" and e["args"].get("name") == "CrRendererMain"}
    t0 = min(e["ts"] for e in events if e.get("name") == "ResourceSendRequest")
    spans = sorted((e for e in events if (e.get("pid"), e.get("tid")) in main
                    and e.get("ph") == "X"), key=lambda e: (e["ts"], -e.get("dur", 0)))
    out: collections.Counter[str] = collections.Counter()
    evals = [e for e in spans if e["name"] == "v8.evaluateModule"]
    if evals:
        longest = max(evals, key=lambda e: e.get("dur", 0))
        out["plotly_eval_start"] = (longest["ts"] - t0) / 1e3
        out["plotly_eval"] = longest.get("dur", 0) / 1e3
    end = 0.0  # the end (us) of the last counted event: its children are not counted again
    for e in spans:
        start = (e["ts"] - t0) / 1e3
        if not since_ms <= start < until_ms or e["ts"] < end or e["name"] == "RunTask":
            continue
        url = str(e.get("args", {}).get("data", {}).get("url", ""))
        kind = ("react" if e["name"] in SCRIPT and "react-dom" in url else
                "evaluate" if e["name"] == "v8.evaluateModule" else
                "script" if e["name"] in SCRIPT else "render" if e["name"] in RENDER else None)
        if kind is None:
            continue
        out[kind] += e.get("tdur", 0) / 1e3
        end = e["ts"] + e.get("dur", 0)
    tasks = sum(e.get("tdur", 0) / 1e3 for e in spans if e["name"] == "RunTask"
                and since_ms <= (e["ts"] - t0) / 1e3 < until_ms)
    out["other"] = max(0.0, tasks - sum(out[k] for k in ("react", "evaluate", "script",
                                                          "render")))
    return {k: round(v, 1) for k, v in out.items()}


def traced_load(browser, page, url: str, trace: Path,
                settle_ms: int = 0) -> tuple[float, dict[str, float]]:  # type: ignore[no-untyped-def]
    """Open ``url`` in ``page`` (whose context has :data:`page_speed.PROBE`) under the trace
    until its first chart is drawn, then ``settle_ms`` more; returns the ms since navigation
    start at which the chart was drawn and :func:`main_thread_ms` of the trace."""
    browser.start_tracing(page=page, path=str(trace), categories=CATEGORIES)
    page.goto(url, wait_until="commit")
    drawn = _drawn_at(page)
    page.wait_for_timeout(settle_ms)
    browser.stop_tracing()
    return drawn, main_thread_ms(trace)


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    env = {"KPROF_RESULTS_DIR": tempfile.mkdtemp(prefix="page-trace-"), "PYTHONPATH": str(REPO)}
    out_dir = Path(tempfile.mkdtemp(prefix="page-trace-"))
    with serve(DASHBOARD, env) as dash, serve(BARE, env) as bare, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])
        urls = {"dash": dash, "bare": bare}
        for url in urls.values():  # the servers' first runs (imports) are not measured
            context = browser.new_context(viewport=VIEWPORT)
            page = context.new_page()
            page.goto(url)
            _chart_drawn(page)
            context.close()
        for i in range(args.rounds):
            for name, url in urls.items():
                context = browser.new_context(viewport=VIEWPORT)
                page = context.new_page()
                frames: list[float] = []
                page.on("websocket", lambda ws: ws.on(
                    "framereceived", lambda _f: frames.append(time.perf_counter())))
                trace = out_dir / f"{name}-{i}.json"
                browser.start_tracing(page=page, path=str(trace), categories=CATEGORIES)
                start = time.perf_counter()
                page.goto(url, wait_until="commit")
                _chart_drawn(page)
                chart = time.perf_counter() - start
                browser.stop_tracing()
                context.close()
                ms = main_thread_ms(trace)
                print(f"{name} round {i}: chart {chart:.2f} s; {len(frames)} WebSocket messages, "
                      f"last at {frames[-1] - start if frames else float('nan'):.2f} s; main "
                      f"thread (ms): " + ", ".join(f"{k} {v:.0f}" for k, v in sorted(ms.items())))
        browser.close()


if __name__ == "__main__":
    main()
