"""The server's memory during and after a 150 MB download from the Files page (issue 26: one
150 MB file download took the server to 1,967 MB; the target: at most 100 MB above its baseline
during, nothing held after).

Starts the dashboard as the README does (``python -m app.cli``) on 127.0.0.1 with one result, a
copy of the recorded J1 bundle with a 150 MB file of random bytes, opens its Files page in
headless Chromium (the session whose link it is), and downloads through the page's links
while sampling the server process's resident set (``VmRSS`` of ``/proc/<pid>/status``) every
20 ms:

- ``file``: the 150 MB file, read by a client at full speed, then the same with a client that
  stops for 3 s after 10 MiB (a server without back-pressure would buffer the rest);
- ``zip``: the whole bundle as a zip (made as it is sent);
- ``report``: the ``.ncu-rep`` inflated from the largest ``.ncu-rep.gz`` the demo bundles ship
  (4.5 MB, 18.4 MB inflated; no larger real report is at hand), in place of J1's.

Prints, per download, the baseline (just before), the peak above it, and the resident set 5 s
after the download ended and after one more page run. Exits 1 when the page offers no streamed
link for the file (before the download route: files over 64 MiB were not offered at all) or a
download is not byte-identical.

Usage: ``python benchmarks/download_memory.py`` (from the repository root; ~1 minute, 450 MB
of temporary disk; Chromium at /usr/bin/chromium or $CHROMIUM).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.browser import CHROMIUM, CHROMIUM_ARGS, free_port, healthy, rss_mib  # noqa: E402
from tests.scenarios import SCENARIOS, largest_demo_report  # noqa: E402

JOB = "download-150mb"
LARGE = "nsight/large.bin"
REPORT = "nsight/ncu-output-profiled-0.ncu-rep.gz"
LARGE_BYTES = 150 * 10**6
MIB = 2**20


class Sampler(threading.Thread):
    """The peak resident set of ``pid`` while it runs (every 20 ms)."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.peak, self.done = pid, 0.0, threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            self.peak = max(self.peak, rss_mib(self.pid))
            time.sleep(0.02)


def fetch(url: str, pause_after: int | None = None) -> tuple[int, str, float]:
    """Read ``url`` 1 MiB at a time (stopping 3 s once after ``pause_after`` bytes); its size,
    sha256 and the seconds until its headers arrived."""
    digest, size, start = hashlib.sha256(), 0, time.monotonic()
    with urllib.request.urlopen(url, timeout=60) as resp:
        headers_s = time.monotonic() - start
        while chunk := resp.read(MIB):
            digest.update(chunk)
            size += len(chunk)
            if pause_after is not None and size >= pause_after:
                time.sleep(3)
                pause_after = None
    return size, digest.hexdigest(), headers_s


def measure(pid: int, label: str, url: str, pause_after: int | None = None) -> tuple[int, str]:
    """One download while sampling; prints its figures and returns (size, sha256)."""
    base = rss_mib(pid)
    sampler = Sampler(pid)
    sampler.start()
    start = time.monotonic()
    size, sha, headers_s = fetch(url, pause_after)
    took = time.monotonic() - start
    sampler.done.set()
    sampler.join()
    time.sleep(5)
    print(f"{label:24s} {size / 1e6:6.1f} MB in {took:4.1f} s (headers {headers_s:4.1f} s): baseline {base:6.0f} MiB, "
          f"peak {sampler.peak - base:+5.0f} MiB, 5 s after {rss_mib(pid) - base:+5.0f} MiB")
    return size, sha


def make_results(tmp: Path) -> str:
    """The result store with ``JOB``; the large file's sha256."""
    bundle = tmp / "results" / JOB
    shutil.copytree(SCENARIOS / "h200-ncu-j1-fp16", bundle)
    shutil.copyfile(largest_demo_report(), bundle / REPORT)
    digest = hashlib.sha256()
    with open(bundle / LARGE, "wb") as fh:
        for _ in range(LARGE_BYTES // 10**6):
            chunk = os.urandom(10**6)
            digest.update(chunk)
            fh.write(chunk)
    (tmp / "bundled").mkdir()
    return digest.hexdigest()


def links(page, url: str) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The Files page's download links of the large file and of the zip -> absolute URL
    (none when the page does not offer the file within 60 s)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.goto(f"{url}/files?job={JOB}")
    row = page.get_by_test_id("stHorizontalBlock").filter(
        has=page.get_by_text(LARGE, exact=True))
    report_row = page.get_by_test_id("stHorizontalBlock").filter(
        has=page.get_by_text(REPORT, exact=True))
    wanted = {"file": row.get_by_role("link", name="Download", exact=True),
              "zip": page.get_by_role("link", name="Download the whole bundle"),
              "report": report_row.get_by_role("link", name="Download .ncu-rep")}
    try:
        wanted["file"].wait_for(timeout=60_000)
    except PlaywrightTimeout:
        return {}
    return {what: url + link.get_attribute("href") for what, link in wanted.items()
            if link.count()}


def main() -> int:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        sha = make_results(tmp)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        env = dict(os.environ, KPROF_BUNDLED_DIR=str(tmp / "bundled"), PYTHONPATH=str(ROOT))
        with open(tmp / "server.log", "wb") as log:
            server = subprocess.Popen([sys.executable, "-m", "app.cli", "--results",
                                       str(tmp / "results"), "--port", str(port)], cwd=ROOT,
                                      env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            while not healthy(url):
                if server.poll() is not None:
                    print((tmp / "server.log").read_text()[-3000:])
                    return 1
                time.sleep(0.25)
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = browser.new_page()
                found = links(page, url)
                if "file" not in found:
                    print(f"no streamed download link for {LARGE} ({LARGE_BYTES / 1e6:.0f} MB)"
                          " on the Files page: not offered")
                    return 1
                print(f"server pid {server.pid}, after the page's first run: "
                      f"{rss_mib(server.pid):.0f} MiB")
                results = [measure(server.pid, "file, full speed", found["file"]),
                           measure(server.pid, "file, client stops 3 s", found["file"],
                                   10 * MIB)]
                if "zip" in found:
                    measure(server.pid, "zip of the bundle", found["zip"])
                if "report" in found:
                    measure(server.pid, "inflated .ncu-rep", found["report"])
                page.reload()  # one more page run: whatever it still held is swept
                links(page, url)
                print(f"after one more page run: {rss_mib(server.pid):.0f} MiB")
                browser.close()
            if any(r != (LARGE_BYTES, sha) for r in results):
                print(f"a download was not the file's bytes: {results}")
                return 1
        finally:
            server.terminate()
            server.wait(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
