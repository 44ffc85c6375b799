"""Where the time to a big sweep's first chart goes (issue 37): one page load, message by message.

Builds the scale-test bundle of :mod:`benchmarks.big_sweep_page` (real H200 per-run rows tiled
to CONFIGS configs; NOT a measurement), starts the dashboard on it (``python -m app.cli``), and
loads the Size sweep in headless Chromium under Chromium's performance trace, once on the newly
started server (cold) and once more in a fresh context (warm). For each load it prints:

- every WebSocket message the server sent, in the order received: ms since navigation start
  (in the page: a wrapped ``WebSocket``), its bytes, and what it is (decoded with Streamlit's
  own ``ForwardMsg`` protobuf: ``delta`` with the element type and its delta path, or the
  session message: ``new_session``, ``script_finished``...). Streamlit sends each element as
  the script reaches it, so the gaps between the page's elements are the script's own time per
  section, as the browser receives it;
- when the chart's traces were drawn (:data:`page_speed.PROBE`);
- the renderer main thread's time up to then, by kind (:func:`page_trace.main_thread_ms`), and
  its longest task (:func:`longest_task_ms`);
- its CPU time from the chart's message to the chart drawn, by kind (React, a lazily loaded
  chunk's evaluation, other JavaScript, style/layout/paint: :func:`page_trace.phases`), and
  when the plotly chunk was evaluated.

Usage: ``python benchmarks/big_sweep_breakdown.py [--configs 1000] [--root DIR]
[--results DIR] [--bare] [--traces DIR] [--json out.json]`` (``--root``: another checkout;
``--results``: a folder that already holds ``scale-<CONFIGS>-configs``, else one is built;
``--bare``: the bare page of :mod:`benchmarks.page_speed` instead of the dashboard).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]
from benchmarks.page_speed import BARE, CHROMIUM, PROBE, VIEWPORT, _drawn_at, serve  # noqa: E402
from benchmarks.page_trace import CATEGORIES, main_thread_ms, phases  # noqa: E402
from benchmarks.results_page_scale import build_scale_bundle  # noqa: E402

#: Records the arrival (ms since navigation start) and size of every WebSocket message.
WS_PROBE = """
window.__ws = [];
const Native = window.WebSocket;
window.WebSocket = class extends Native {
  constructor(...args) {
    super(...args);
    this.addEventListener('message', e => window.__ws.push(
      [performance.now(), e.data.byteLength ?? e.data.size ?? e.data.length]));
  }
};
"""


def describe(payload: bytes) -> str:
    """What a ForwardMsg is: ``delta plotly_chart [0, 1, 3]``, ``script_finished``..."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    msg = ForwardMsg()
    msg.ParseFromString(payload)
    kind = msg.WhichOneof("type") or "?"
    if kind != "delta":
        return kind
    delta = msg.delta.WhichOneof("type") or "?"
    what = msg.delta.new_element.WhichOneof("type") if delta == "new_element" else delta
    return f"delta {what} {list(msg.metadata.delta_path)}"


