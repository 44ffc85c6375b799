"""JSON-line events from the worker to whoever launched it.

Each event is one JSON object on one line with an ``event`` key:

- ``{"event": "progress", "done": 3, "total": 12, "stage": "profiling"}``
- ``{"event": "log", "message": "..."}`` and ``{"event": "warning", "message": "..."}``
- ``{"event": "error", "kind": "spec_invalid", "message": "...", "hint": "...", "log_tail": "..."}``
- ``{"event": "result", "status": "done", "bundle": "<dir>"}``

The worker writes them to ``events.jsonl`` in the job directory and to its private stdout.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

KINDS = ("progress", "log", "warning", "error", "result")
#: The stage of the progress event sent once every run the job asked for is measured (or the
#: backend stopped measuring): the worker writes the bundle, and a cancel is only noted
#: (:mod:`profiling_worker.job.runner`); the job manager does not SIGKILL it meanwhile.
WRITING_STAGE = "writing bundle"


def make_event(event: str, **fields: Any) -> dict[str, Any]:
    """Build an event dict with a wall-clock timestamp ``t`` (s since the epoch).

    Raises:
        ValueError: ``event`` is not one of :data:`KINDS`.
    """
    if event not in KINDS:
        raise ValueError(f"unknown event {event!r}; expected one of {KINDS}")
    return {"event": event, "t": round(time.time(), 3), **fields}


def encode(event: dict[str, Any]) -> str:
    """One JSON line (with the trailing newline)."""
    return json.dumps(event, default=str) + "\n"


def parse_line(line: str) -> dict[str, Any] | None:
    """Parse one line; returns None for anything that is not an event (library noise)."""
    try:
        data = json.loads(line)
    except ValueError:
        return None
    if isinstance(data, dict) and data.get("event") in KINDS:
        return data
    return None


def last_event(path: Path, kind: str, key: str | None = None) -> dict[str, Any] | None:
    """The last ``kind`` event of the events file ``path`` (the last holding ``key``, where
    given), None when it has none or cannot be read (a line being written is skipped)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for event in filter(None, map(parse_line, reversed(lines))):
        if event["event"] == kind and (key is None or key in event):
            return event
    return None
