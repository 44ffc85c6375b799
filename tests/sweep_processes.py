"""The processes a local sweep's tasks left, read from /proc (not through the app's own
process-group bookkeeping): submitit's controller and task and the worker each name a folder of
the sweep in their command line. For the tests that a cancel leaves none (issue 41)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import pytest


def task_processes(sweep: Path) -> dict[int, str]:
    """Live (not zombie) processes whose command line names ``sweep``: pid -> command line."""
    found = {}
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if str(sweep) in argv and state != "Z":
            found[int(proc.name)] = argv
    return found


def assert_all_gone(sweep: Path, bound_s: float = 300) -> None:
    """Wait for every process of the sweep's tasks to end; fail naming those left after
    ``bound_s`` (they are SIGKILLed then: a failed test leaves no 10-minute sleeper behind)."""
    deadline = time.monotonic() + bound_s
    while left := task_processes(sweep):
        if time.monotonic() > deadline:
            for pid in left:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            pytest.fail(f"task processes alive {bound_s:.0f} s after the cancel: {left}")
        time.sleep(0.2)
