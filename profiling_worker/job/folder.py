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


#: Manifest entries a worker keeps from the one it found: who queued the job, when, and itself.
KEPT = ("server", "worker", "created_at")


def record_worker(job_dir: Path, started_at: str) -> dict[str, Any]:
    """Name this worker in the job's manifest before it profiles (``worker``: pid, host,
    process, :mod:`profiling_worker.bundle.schema.owner`), so that any reader of the result
    store knows who runs it. A job nothing queued (no manifest: run from a shell) is written
    ``running``, its worker named ``worker CLI``, its owner; a queued one keeps the entries
    its server wrote. Returns the entries the final manifest keeps (:data:`KEPT`); a manifest
    that cannot be written is said on stderr and the job runs on (its final write says why).
    """
    from profiling_worker.bundle.schema import owner
    from profiling_worker.bundle.schema.manifest import JobStatus, update_manifest

    written: dict[str, Any] = {}

    def change(previous: dict[str, Any]) -> dict[str, Any]:
        queued = isinstance(previous.get("server"), dict)
        entry = owner.owner_entry(owner.WORKER if queued else owner.WORKER_CLI)
        if queued:  # the server's own worker entry (``warm``) stays
            written.update(previous, worker={**(previous.get("worker") or {}), **entry})
        else:  # the spec too, when it is valid, so that a listing names its kernels
            written.update(job_id=job_dir.name, status=JobStatus.RUNNING.value,
                           created_at=started_at, started_at=started_at, worker=entry,
                           **_valid_spec(job_dir))
        return written

    try:
        update_manifest(job_dir, change)
    except OSError as exc:
        print(f"cannot record the worker in {job_dir}/manifest.json: {exc}", file=sys.stderr,
              flush=True)
        return {}
    return {k: written[k] for k in KEPT if k in written}


def _valid_spec(job_dir: Path) -> dict[str, Any]:
    """``{"spec": ...}`` of the job's ``spec.json`` when it is a valid spec (checked without
    the kernel catalog), else ``{}`` (the worker's checks say why later)."""
    from profiling_worker.bundle.schema.spec import SpecInvalid, load_spec

    try:
        return {"spec": load_spec(str(job_dir / C.SPEC_FILE)).to_json()}
    except (OSError, SpecInvalid):
        return {}
