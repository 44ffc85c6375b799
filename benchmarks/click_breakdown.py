"""Where a click's time goes (issue 40): from a link of the bar to the next page's chart drawn.

Starts the dashboard as :mod:`benchmarks.page_speed` does (a newly started server each round,
``python -m app.cli``, bundled H200 results), loads the Size sweep twice (its cold and warm
loads, as page_speed does), then clicks the links of :data:`page_speed.CLICK_PAGES` in that
order, ``--passes`` times (pass 1 is what page_speed times: each page's first visit on this
server; later passes are revisits). For each click, in ms from the click event:

- **sent**: the page sent its rerun request (a wrapped ``WebSocket.send``, in the page);
- **start**: the server's first message of the run arrived (Chromium's network time stamp,
  CDP ``Network.webSocketFrameReceived``, put on the page's clock by the request's own
  ``webSocketFrameSent``);
- **chart_msg**: the chart's ``ForwardMsg`` arrived (decoded with Streamlit's protobuf);
- **drawn**: the chart's traces drawn, at the next animation frame (:data:`page_speed.PROBE`);
- **finished**: the ``script_finished`` message arrived;

with the bytes and the number of messages that arrived before the chart's (and every message
received, in the JSON). So ``chart_msg -
sent`` is the server's script run up to the chart (plus loopback), ``drawn - chart_msg`` the
browser's work after it.

Usage: ``python benchmarks/click_breakdown.py [--rounds 2] [--passes 2] [--root DIR]
[--json out.json]`` (``--root``: another checkout's dashboard).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]
from benchmarks.big_sweep_breakdown import describe  # noqa: E402
from benchmarks.page_speed import (CHROMIUM, CLICK_PAGES, PROBE, TIMEOUT_MS,  # noqa: E402
                                   _drawn_at, cold_then_warm, serve)

#: Records the page's clock at every WebSocket send (``window.__sent``).
SEND_PROBE = """
window.__sent = [];
const NativeSocket = window.WebSocket;
window.WebSocket = class extends NativeSocket {
  send(data) { window.__sent.push(performance.now()); return super.send(data); }
};
"""
STAGES = ("sent", "start", "chart_msg", "drawn", "finished")


def one_click(page: Any, cdp_frames: list[tuple[str, float, str]], path: str,
              title: str) -> dict[str, Any]:
    """Click the bar's link to ``path`` and wait for its chart (``title``) and the run's end;
    returns the stages in ms from the click event, the bytes and messages before the chart."""
    page.evaluate("window.__drawn = {}; window.__sent = []")
    del cdp_frames[:]
    idle = page.locator("[data-testid='stApp'][data-test-script-state='notRunning']")
    page.locator(f"[data-testid='stPageLink-NavLink'][href='{path}']").first.click(
        timeout=30_000)
    drawn = _drawn_at(page, title)
    page.wait_for_function(  # the run's end has arrived
        "() => document.querySelector(\"[data-testid='stApp']\")"
        ".dataset.testScriptState === 'notRunning'", timeout=TIMEOUT_MS)
    idle.wait_for(state="attached", timeout=TIMEOUT_MS)
    clicked = float(page.evaluate("window.__clicks[window.__clicks.length - 1]"))
    sent_page = page.evaluate("window.__sent")
    sent_cdp = [t for kind, t, _ in cdp_frames if kind == "sent"]
    # CDP's network clock (s) onto the page's (ms): the rerun request is the first send on both
    offset = sent_page[0] - 1e3 * sent_cdp[0]
    got = [(1e3 * t + offset - clicked, describe(base64.b64decode(p)), len(base64.b64decode(p)))
           for kind, t, p in cdp_frames if kind == "received"]
    chart_i = next(i for i, (_, what, _) in enumerate(got) if what.startswith(
        "delta plotly_chart"))
    return {"page": path or "sweep", "sent": sent_page[0] - clicked, "start": got[0][0],
            "chart_msg": got[chart_i][0], "drawn": drawn - clicked,
            "finished": next(t for t, what, _ in got if what == "script_finished"),
            "bytes_before_chart": sum(b for _, _, b in got[:chart_i]),
            "chart_bytes": got[chart_i][2], "messages_before_chart": chart_i,
            "messages": len(got),
            "received": [[round(t, 1), what, size] for t, what, size in got]}


def measure(root: Path, rounds: int, passes: int) -> dict[str, Any]:
    """Every click of every round and pass (:func:`one_click`), and the load average."""
    from playwright.sync_api import sync_playwright

    env = {"KPROF_RESULTS_DIR": tempfile.mkdtemp(prefix="click-breakdown-"),
           "PYTHONPATH": str(root)}
    clicks: list[dict[str, Any]] = []
    load_before = os.getloadavg()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])
        for i in range(rounds):
            with serve(root / "app" / "streamlit_app.py", env, root) as url:
                page = cold_then_warm(browser, url, PROBE + SEND_PROBE)
                page.locator("[data-testid='stApp'][data-test-script-state='notRunning']"
                             ).wait_for(state="attached", timeout=TIMEOUT_MS)
                frames: list[tuple[str, float, str]] = []
                cdp = page.context.new_cdp_session(page)
                cdp.send("Network.enable")
                cdp.on("Network.webSocketFrameSent", lambda e: frames.append(
                    ("sent", e["timestamp"], e["response"]["payloadData"])))
                cdp.on("Network.webSocketFrameReceived", lambda e: frames.append(
                    ("received", e["timestamp"], e["response"]["payloadData"])))
                for p in range(1, passes + 1):
                    for path, title in CLICK_PAGES.items():
                        clicks.append({"round": i, "pass": p,
                                       **one_click(page, frames, path, title)})
                page.context.close()
        browser.close()
    return {"clicks": clicks, "rounds": rounds, "passes": passes, "cpus": os.cpu_count(),
            "load_average_before": load_before, "load_average_after": os.getloadavg()}


def medians(clicks: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """(pass, page) -> the median of each stage and count over the rounds."""
    keys = sorted({(c["pass"], c["page"]) for c in clicks})
    fields = [*STAGES, "bytes_before_chart", "chart_bytes", "messages_before_chart", "messages"]
    return {f"pass {p} {page}": {f: statistics.median(
        c[f] for c in clicks if (c["pass"], c["page"]) == (p, page)) for f in fields}
            for p, page in keys}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=REPO)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--json", type=Path, help="also write every click here")
    args = parser.parse_args()
    out = measure(args.root, args.rounds, args.passes)
    out["medians"] = medians(out["clicks"])
    print("ms from the click event (medians of the rounds): " + ", ".join(STAGES)
          + "; bytes and messages before the chart")
    for key, m in out["medians"].items():
        print(f"  {key:22s} " + " ".join(f"{m[s]:6.0f}" for s in STAGES)
              + f"  {m['bytes_before_chart']:>8,.0f} B {m['messages_before_chart']:3.0f} msgs;"
              f" chart {m['chart_bytes']:,.0f} B, {m['messages']:.0f} msgs in all")
    print(f"load average {out['load_average_before'][0]:.1f} -> "
          f"{out['load_average_after'][0]:.1f} on {out['cpus']} CPUs")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
