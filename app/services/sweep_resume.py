"""A sweep's record of what it asked of its scheduler, and the sweep rebuilt from its folder when
a dashboard (or ``kernel-sweep``) that watched it has stopped.

The executor appends to ``<sweep>/queue.jsonl`` one line per submitted attempt (task index,
attempt number, scheduler id, and the note of a retry) and one when the user cancels. With
``spec.json``, ``sweep.json`` (the plan) and the tasks' own folders, that is everything a
restarted dashboard needs to ask Slurm about the tasks again (``squeue`` by id), go on
retrying and merge the sweep: no state lives only in a process. No Streamlit here.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from profiling_worker.schema import columns
from profiling_worker.schema.manifest import JobStatus, ManifestError, read_manifest
from profiling_worker.schema.spec import JobSpec, validate_spec

from app.services import sweep_plan as plan
from app.services import sweep_tasks as T
from app.services.job_recovery import owner_alive

QUEUE_FILE = "queue.jsonl"
_WATCHED: set[Path] = set()  # sweep folders a watcher of this process follows
_WATCHED_LOCK = threading.Lock()


def claim(path: Path) -> bool:
    """Mark ``path`` as watched by this process; False if a watcher here already has it (two
    executors of one server on one results folder must not both retry and merge it)."""
    with _WATCHED_LOCK:
        if path.resolve() in _WATCHED:
            return False
        _WATCHED.add(path.resolve())
        return True


def release(path: Path) -> None:
    """The watcher of ``path`` has stopped."""
    with _WATCHED_LOCK:
        _WATCHED.discard(path.resolve())


def _append(sweep_dir: Path, rows: list[dict[str, Any]]) -> None:
    with open(sweep_dir / QUEUE_FILE, "a", encoding="utf-8") as fh:
        fh.write("".join(json.dumps(r) + "\n" for r in rows))


def record_submitted(sweep_dir: Path, attempts: list[tuple[int, int, str, str]]) -> None:
    """Append ``(task index, attempt, scheduler id, retry note or "")`` of one submission."""
    _append(sweep_dir, [{"task": t, "attempt": a, "scheduler_id": s, **({"note": n} if n else {})}
                        for t, a, s, n in attempts])


def record_cancel(sweep_dir: Path) -> None:
    """Append the user's cancel (a restarted dashboard cancels what is left and merges)."""
    _append(sweep_dir, [{"cancel": True}])


@dataclass
class Record:
    """What ``queue.jsonl`` says: each task's attempts ``(attempt, scheduler id)`` in order,
    the retry notes in order, and whether the user cancelled."""

    attempts: dict[int, list[tuple[int, str]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    cancelled: bool = False


def read_record(sweep_dir: Path) -> Record:
    """Read ``queue.jsonl`` (none yet: an empty record). A last line cut short by a crash
    is skipped.

    Raises:
        OSError: the file exists but cannot be read.
    """
    record = Record()
    path = sweep_dir / QUEUE_FILE
    if not path.is_file():
        return record
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if row.get("cancel"):
            record.cancelled = True
        elif "task" in row:
            record.attempts.setdefault(int(row["task"]), []).append(
                (int(row["attempt"]), str(row["scheduler_id"])))
            if row.get("note"):
                record.notes.append(str(row["note"]))
    return record


def unwatched(results_dir: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Sweep folders (with ``sweep.json``) of ``results_dir`` whose manifest is not final and
    whose dashboard is gone (its pid is dead, or is this process and no watcher here has it);
    with their manifests, oldest first. A sweep of a live server on this host, or of a server
    on another host, is left to it."""
    found = []
    for child in sorted(results_dir.iterdir()) if results_dir.is_dir() else []:
        if not (child / plan.SWEEP_FILE).is_file():
            continue
        try:
            manifest = read_manifest(child)
        except ManifestError:
            continue
        with _WATCHED_LOCK:
            watched = child.resolve() in _WATCHED
        if not (JobStatus(manifest["status"]).finished or watched
                or owner_alive(manifest.get("server") or {})):
            found.append((child.resolve(), manifest))
    return found


def rebuild(sweep_dir: Path) -> tuple[JobSpec, plan.SweepOptions, list[T.Task], Record]:
    """The spec, options and tasks (with the attempts submitted so far) of a sweep folder.

    Raises:
        OSError: a file cannot be read.
        ValueError: ``spec.json`` or ``sweep.json`` is not valid (SpecInvalid included).
    """
    spec = validate_spec(json.loads((sweep_dir / columns.SPEC_FILE).read_text(encoding="utf-8")))
    saved = json.loads((sweep_dir / plan.SWEEP_FILE).read_text(encoding="utf-8"))
    options = plan.sweep_options(saved["options"])
    record = read_record(sweep_dir)
    tasks = []
    for index, entry in enumerate(saved["tasks"]):
        task = T.Task(index, plan.task_name(index), tuple(int(c) for c in entry["configs"]))
        task.attempts = [T.Attempt(plan.attempt_dir(sweep_dir, index, a), sid)
                         for a, sid in record.attempts.get(index, [])]
        tasks.append(task)
    return spec, options, tasks, record
