"""The errors a cluster sweep ends with when Slurm, its record or its folder fails it: the
manifest's ``error`` (kind, message naming what failed, hint with the fix). No Streamlit."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from profiling_worker.bundle.errors import JobError
from profiling_worker.bundle.schema.manifest import JobStatus, now_iso, write_manifest

from app.services.sweep_resume import RECORD_HINT


def slurm_missing(message: str) -> JobError:
    """The error of a sweep that Slurm did not take."""
    return {"kind": "slurm_missing", "message": message,
            "hint": "run the dashboard on a host with Slurm's commands (sbatch, squeue, scancel) "
                    "and SLURM_CONF, or choose Run on: this host", "log_tail": ""}


def unrecorded(message: str) -> JobError:
    """The error of a sweep not submitted because its folder cannot be written: its record
    ``queue.jsonl`` (the tasks' Slurm ids, which a restarted dashboard follows: without it they
    would run unwatched) or an attempt folder."""
    return {"kind": "sweep_unwritable", "log_tail": "",
            "message": f"Nothing was submitted to Slurm: {message}",
            "hint": RECORD_HINT}


def not_resumed(path: Path, manifest: dict[str, Any], exc: Exception) -> None:
    """End a sweep that cannot be rebuilt from its folder ``interrupted``, saying why."""
    manifest.update(status=JobStatus.INTERRUPTED.value, finished_at=now_iso(), error={
        "kind": "interrupted", "log_tail": "",
        "message": f"The dashboard that watched this sweep stopped, and the sweep cannot be "
                   f"watched again from its folder: {type(exc).__name__}: {exc}",
        "hint": "The tasks' folders (tasks/) and Slurm logs (.submitit/) are kept; submit "
                "the sweep again."})
    try:
        write_manifest(path, manifest)
    except OSError as err:
        print(f"kprof sweeps: cannot mark {path.name} interrupted: {err}", file=sys.stderr,
              flush=True)
