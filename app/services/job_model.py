"""One job of the dashboard's queue as the job panel sees it, and the per-GPU lane it runs in.

A lane is one GPU (or the cpu): jobs of a lane run one at a time, and across processes the
lane's ``flock`` (``results_dir/.lock-<lane>``) is held by whichever worker profiles on it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from profiling_worker.bundle.errors import JobError
from profiling_worker.bundle.schema import backends as B
from profiling_worker.bundle.schema.manifest import JobStatus, now_iso
from profiling_worker.bundle.schema.spec import JobSpec


def new_job_id(spec: JobSpec, when: float | None = None) -> str:
    """A time-based id such as ``20261129-231500-matmul-ab12`` (UTC, first kernel, 4 hex)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(when))
    kernel = re.sub(r"[^A-Za-z0-9_.-]", "_", spec.kernels[0] if spec.kernels else "job")[:40]
    return f"{stamp}-{kernel}-{secrets.token_hex(2)}"


def claim_job_dir(results_dir: Path, spec: JobSpec, draw: Callable[[JobSpec], str] = new_job_id,
                  path_of: Callable[[Path, str], Path] = lambda root, i: root / i
                  ) -> tuple[str, Path]:
    """A new job id and its folder, made here (``mkdir`` is atomic: the folder is the claim).
    Ids of one second differ in 4 random hex digits only, so two submissions of one second
    can draw the same id (about 0.7 % for 30 at once): the later one draws again.

    Args:
        draw: makes an id (:func:`new_job_id`).
        path_of: the folder of an id in ``results_dir`` (``result_store.job_path`` checks it).

    Raises:
        OSError: the folder cannot be made (disk full, permissions), or 100 draws collided.
    """
    for _ in range(100):
        job_id = draw(spec)
        path = path_of(results_dir, job_id)
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return job_id, path
    raise FileExistsError(f"no free job id in {results_dir} after 100 draws")


@dataclass(frozen=True)
class TaskView:
    """One array task of a cluster sweep as the job panel shows it.

    ``state``: ``pending``, ``running``, ``done``, ``failed``, ``preempted`` or ``cancelled``;
    ``done``/``total``: the worker's progress steps of the current attempt; ``attempt``
    counts from 0 (a retry is attempt 1 ...); ``configs``: indices into the sweep's configs.
    """

    name: str
    state: str
    attempt: int
    configs: tuple[int, ...]
    node: str = ""
    scheduler_id: str = ""
    done: int = 0
    total: int = 0
    stage: str = ""
    reason: str = ""


@dataclass
class Job:
    """What the job panel shows about one job of this server (a copy, see ``snapshot``).

    ``done``/``total`` count progress steps from the worker's progress events; ``error`` is the
    manifest error dict (kind, message, hint, log_tail) of a failed job.
    """

    job_id: str
    path: Path
    spec: JobSpec
    lane: str
    status: JobStatus = JobStatus.QUEUED
    submitted_at: str = field(default_factory=now_iso)
    done: int = 0
    total: int = 0
    stage: str = ""
    config: int | None = None
    """The config (index) the worker's last progress event named, None before one did."""
    run: int | None = None
    """The run (index, from 0) of :attr:`config` begun last, None in its warm-up."""
    config_since: float | None = None
    """When the worker began :attr:`config` (epoch s, its first event of that config)."""
    warnings: list[str] = field(default_factory=list)
    error: JobError | None = None
    result_ready: str | None = None
    """When the worker had written the runs and aggregated tables (ISO, UTC; its progress event
    or manifest ``result_ready``): the pages can draw them while it writes the rest."""
    returncode: int | None = None
    cancel_requested: bool = False
    tasks: tuple[TaskView, ...] = ()
    """A cluster sweep's array tasks (empty for a job of this host's lanes)."""
    watched_by: str = ""
    """A cluster sweep another dashboard server watches: which one (shown read-only here)."""

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
    return f"gpu{spec.gpu}" if B.on_gpu(spec.backend) else B.CPU


class LaneLocks:
    """One open file description of ``results_dir/.lock-<lane>`` per lane, kept for the life of
    the job manager, and :meth:`held` to ``fcntl.flock`` it around a job.

    Every worker of the lane, cold or warm, inherits this descriptor (``pass_fds``): flock
    locks belong to the open file description, so a lock taken for a job stays held while any
    worker holding the descriptor lives, even if its server is killed mid-job; a second server
    (its own description) then waits for the GPU. The server unlocks between jobs, which frees
    the lane also for an idle warm worker.
    """

    def __init__(self, results_dir: Path):
        self.results_dir = results_dir
        self._fds: dict[str, int] = {}
        self._mutex = threading.Lock()  # fd() and close() from the dispatch threads and shutdown

    def fd(self, lane: str) -> int:
        """The lane's descriptor (opened on first use; not inheritable unless passed)."""
        with self._mutex:
            if lane not in self._fds:
                self._fds[lane] = os.open(self.results_dir / f".lock-{lane}",
                                          os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            return self._fds[lane]

    def close(self) -> None:
        """Close every lane's descriptor (shutdown; a server's exit does the same): a lock that
        a worker inherited stays held until that worker ends. A job inside :meth:`held` then
        releases nothing: its descriptor is gone, and its number may already name another
        file (unlocking that would free someone else's lock)."""
        with self._mutex:
            fds, self._fds = list(self._fds.values()), {}
        for fd in fds:
            os.close(fd)

    @contextlib.contextmanager
    def held(self, lane: str) -> Iterator[int]:
        """Exclusive lock of the lane for one job (blocks while another process holds it);
        yields the descriptor for the worker to inherit. Released once, and only while the
        descriptor is still this lane's (see :meth:`close`)."""
        fd = self.fd(lane)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield fd
        finally:
            with self._mutex:
                if self._fds.get(lane) == fd:
                    fcntl.flock(fd, fcntl.LOCK_UN)
