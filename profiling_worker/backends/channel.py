"""The worker's event channel and log redirection.

Events go to ``events.jsonl`` in the job directory and to a private duplicate of the
original stdout. File descriptors 1 and 2 are then pointed at ``worker.log``, so prints from
nsight-python, ncu (a child that inherits them) and libraries land in the log, never in the
event stream.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from profiling_worker.bundle.paths import inside_bundle
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema import events


class Channel:
    """Writes JSON-line events. ``stdout_fd=None`` writes to the events file only (used by the
    launch-mode child, whose stdout ncu owns)."""

    def __init__(self, job_dir: Path, stdout_fd: int | None):
        self.job_dir = job_dir
        self.events_path = job_dir / C.EVENTS_FILE
        self.stdout_fd = stdout_fd

    def emit(self, event: str, **fields: Any) -> None:
        """Append one event (see bundle/schema/events.py) to the file and the private stdout."""
        line = events.encode(events.make_event(event, **fields))
        try:
            with open(self.events_path, "a", encoding="utf-8") as fh:
                fh.write(line)
        except OSError as exc:  # disk full: the private stdout copy may still reach the app
            print(f"events.jsonl not written ({exc}): {line}", file=sys.stderr, flush=True)
        if self.stdout_fd is not None:
            try:
                os.write(self.stdout_fd, line.encode())
            except OSError:  # the reader went away; the events file still has everything
                self.stdout_fd = None


def redirect_output(job_dir: Path) -> int:
    """Point fds 1 and 2 at ``worker.log``; return a duplicate of the original stdout."""
    sys.stdout.flush()
    sys.stderr.flush()
    private = os.dup(1)
    log = os.open(job_dir / C.LOG_FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    return private


def log_tail(job_dir: Path, lines: int = 40) -> str:
    """The last ``lines`` lines of ``worker.log`` ('' when there is none)."""
    path = inside_bundle(job_dir, C.LOG_FILE)
    try:
        text = path.read_text(encoding="utf-8", errors="replace") if path else ""
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])
