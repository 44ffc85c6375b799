"""One job of the dashboard's queue as the job panel sees it, and the per-GPU lane it runs in.

A lane is one GPU (or the cpu): jobs of a lane run one at a time, and across processes the
lane's ``flock`` (``results_dir/.lock-<lane>``) is held by whichever worker profiles on it.
"""

from __future__ import annotations

import contextlib
import fcntl
import re
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from profiling_worker.schema.manifest import JobStatus
from profiling_worker.schema.spec import JobSpec


def now_iso() -> str:
    """UTC timestamp, ISO 8601 with seconds."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def new_job_id(spec: JobSpec, when: float | None = None) -> str:
    """A time-based id such as ``20261129-231500-matmul-ab12`` (UTC, first kernel, 4 hex)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(when))
    kernel = re.sub(r"[^A-Za-z0-9_.-]", "_", spec.kernels[0] if spec.kernels else "job")[:40]
    return f"{stamp}-{kernel}-{secrets.token_hex(2)}"


@dataclass
class Job:
    """What the job panel shows about one job of this server (a copy, see ``snapshot``).

    ``done``/``total`` count progress steps from the worker's progress events; ``error`` is the
    manifest error dict (kind, message, hint, log_tail) of a failed job.
    """

    job_id: str
    path: Path
    spec: dict[str, Any]
    lane: str
    status: JobStatus = JobStatus.QUEUED
    submitted_at: str = field(default_factory=now_iso)
    done: int = 0
    total: int = 0
    stage: str = ""
    warnings: list[str] = field(default_factory=list)
    error: dict[str, Any] | None = None
    returncode: int | None = None
    cancel_requested: bool = False

    @property
    def active(self) -> bool:
        """True while queued or running."""
        return not self.status.finished

    @property
    def fraction(self) -> float:
        """Progress from 0.0 to 1.0 (0 until the worker reports a total)."""
        return min(1.0, self.done / self.total) if self.total else 0.0


def lane_of(spec: JobSpec) -> str:
    """Jobs in one lane run one at a time: ``gpu<index>`` for GPU backends, ``cpu`` otherwise."""
    return "cpu" if spec.backend == "cpu" else f"gpu{spec.gpu}"


@contextlib.contextmanager
def lane_lock(results_dir: Path, lane: str) -> Iterator[int]:
    """Exclusive ``fcntl.flock`` on ``results_dir/.lock-<lane>``: one job per GPU across
    processes (a second server, or a CLI run that takes the same lock). Yields the lock's file
    descriptor: the worker inherits it, so the GPU stays locked while a worker lives even if
    its server is gone."""
    with open(results_dir / f".lock-{lane}", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield fh.fileno()
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)

