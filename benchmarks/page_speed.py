"""Page speed in a real browser: the dashboard against a bare Streamlit page (issues 14, 25, 40).

Starts the dashboard the way the README does (``kernel-dashboard``, i.e. ``python -m app.cli``:
bundled H200 results, an empty results dir) and ``benchmarks/bare_streamlit_page.py`` (the
same parquet table, the same plotly chart and its table, nothing else; ``streamlit run``) as
real servers on 127.0.0.1, and drives headless Chromium (/usr/bin/chromium, Playwright)
against both, interleaved in every round (who goes first rotates from round to round). Each
round starts each server anew:

- **cold**: the newly started server's first navigation (a fresh browser context), from
  navigation start to the chart's traces drawn: Python imports and the first script run count;
- **warm**: the same server, which has now served once, and a fresh browser context (empty HTTP
  cache, new session): the same measure;
- **click**: in that context, from the sweep page, one click on a navigation link to another
  chart page, from the click event to that page's own chart drawn (median over every click);
  the same click on ``benchmarks/bare_streamlit_click.py`` (a bare two-page Streamlit app, its
  own server in the same round, loaded once first) is the reference: what any Streamlit app
  pays for a click that draws a plotly chart, against which issue 40's 200 ms is read.

Until issue 25 "cold" was the fresh context on a server that had already served (this warm)
and the first load after a server start was left out of the ratios.

Times are taken in the page (:data:`PROBE`: ``performance.now()`` of a MutationObserver that
sees the chart's traces, then of the next animation frame; the click event's ``timeStamp``),
so they hold what a user waits for and not Playwright's own work (its actionability checks
and polling added 150 ms at the median to a click, 2026-11-30). Playwright's wall-clock
figures are kept beside them in the samples (``*_wall``).

Ratios are taken per round (dashboard / bare of the same round), so load from other processes
on the machine hits both sides alike; the medians of one run are reported, against issue 40's
targets (:data:`TARGETS`, :data:`CLICK_TARGET_MS`).

Usage: ``python benchmarks/page_speed.py [--rounds 5] [--json out.json] [--baseline DIR]``
(``--baseline``: a checkout of an earlier commit measured in the same rounds as ``base``. Then
the summary's ``paired`` holds this checkout against it, ``dash`` / ``base`` pair by pair
(:func:`paired.paired_ratio`: the estimate, CI95 and Wilcoxon p): cold and warm by round, and
each click by round and page where both sides timed it). ``vs_bare`` holds each dashboard
against the bare page (cold, warm: one pair a round) and the bare app (click: each round's
median click, one pair a round), the same way.

A click that fails (its link not there within 30 s, its chart not drawn within
:data:`TIMEOUT_MS`) is counted and printed per round (``click_failures``, with the reason in
``click_failure_reasons``) and the page is clicked again in the next rounds. Until session 21 a
page whose link was not there yet was skipped for the rest of the run: the link bar is drawn
after the page's chart (``app/streamlit_app.py``), so a click right after the chart found no
link, and the click median was over the first rounds only.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DASHBOARD = REPO / "app" / "streamlit_app.py"
BARE = REPO / "benchmarks" / "bare_streamlit_page.py"
BARE_CLICK = REPO / "benchmarks" / "bare_streamlit_click.py"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
VIEWPORT = {"width": 1400, "height": 900}
#: url path -> the chart title that tells its chart apart (default job: h200-ncu-matmul-sweep).
CLICK_PAGES = {"stability": "Run-to-run spread", "kernels": "Kernels inside each",
               "one-kernel": "duration per run",
               "": "Time vs n"}
#: The bare two-page app's clicks, in order (four, as the dashboard's): url path -> chart title.
BARE_CLICKS = [("stability", "Run-to-run spread"), ("", "Time vs n")] * 2
TIMEOUT_MS = 120_000
#: Issue 40's targets: dashboard / bare page, cold and warm (medians of the rounds of one run);
#: a click's median in ms.
TARGETS = {"cold": 1.05, "warm": 1.10}
CLICK_TARGET_MS = 200
#: Installed in every page before its scripts: records when each chart (by its title) first has
#: traces, and the next animation frame after that (``window.__drawn``, ms since navigation
#: start), and the time stamp of every click (``window.__clicks``).
PROBE = """
window.__drawn = {}; window.__clicks = [];
document.addEventListener('click', e => window.__clicks.push(e.timeStamp), true);
new MutationObserver(() => {
  for (const chart of document.querySelectorAll("[data-testid='stPlotlyChart']")) {
    const title = chart.querySelector('.gtitle');
    const key = title ? title.textContent : '';
    if (key in window.__drawn || !chart.querySelector('.main-svg .trace')) continue;
    window.__drawn[key] = null;
    requestAnimationFrame(() => { window.__drawn[key] = performance.now(); });
  }
}).observe(document, {subtree: true, childList: true});
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def command(script: Path, root: Path, port: int, results_dir: str) -> list[str]:
    """How a server is started: the dashboard of checkout ``root`` by its console script
    (``python -m app.cli``, what ``kernel-dashboard`` runs), anything else by ``streamlit
    run``."""
    flags = ["--server.headless", "true", "--server.fileWatcherType", "none",
             "--browser.gatherUsageStats", "false"]
    if script == root / "app" / "streamlit_app.py" and (root / "app" / "cli.py").is_file():
        return [sys.executable, "-m", "app.cli", "--port", str(port), "--results", results_dir,
                *flags]
    return [sys.executable, "-m", "streamlit", "run", str(script), "--server.address",
            "127.0.0.1", "--server.port", str(port), *flags]


