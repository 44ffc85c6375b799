"""The browser and server helpers the browser tests (``tests/e2e/conftest.py``) and the memory
benchmarks (``benchmarks/upload_memory.py``, ``benchmarks/download_memory.py``) share: where
Chromium is, a free port, the health probe, a process's resident set, and the waits on the
app's first run. Nothing here imports pytest, so a benchmark run as a script can use it; the
tests never import ``benchmarks/``.
"""

from __future__ import annotations

import os
import socket
import urllib.request
from pathlib import Path

#: The Debian package (``apt-get install chromium``), not a browser Playwright downloads.
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
#: Bound on a wait for a script run, ms: a run on a busy 2-core machine takes longer than
#: Playwright's 5 s (CI failed so, issue 41).
APP_RUN_TIMEOUT_MS = 60_000


def rss_mib(pid: int) -> float:
    """Resident set of process ``pid`` in MiB (``VmRSS`` of ``/proc/<pid>/status``).

    Raises:
        RuntimeError: the process is gone (no ``VmRSS`` line).
    """
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}: the process is gone")


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def healthy(url: str) -> bool:
    """Whether the Streamlit server at ``url`` answers ``ok`` on ``/_stcore/health`` (2 s)."""
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
            return bool(resp.read() == b"ok")
    except OSError:
        return False


def wait_for_app_run(page, timeout: int = APP_RUN_TIMEOUT_MS) -> None:  # type: ignore[no-untyped-def]
    """Wait until the app is connected and no script run is in progress."""
    page.locator("[data-testid='stApp'][data-test-connection-state='CONNECTED']").wait_for(
        state="attached", timeout=timeout)
    page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for(
        state="attached", timeout=timeout)


def open_app(page, url: str, query: str = "") -> None:  # type: ignore[no-untyped-def]
    """Go to the app and wait for its first run to finish."""
    page.goto(url + query)
    page.get_by_test_id("stAppViewContainer").wait_for(state="attached", timeout=APP_RUN_TIMEOUT_MS)
    wait_for_app_run(page)