def traced_load(browser: Any, url: str, trace: Path) -> dict[str, Any]:
    """One load of ``url`` in a fresh context under the trace, until the chart is drawn and
    the script has finished: each message's arrival (the network stack's time stamp, CDP
    ``Network.webSocketFrameReceived``, from the document's request) and its handling in the
    page (the page's ``message`` event, late while the main thread is busy), the drawn time
    and the main thread's time."""
    context = browser.new_context(viewport=VIEWPORT)
    context.add_init_script(PROBE + WS_PROBE)
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    sent: list[float] = []
    frames: list[tuple[float, str]] = []
    cdp.on("Network.requestWillBeSent", lambda e: sent.append(e["timestamp"]))
    cdp.on("Network.webSocketFrameReceived", lambda e: frames.append(
        (e["timestamp"], e["response"]["payloadData"])))
    browser.start_tracing(page=page, path=str(trace), categories=CATEGORIES)
    page.goto(url, wait_until="commit")
    drawn_ms = _drawn_at(page)
    browser.stop_tracing()
    page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for(
        state="attached", timeout=120_000)
    handled = page.evaluate("window.__ws")
    context.close()
    messages = [{"arrived_ms": round(1e3 * (ts - sent[0]), 1), "handled_ms": round(t, 1),
                 "bytes": int(size), "what": describe(base64.b64decode(payload))}
                for (ts, payload), (t, size) in zip(frames, handled)]
    spent = {**main_thread_ms(trace), "longest": longest_task_ms(trace)}
    chart = next((m["handled_ms"] for m in messages if "plotly_chart" in m["what"]), drawn_ms)
    return {"drawn_ms": round(drawn_ms, 1), "messages": messages,
            "main_thread_ms": {k: round(v, 1) for k, v in spent.items()},
            "chart_message_to_drawn_cpu_ms": phases(trace, chart, drawn_ms)}


def longest_task_ms(trace: Path) -> float:
    """The renderer main thread's longest task (``RunTask``) in ms: on this page, the
    evaluation of Streamlit's 4.7 MB plotly chunk, during which no message is handled."""
    events = json.loads(trace.read_text())["traceEvents"]
    main = {(e["pid"], e["tid"]) for e in events
            if e.get("name") == "thread_name" and e["args"].get("name") == "CrRendererMain"}
    return max((e.get("dur", 0) / 1e3 for e in events if e.get("name") == "RunTask"
                and (e.get("pid"), e.get("tid")) in main), default=0.0)


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", type=int, default=1000)
    parser.add_argument("--root", type=Path, default=REPO)
    parser.add_argument("--results", type=Path)
    parser.add_argument("--json", type=Path, help="also write both loads here")
    parser.add_argument("--traces", type=Path, help="keep Chromium's traces here")
    parser.add_argument("--bare", action="store_true",
                        help="the bare page (benchmarks/bare_streamlit_page.py) instead")
    args = parser.parse_args()
    results = args.results or Path(tempfile.mkdtemp(prefix="big-sweep-"))
    job = f"scale-{args.configs}-configs"
    if not (results / job).is_dir():
        build_scale_bundle(results / job, configs=args.configs, runs=10)
    env = {"KPROF_RESULTS_DIR": str(results), "PYTHONPATH": str(args.root),
           "KPROF_BUNDLED_DIR": str(results / "none")}
    out: dict[str, Any] = {"configs": args.configs, "bare": args.bare,
                           "load_average_before": os.getloadavg()}
    traces = args.traces or Path(tempfile.mkdtemp(prefix="big-sweep-traces-"))
    traces.mkdir(parents=True, exist_ok=True)
    script = BARE if args.bare else args.root / "app" / "streamlit_app.py"
    with serve(script, env, args.root) as url, \
            sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])
        for kind in ("cold", "warm"):
            load = traced_load(browser, f"{url}/?job={job}",
                               traces / f"{kind}.json")
            out[kind] = load
            print(f"{kind}: chart drawn at {load['drawn_ms']:.0f} ms; main thread (ms) "
                  + ", ".join(f"{k} {v:.0f}" for k, v in sorted(load["main_thread_ms"].items())))
            print("  chart message to chart drawn, main thread CPU (ms): " + ", ".join(
                f"{k} {v:.0f}" for k, v in load["chart_message_to_drawn_cpu_ms"].items()))
            for m in load["messages"]:
                print(f"  arrived {m['arrived_ms']:8.0f} ms, handled {m['handled_ms']:8.0f} ms "
                      f"{m['bytes']:>9,} B  {m['what']}")
        browser.close()
    out["load_average_after"] = os.getloadavg()
    print(f"load average {out['load_average_before'][0]:.1f} -> {out['load_average_after'][0]:.1f}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