@contextmanager
def serve(script: Path, env: dict[str, str], cwd: Path = REPO) -> Iterator[str]:
    """A newly started server for ``script`` (run from ``cwd``, :func:`command`) on 127.0.0.1;
    yields its URL once it answers ``/_stcore/health``."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = command(script, cwd, port, env["KPROF_RESULTS_DIR"])
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen(cmd, cwd=cwd, env={**os.environ, **env}, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                    if resp.read() == b"ok":
                        break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise RuntimeError(f"{script.name} did not start:\n{log.read().decode()}")
                time.sleep(0.25)  # health-probe interval
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(15)


def _chart_drawn(page, title: str | None = None) -> None:  # type: ignore[no-untyped-def]
    """Wait until a chart (with ``title`` in its title, if given) has its plot area drawn."""
    chart = page.locator("[data-testid='stPlotlyChart']")
    if title:
        chart = chart.filter(has=page.locator(".gtitle", has_text=title))
    chart.locator(".main-svg .trace").first.wait_for(state="visible",
                                                      timeout=TIMEOUT_MS)


def cold_then_warm(browser, url: str, init_script: str):  # type: ignore[no-untyped-def]
    """page_speed's two loads of the Size sweep on one server: a fresh context (closed once its
    chart is drawn), then another fresh context, whose page is returned with its chart drawn
    (the page the clicks start from)."""
    for kind in ("cold", "warm"):
        context = browser.new_context(viewport=VIEWPORT)
        context.add_init_script(init_script)
        page = context.new_page()
        page.goto(url)
        _chart_drawn(page)
        if kind == "cold":
            context.close()
    return page


def _drawn_at(page, title: str | None = None) -> float:  # type: ignore[no-untyped-def]
    """ms since navigation start at which the chart (with ``title`` in its title, if given)
    was first drawn, from :data:`PROBE`."""
    _chart_drawn(page, title)
    return float(page.wait_for_function(
        """title => Object.entries(window.__drawn).find(
             ([k, v]) => v !== null && (title === null || k.includes(title)))?.[1]""",
        arg=title, timeout=TIMEOUT_MS).json_value())


def load_time(context, url: str, requests: list[str] | None = None,
              frames: list[float] | None = None) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Seconds from navigation start to the first chart drawn, in a new tab of ``context``, in
    the page and as Playwright's wall clock sees it; appends the URLs requested to ``requests``
    and one entry per WebSocket message received (forward messages: one per element, plus the
    run's bookkeeping) to ``frames``."""
    page = context.new_page()
    if requests is not None:
        page.on("request", lambda r: requests.append(r.url))
    if frames is not None:
        page.on("websocket", lambda ws: ws.on("framereceived", lambda _f: frames.append(1.0)))
    start = time.perf_counter()
    page.goto(url, wait_until="commit")
    drawn_ms = _drawn_at(page)
    return drawn_ms / 1e3, time.perf_counter() - start


