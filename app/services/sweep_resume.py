"""A sweep's record of what it asked of its scheduler, and the sweep rebuilt from its folder when
a dashboard (or ``kernel-sweep``) that watched it has stopped.

The executor appends to ``<sweep>/queue.jsonl``, before each sbatch, the submission it is about
to make (the array's unique job name, its tasks and attempts); after it, one line per submitted
attempt (task index, attempt number, scheduler id, and the note of a retry); and one when the
user cancels. Nothing is submitted that this file cannot record (:class:`RecordUnwritable`),
and an array whose ids a killed dashboard never wrote is found again by its name (:func:`adopt`).
With
``spec.json``, ``sweep.json`` (the plan) and the tasks' own folders, that is everything a
restarted dashboard needs to ask Slurm about the tasks again (``squeue`` by id), go on
retrying and merge the sweep: no state lives only in a process. No Streamlit here.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from profiling_worker.bundle.schema import columns
from profiling_worker.bundle.schema.manifest import JobStatus, ManifestError, read_manifest
from profiling_worker.bundle.schema.owner import owner_text
from profiling_worker.bundle.schema.spec import JobSpec, validate_spec

from app.services import sweep_plan as plan
from app.services import sweep_tasks as T
from app.services import sweep_lock
from app.services.job_recovery import job_folders, owner_alive

QUEUE_FILE = "queue.jsonl"
RECORD_HINT = ("free space on that file system, or make the sweep's folder writable for the "
               "dashboard's user, then submit again")


class RecordUnwritable(OSError):
    """``queue.jsonl`` cannot be written (disk full, read-only folder, permissions): what it
    would record is not done (no array is submitted unrecorded). The message names the file."""


def _append(sweep_dir: Path, rows: list[dict[str, Any]]) -> None:
    """Append rows to the record, flushed to the file system before returning.

    Raises:
        RecordUnwritable: the file cannot be written.
    """
    path = sweep_dir / QUEUE_FILE
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write("".join(json.dumps(r) + "\n" for r in rows))
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        raise RecordUnwritable(f"cannot write {path} (the sweep's record of its Slurm "
                               f"submissions, which a restarted dashboard follows): "
                               f"{exc.strerror or exc}") from exc


def record_submitting(sweep_dir: Path, name: str, attempts: list[tuple[int, int]],
                      notes: dict[str, str]) -> None:
    """Append, before sbatch runs, the submission about to be made: the array's unique job
    name and its ``(task index, attempt)`` in array order, with the retry notes by task name.
    A dashboard killed before it recorded the ids finds the array by that name (:func:`rebuild`).

    Raises:
        RecordUnwritable: then nothing may be submitted.
    """
    _append(sweep_dir, [{"submitting": name, "tasks": [list(a) for a in attempts],
                         **({"notes": notes} if notes else {})}])


def record_submitted(sweep_dir: Path, attempts: list[tuple[int, int, str, str]]) -> None:
    """Append ``(task index, attempt, scheduler id, retry note or "")`` of one submission.

    Raises:
        RecordUnwritable: the file cannot be written.
    """
    _append(sweep_dir, [{"task": t, "attempt": a, "scheduler_id": s, **({"note": n} if n else {})}
                        for t, a, s, n in attempts])


def record_cancel(sweep_dir: Path) -> None:
    """Append the user's cancel (a restarted dashboard cancels what is left and merges).

    Raises:
        RecordUnwritable: the file cannot be written.
    """
    _append(sweep_dir, [{"cancel": True}])


@dataclass(frozen=True)
class Intent:
    """A submission written down before sbatch whose Slurm ids were never recorded: the
    dashboard stopped between the two (or could not write the ids)."""

    name: str  # the array's job name (unique to this submission)
    attempts: tuple[tuple[int, int], ...]  # (task index, attempt) in array order
    notes: dict[str, str]


@dataclass
class Record:
    """What ``queue.jsonl`` says: each task's attempts ``(attempt, scheduler id)`` in order,
    the retry notes in order, and whether the user cancelled."""

    attempts: dict[int, list[tuple[int, str]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    cancelled: bool = False
    unrecorded: list[Intent] = field(default_factory=list)  # sbatch's ids never written


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
    intents = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if "submitting" in row:
            intents.append(Intent(str(row["submitting"]),
                                  tuple((int(t), int(a)) for t, a in row["tasks"]),
                                  dict(row.get("notes") or {})))
        elif row.get("cancel"):
            record.cancelled = True
        elif "task" in row:
            record.attempts.setdefault(int(row["task"]), []).append(
                (int(row["attempt"]), str(row["scheduler_id"])))
            if row.get("note"):
                record.notes.append(str(row["note"]))
    known = {(t, a) for t, rows in record.attempts.items() for a, _ in rows}
    record.unrecorded = [i for i in intents if not set(i.attempts) <= known]
    return record


def unwatched(results_dir: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Sweep folders (with ``sweep.json``) of ``results_dir`` whose manifest is not final and
    that no watcher of this process follows, with their manifests, oldest first. Whether
    another server watches one is its watch lock's to say (:mod:`app.services.sweep_lock`)."""
    found = []
    for child in job_folders(results_dir):  # a linked folder is not the store's: never resumed
        if not (child / plan.SWEEP_FILE).is_file() or sweep_lock.held(child):
            continue
        try:
            manifest = read_manifest(child)
        except ManifestError:
            continue
        if not JobStatus(manifest["status"]).finished:
            found.append((child.resolve(), manifest))
    return found


