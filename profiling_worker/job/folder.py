"""A job folder the worker can run in, checked before anything is written to it: each entry the
worker writes is absent or of the right kind (``tables`` a folder, ``worker.log`` a file...).
A wrong one ends the job ``failed`` with a manifest naming it (issue 26: ``JOB/tables`` being a
file ended as "internal: unexpected error", ``JOB/worker.log`` a folder as a raw traceback and
no manifest)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from profiling_worker.bundle.schema import columns as C

#: Entries the worker reads or writes as files, and as folders.
FILES = (C.SPEC_FILE, C.MANIFEST_FILE, C.EVENTS_FILE, C.LOG_FILE)
FOLDERS = (C.TABLES_DIR, C.NSIGHT_DIR)


def layout_problem(job_dir: Path) -> str | None:
    """What is wrong with ``job_dir``'s entries, or None (missing ones are fine: the worker
    creates them)."""
    if not job_dir.is_dir():
        return f"{job_dir.name} is not a folder"
    for name in (*FILES, *FOLDERS):  # the worker writes them: never through a link
        if (job_dir / name).is_symlink():
            return f"{job_dir.name}/{name} is a link; the worker writes it, it must not be one"
    for name in FILES:
        path = job_dir / name
        if path.exists() and not path.is_file():
            return f"{job_dir.name}/{name} is a folder (or another non-file), not a file"
    for name in FOLDERS:
        path = job_dir / name
        if path.exists() and not path.is_dir():
            return f"{job_dir.name}/{name} is a file, not a folder"
    return None


def fail_job(job_dir: Path, error: dict[str, Any]) -> int:
    """End the job ``failed`` before it ran: an ``error`` event on stdout and a manifest with
    ``error`` (``kind``, ``message``, ``hint``, ``log_tail``) when one can be written; returns
    the exit code 1."""
    from profiling_worker.bundle.schema.manifest import (JobStatus, ManifestError, now_iso,
                                                         read_manifest, write_manifest)

    error = {"log_tail": "", **error}
    print(json.dumps({"event": "error", **error}), flush=True)
    try:
        manifest = read_manifest(job_dir)
    except ManifestError:
        manifest = {"job_id": job_dir.name}
    manifest.update(status=JobStatus.FAILED.value, error=error, finished_at=now_iso())
    try:
        write_manifest(job_dir, manifest)
    except OSError as exc:  # manifest.json itself is the broken entry, or the disk is full
        print(f"cannot write {job_dir}/manifest.json: {exc}", file=sys.stderr, flush=True)
    return 1