Timed = tuple[float, float] | None  # a click's (in-page s, wall s), None where it failed


def click_times(context, url: str, failed: list[str],  # type: ignore[no-untyped-def]
                pages: list[tuple[str, str]] | None = None) -> list[Timed]:
    """Seconds from a click on a navigation link to that page's chart drawn, in the page (from
    the click event) and as Playwright's wall clock sees it (from the call that clicks), one
    per page of ``pages`` (url path, chart title; default :data:`CLICK_PAGES`), starting on
    the sweep page. A click whose link does not come within 30 s or whose chart is not drawn
    within :data:`TIMEOUT_MS` gives ``None`` in its place and ``"path: why"`` appended to
    ``failed``; the next pages are still clicked (from wherever the page then is)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page = context.new_page()
    page.goto(url)
    _chart_drawn(page)
    idle = page.locator("[data-testid='stApp'][data-test-script-state='notRunning']")
    idle.wait_for(state="attached", timeout=TIMEOUT_MS)
    out: list[Timed] = []
    for path, title in list(CLICK_PAGES.items()) if pages is None else pages:
        page.evaluate("window.__drawn = {}")
        link = page.locator(f"[data-testid='stPageLink-NavLink'][href='{path}']").first
        try:  # the link bar comes after the page's chart (app/streamlit_app.py): wait for it
            link.wait_for(state="visible", timeout=30_000)
        except PlaywrightTimeout:
            failed.append(f"{path or 'sweep'}: no link within 30 s")
            out.append(None)
            continue
        start = time.perf_counter()
        try:
            link.click(timeout=30_000)
            drawn_ms = _drawn_at(page, title)
        except PlaywrightTimeout:
            failed.append(f"{path or 'sweep'}: no link click or no chart {title!r} within "
                          f"{TIMEOUT_MS / 1e3:.0f} s")
            out.append(None)
            continue
        wall = time.perf_counter() - start
        clicked_ms = page.evaluate("window.__clicks[window.__clicks.length - 1]")
        out.append(((drawn_ms - clicked_ms) / 1e3, wall))
        idle.wait_for(state="attached", timeout=TIMEOUT_MS)
    return out


def measure(rounds: int, baseline: Path | None = None) -> dict[str, object]:
    """Run the benchmark; returns every sample and the summary. ``baseline``: another checkout
    of this repository whose dashboard is measured in the same rounds (``base``), e.g. the
    commit before a change, so that before and after share the machine's load."""
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(REPO / "benchmarks"))
    from paired import paired_ratio

    results_dir = tempfile.mkdtemp(prefix="page-speed-results-")
    apps = {"dash": (DASHBOARD, REPO), "bare": (BARE, REPO), "bare_click": (BARE_CLICK, REPO)}
    if baseline is not None:
        apps["base"] = (baseline / "app" / "streamlit_app.py", baseline)
    dashboards = [name for name in apps if not name.startswith("bare")]
    kinds = [f"{name}_{kind}" for name in apps if name != "bare_click"
             for kind in ("cold", "warm")]
    kinds += [f"{name}_click" for name in dashboards] + ["bare_click"]
    samples: dict[str, list[float]] = {key: [] for k in kinds for key in (k, f"{k}_wall")}
    chunks: dict[str, int] = {}
    messages: dict[str, int] = {}
    #: per clicking side (``dash_click``, ``base_click``, ``bare_click``): one record a click,
    #: [round, url path, in-page s, wall s] (both None for a failed click), and per round the
    #: failed clicks' "path: why"
    clicks: dict[str, list[list[object]]] = {k: [] for k in kinds if k.endswith("_click")}
    failures: dict[str, list[list[str]]] = {k: [] for k in clicks}

    def add(key: str, timed: list[tuple[float, float]]) -> None:
        samples[key] += [in_page for in_page, _ in timed]
        samples[f"{key}_wall"] += [wall for _, wall in timed]

    def add_clicks(key: str, i: int, context, url: str,  # type: ignore[no-untyped-def]
                   pages: list[tuple[str, str]]) -> None:
        failed: list[str] = []
        timed = click_times(context, url, failed, pages)
        clicks[key] += [[i, path, *(t or (None, None))] for (path, _), t in zip(pages, timed)]
        add(key, [t for t in timed if t is not None])
        failures[key].append(failed)

    with ExitStack() as stack:
        pw = stack.enter_context(sync_playwright())
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])

        def new_context():  # type: ignore[no-untyped-def]
            context = browser.new_context(viewport=VIEWPORT)
            context.add_init_script(PROBE)
            return context

        order = list(apps)
        for i in range(rounds):
            for name in order[i % len(order):] + order[:i % len(order)]:  # who goes first rotates
                script, root = apps[name]
                env = {"KPROF_RESULTS_DIR": results_dir, "PYTHONPATH": str(root)}
                with serve(script, env, root) as url:  # a new server each round
                    if name == "bare_click":  # a first load, then the clicks
                        context = new_context()
                        load_time(context, url)
                        add_clicks(name, i, context, url, BARE_CLICKS)
                        context.close()
                        continue
                    requests: list[str] = []
                    frames: list[float] = []
                    context = new_context()
                    add(f"{name}_cold", [load_time(context, url, requests, frames)])
                    context.close()
                    chunks.setdefault(name, sum("/static/js/" in r for r in requests))
                    messages.setdefault(name, len(frames))
                    context = new_context()
                    add(f"{name}_warm", [load_time(context, url)])
                    if name in dashboards:
                        add_clicks(f"{name}_click", i, context, url, list(CLICK_PAGES.items()))
                    context.close()
        browser.close()
    ratio = {f"{name}_{kind}{wall}": [d / b for d, b in zip(samples[f"{name}_{kind}{wall}"],
                                                            samples[f"bare_{kind}{wall}"])]
             for name in dashboards for kind in ("cold", "warm") for wall in ("", "_wall")}
    vs_bare = {f"{name}_{kind}": paired_ratio(samples[f"{name}_{kind}"], samples[f"bare_{kind}"],
                                              TARGETS[kind], TARGETS[kind])
               for name in dashboards for kind in TARGETS}
    vs_bare.update({f"{name}_click": paired_ratio(*round_medians(
        clicks[f"{name}_click"], clicks["bare_click"])) for name in dashboards})
    summary = {
        "js_chunks_cold_load": chunks, "ws_messages_cold_load": messages,
        "ratio_median": {key: statistics.median(r) for key, r in ratio.items()},
        "median_s": {key: statistics.median(v) for key, v in samples.items() if v},
        "click_range_ms": {name: [1e3 * min(samples[f"{name}_click"]),
                                  1e3 * max(samples[f"{name}_click"])]
                           for name in [*dashboards, "bare"] if samples[f"{name}_click"]},
        # each round's median click / the bare app's median click of that round
        "click_ratio_median": {name: vs_bare[f"{name}_click"]["median"] for name in dashboards
                               if vs_bare[f"{name}_click"]["n"]},
        # dashboard / bare page (cold, warm: one pair a round) and bare app (click: each
        # round's median click, one pair a round): :func:`paired.paired_ratio`
        "vs_bare": vs_bare,
        "click_failures": {key: [len(f) for f in per_round] for key, per_round in failures.items()},
        "click_failure_reasons": failures,
        "rounds": rounds, "cpus": os.cpu_count(), "load_average": os.getloadavg(),
    }
    if baseline is not None:
        summary["paired"] = paired(samples, clicks)
    return {"summary": summary, "samples": samples, "ratios": ratio, "clicks": clicks}