def other_host(manifest: dict[str, Any]) -> bool:
    """True when the sweep's server runs on another host sharing the folder: its watch lock
    may not reach this host (NFS without lock support), so the sweep is left to it."""
    server = manifest.get("server") or {}
    return server.get("host") not in (None, socket.gethostname()) and owner_alive(server)


def watcher_text(manifest: dict[str, Any]) -> str:
    """Who watches a sweep that this server shows read-only: ``kernel-sweep pid 123 on host
    h`` (the process the manifest names; ``dashboard server`` for one written before it did)."""
    return owner_text(manifest)


def tasks_done(tasks: list[T.Task]) -> int:
    """How many of a sweep's tasks have an attempt that ended ``done`` (read from the attempt
    folders): the true progress of a sweep another process watches, which this server only
    reads (it showed "starting 0/1,000" while 175 tasks were done)."""
    return sum(any(T.succeeded(a.folder) for a in task.attempts) for task in tasks)


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


def adopt(sweep_dir: Path, tasks: list[T.Task], unrecorded: list[Intent],
          adopt_array: Callable[[str, list[Path]], list[str] | None]) -> list[str]:
    """Give the tasks of submissions whose ids were never recorded (:attr:`Record.unrecorded`)
    their attempts back. The array is looked up in Slurm by its unique job name; found, its
    ids (``<array>_<index>``, submitit's order) are made ready to run and recorded now, and
    it is watched, retried or cancelled with the sweep as any other. Not found (never
    submitted, or ended and forgotten by Slurm after ``MinJobAge``), an attempt keeps its
    folder's result if it has one; the others are left out and their tasks submitted again.
    Returns one note per submission, saying which it was.

    Args:
        adopt_array: (job name, its attempt folders) -> the ids of that array, None if
            Slurm does not list it (:meth:`~app.services.sweep_queue.TaskQueue.adopt`).

    Raises:
        SlurmMissing: from ``adopt_array``, when Slurm does not answer.
    """
    notes = []
    for intent in unrecorded:
        ids = adopt_array(intent.name, [plan.attempt_dir(sweep_dir, t, a)
                                        for t, a in intent.attempts])
        names = ", ".join(plan.task_name(t) for t, _ in intent.attempts)
        if ids is not None:
            found = list(zip(intent.attempts, ids))
            _record_adopted(sweep_dir, intent, found)
            notes.append(f"tasks {names}: array {ids[0].split('_')[0]} (job name {intent.name}) "
                         f"was submitted before the dashboard stopped, without its Slurm ids "
                         f"recorded; found in Slurm by its name and adopted")
        else:
            found = [((t, a), "") for t, a in intent.attempts
                     if T.has_result(plan.attempt_dir(sweep_dir, t, a))]
            notes.append(f"tasks {names}: a submission (job name {intent.name}) whose Slurm ids "
                         f"were not recorded is not known to Slurm; {len(found)} of "
                         f"{len(intent.attempts)} left a result, the others are submitted again")
        for (index, attempt), sid in found:
            task = tasks[index]
            task.attempts.append(T.Attempt(plan.attempt_dir(sweep_dir, index, attempt), sid))
            task.attempts.sort(key=lambda x: int(x.folder.name[1:]))
    return notes


def _record_adopted(sweep_dir: Path, intent: Intent,
                    found: list[tuple[tuple[int, int], str]]) -> None:
    """Record the ids of an adopted array (a later restart need not look for it again); an
    unwritable record is said on stderr: its name still finds it."""
    try:
        record_submitted(sweep_dir, [(t, a, sid, intent.notes.get(plan.task_name(t), ""))
                                     for (t, a), sid in found])
    except RecordUnwritable as exc:
        print(f"kprof sweeps: {exc}", file=sys.stderr, flush=True)
