"""The server's memory after a closed tab's upload, never imported, once its session is shut
down (issue 41: +392 MB still held 11 minutes after the tab closed; then, with the session shut
down, a 150 MB upload still kept the server 150 MB up for good).

Starts the dashboard as the README does (``python -m app.cli``) on 127.0.0.1 with an empty
result store, a reconnect window (``server.disconnectedSessionTTL``) of :data:`WINDOW_S` s (the
default is 120 s: the session is shut down at 0.9 x the window either way) and Streamlit's debug
log, where it says it shuts a session down. Each round, in a fresh headless Chromium context:
opens the Import page, uploads a :data:`UPLOAD_MB` MB CSV without importing it, closes the tab,
waits for the log's ``Shutting down (id=<session>)`` and samples the server's resident set
(``VmRSS``) for :data:`AFTER_S` s more. Prints per round the resident set before the upload,
with it, and above "before" at the shutdown and at the end of the sampling (its lowest
value in that time, too).

``--baseline DIR``: a checkout of an earlier commit, measured in the same rounds (its server and
ours alternate, who goes first rotates), so the machine's load hits both alike.

This is the OS's view (RSS), not Python's: the upload is one ``bytes`` object of the file's size,
far above glibc's largest mmap threshold (32 MiB on 64-bit), so it has a mapping of its own,
returned to the OS (munmap) when the last reference goes; what RSS keeps after that is the
allocator's and the request's small buffers. ``tests/unit/test_server_guard.py`` checks the
Python side (the shut-down session no longer references the file).

``--json FILE``: every round's figures, the machine's CPUs and load, for
``benchmarks/doc_figures.py`` (which recomputes the figures docs/performance.md states).

Usage: ``python benchmarks/upload_memory.py [--rounds 3] [--baseline DIR] [--json FILE]``
(from the repository root; about 30 s a round and side, 150 MB of temporary disk; Chromium at
/usr/bin/chromium or $CHROMIUM).
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.browser import CHROMIUM, CHROMIUM_ARGS, free_port, healthy, rss_mib  # noqa: E402

UPLOAD_MB = 150
WINDOW_S = 4
AFTER_S = 10
#: Bound on any one wait (server start, upload, shutdown), s: generous on a loaded machine.
WAIT_S = 300


def start(checkout: Path, tmp: Path) -> tuple[subprocess.Popen[bytes], str, Path]:
    """The dashboard of ``checkout`` on a free port: its process, URL and log file."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    (tmp / "results").mkdir(exist_ok=True)
    (tmp / "bundled").mkdir(exist_ok=True)
    log_path = tmp / f"server-{port}.log"
    env = dict(os.environ, KPROF_BUNDLED_DIR=str(tmp / "bundled"), PYTHONPATH=str(checkout))
    with open(log_path, "wb") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "--results", str(tmp / "results"), "--port",
             str(port), "--server.disconnectedSessionTTL", str(WINDOW_S), "--logger.level",
             "debug"], cwd=checkout, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + WAIT_S
    while not healthy(url):
        if server.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the dashboard did not start:\n{log_path.read_text()[-3000:]}")
        time.sleep(0.25)  # polling interval of the health probe
    return server, url, log_path


def one_round(browser, server: subprocess.Popen[bytes], url: str, log_path: Path,  # type: ignore[no-untyped-def]
              upload: Path) -> dict[str, float]:
    """Upload ``upload`` in a fresh tab, close it, wait for its session's shutdown: the
    resident sets (MiB) before and with the upload, and above "before" after the shutdown."""
    from tests.browser import open_app, wait_for_app_run

    context = browser.new_context()
    page = context.new_page()
    open_app(page, f"{url}/import")
    before = rss_mib(server.pid)
    with page.expect_response(lambda r: "/_stcore/upload_file/" in r.url
                              and r.request.method == "PUT", timeout=WAIT_S * 1000) as put:
        page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(upload))
    wait_for_app_run(page, WAIT_S * 1000)
    held = rss_mib(server.pid)
    session = put.value.url.split("/_stcore/upload_file/")[1].split("/")[0]
    context.close()
    deadline = time.monotonic() + WAIT_S
    while f"Shutting down (id={session})" not in log_path.read_text():
        if time.monotonic() > deadline:
            raise RuntimeError(f"session {session} was not shut down in {WAIT_S} s")
        time.sleep(0.1)  # polling interval of the server's log
    at_shutdown = rss_mib(server.pid)
    samples, end = [], time.monotonic() + AFTER_S
    while time.monotonic() < end:
        samples.append(rss_mib(server.pid))
        time.sleep(0.1)  # sampling interval
    return {"before": before, "held": held - before, "at_shutdown": at_shutdown - before,
            "after": samples[-1] - before, "lowest_after": min(samples) - before}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="a checkout of an earlier commit")
    parser.add_argument("--json", type=Path, help="write every round's figures here")
    args = parser.parse_args()
    load_before = os.getloadavg()
    from playwright.sync_api import sync_playwright

    checkouts = {"this": ROOT, **({"base": args.baseline.resolve()} if args.baseline else {})}
    with tempfile.TemporaryDirectory() as tmp_name, sync_playwright() as pw:
        tmp = Path(tmp_name)
        upload = tmp / "profiled_data-kept-0.csv"
        with upload.open("wb") as fh:
            fh.write(b"Annotation,Value\n" + b"x,1\n" * (UPLOAD_MB * 10**6 // 4))
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        servers = {side: start(path, tmp) for side, path in checkouts.items()}
        rows: dict[str, list[dict[str, float]]] = {side: [] for side in checkouts}
        try:
            for n in range(args.rounds):
                order = list(checkouts)[n % len(checkouts):] + list(checkouts)[:n % len(checkouts)]
                for side in order:
                    row = one_round(browser, *servers[side], upload)
                    rows[side].append(row)
                    print(f"round {n + 1} {side}: " + ", ".join(
                        f"{k} {v:+.0f}" if k != "before" else f"{k} {v:.0f}"
                        for k, v in row.items()) + " MiB", flush=True)
        finally:
            browser.close()
            for server, _, _ in servers.values():
                server.terminate()
                server.wait(30)
    for side, side_rows in rows.items():
        print(f"{side} median over {len(side_rows)} rounds: " + ", ".join(
            f"{k} {statistics.median(r[k] for r in side_rows):+.0f}"
            for k in ("held", "at_shutdown", "after", "lowest_after")) + f" MiB above before "
            f"({UPLOAD_MB} MB upload = {UPLOAD_MB * 10**6 / 2**20:.0f} MiB)")
    if args.json:
        args.json.write_text(json.dumps(
            {"upload_mb": UPLOAD_MB, "window_s": WINDOW_S, "after_s": AFTER_S,
             "rounds": args.rounds, "cpus": os.cpu_count(), "load_average_before": load_before,
             "load_average_after": os.getloadavg(), "rows_mib": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