def round_medians(clicks: list[list[object]],
                  bare: list[list[object]]) -> tuple[list[float], list[float]]:
    """Per round in which both sides have a timed click, the median of ``clicks`` and of
    ``bare`` (records as :func:`measure` keeps them: [round, url path, in-page s, wall s]),
    in s: the pairs of a click against the bare app of the same round."""
    def by_round(records: list[list[object]]) -> dict[object, list[float]]:
        out: dict[object, list[float]] = {}
        for i, _path, seconds, _wall in records:
            if isinstance(seconds, float):
                out.setdefault(i, []).append(seconds)
        return out

    mine, theirs = by_round(clicks), by_round(bare)
    both = [i for i in mine if i in theirs]
    return ([statistics.median(mine[i]) for i in both],
            [statistics.median(theirs[i]) for i in both])


def paired(samples: dict[str, list[float]],
           clicks: dict[str, list[list[object]]]) -> dict[str, dict[str, object]]:
    """This checkout against the baseline, ``dash`` / ``base`` pair by pair
    (:func:`paired.paired_ratio`): cold and warm (one pair a round) and the click (one pair a
    round and page where both sides' clicks were timed)."""
    from paired import paired_ratio  # on the path since measure()

    def timed(records: list[list[object]]) -> dict[tuple[object, object], float]:
        return {(i, path): s for i, path, s, _wall in records if isinstance(s, float)}

    dash, base = timed(clicks["dash_click"]), timed(clicks["base_click"])
    both = [key for key in dash if key in base]
    out = {kind: paired_ratio(samples[f"dash_{kind}"], samples[f"base_{kind}"])
           for kind in ("cold", "warm")}
    out["click"] = paired_ratio([dash[k] for k in both], [base[k] for k in both])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write every sample here")
    parser.add_argument("--baseline", type=Path,
                        help="another checkout (e.g. `git archive REV | tar -x -C DIR`) whose "
                             "dashboard is measured in the same rounds")
    args = parser.parse_args()
    result = measure(args.rounds, args.baseline)
    s = result["summary"]
    med = s["median_s"]
    from paired import ratio_line  # on the path since measure()

    for name in ("dash", "base"):
        if f"{name}_cold" not in med:
            continue
        print(f"[{name}] cold load: JS chunks {s['js_chunks_cold_load'][name]} vs "
              f"{s['js_chunks_cold_load']['bare']}; WebSocket messages "
              f"{s['ws_messages_cold_load'][name]} vs {s['ws_messages_cold_load']['bare']}")
        for kind, target in TARGETS.items():
            print(f"[{name}] {kind}: {med[f'{name}_{kind}']:.2f} s, bare {med[f'bare_{kind}']:.2f} s,"
                  f" ratio (median of {args.rounds} rounds) "
                  f"{s['ratio_median'][f'{name}_{kind}']:.2f}x (target <= {target}x); pair by "
                  f"pair {ratio_line(s['vs_bare'][f'{name}_{kind}'])}")
            print(f"[{name}]   as Playwright's wall clock sees it: {med[f'{name}_{kind}_wall']:.2f} s,"
                  f" bare {med[f'bare_{kind}_wall']:.2f} s, ratio "
                  f"{s['ratio_median'][f'{name}_{kind}_wall']:.2f}x")
        if f"{name}_click" in med:
            lo, hi = s["click_range_ms"][name]
            print(f"[{name}] click to chart: median {1e3 * med[f'{name}_click']:.0f} ms ({lo:.0f}-"
                  f"{hi:.0f} ms, {len(result['samples'][f'{name}_click'])} clicks; target <= "
                  f"{CLICK_TARGET_MS} ms); Playwright's wall clock "
                  f"{1e3 * med[f'{name}_click_wall']:.0f} ms")
            if name in s["click_ratio_median"]:
                blo, bhi = s["click_range_ms"]["bare"]
                print(f"[{name}]   a bare two-page Streamlit app's click: median "
                      f"{1e3 * med['bare_click']:.0f} ms ({blo:.0f}-{bhi:.0f} ms); dashboard / "
                      f"bare, median of the rounds' ratios {s['click_ratio_median'][name]:.2f}x; "
                      f"round by round {ratio_line(s['vs_bare'][f'{name}_click'])}")
    for key, per_round in s["click_failures"].items():
        print(f"[{key}] failed clicks per round: {per_round}"
              + "".join(f"\n  round {i}: {'; '.join(why)}"
                        for i, why in enumerate(s["click_failure_reasons"][key]) if why))
    for kind, r in s.get("paired", {}).items():
        print(f"[dash / base] {kind}: {ratio_line(r)}")
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in s['load_average'])}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
