"""One array task of a sweep, as it runs on a cluster node (submitit's pickled entry point).

A sweep's configs are split into tasks; each attempt of a task has a folder
``<sweep>/tasks/<task>/a<attempt>/`` holding ``spec.json`` (the task's configs) and
``reference/spec.json`` (a short reference kernel, the same on every task). :func:`run_task`
records where it runs (``task.json``: node, Slurm ids, ``CUDA_VISIBLE_DEVICES``), times the
reference kernel, then profiles the configs, each as its own fresh worker process
(``python -m profiling_worker run``, the command a user runs): nsight-python allows one tool per
process and cannot unload Nsight Compute. Stdlib only, and nothing of the app: a node needs the
worker's Python with submitit, nothing else.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

TASK_FILE = "task.json"  # where the attempt ran, written by the task itself
REFERENCE_DIR = "reference"  # the reference kernel's bundle inside an attempt folder
CONSOLE_FILE = "worker.console.log"  # the worker's stdout + stderr, as the job manager names it
#: Slurm variables recorded with each task: which job, array element and node ran it.
SLURM_VARIABLES = ("SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURMD_NODENAME",
                   "SLURM_JOB_PARTITION", "SLURM_RESTART_COUNT", "CUDA_VISIBLE_DEVICES",
                   "SUBMITIT_LOCAL_JOB_ID")


def where_am_i() -> dict[str, Any]:
    """The node, process and scheduler variables of this task (``task.json``)."""
    return {"node": os.environ.get("SLURMD_NODENAME") or socket.gethostname(),
            "host": socket.gethostname(), "pid": os.getpid(), "python": sys.executable,
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()),
            "env": {k: os.environ[k] for k in SLURM_VARIABLES if k in os.environ}}


class SigintToWorker:
    """A SIGINT to the task is a cancel of the worker it runs, and the task waits for that
    worker to write what it measured.

    A SIGINT comes from ``scancel --signal=INT`` (to every process of the task), submitit's
    local cancel (passed on to the task alone) or the local cancel's process-group signal.
    Python's default turned it into KeyboardInterrupt in the task, and :mod:`subprocess`
    SIGKILLs a child 0.25 s after a KeyboardInterrupt in its ``wait`` (the grace it gives a child
    that got the same Ctrl-C): the worker died while it wrote the configs it had measured, and
    the task kept nothing. Here the task passes the SIGINT on to its worker (the worker's own
    ``CancelWatch`` takes it once, as a cancel, and keeps the whole configs measured), waits for
    it, and starts no worker after it. A task started with SIGINT ignored (``trap '' INT``)
    leaves it ignored, as the worker does. Use as a context manager around :meth:`run`.
    """

    def __init__(self) -> None:
        self.worker: subprocess.Popen[bytes] | None = None  # the worker running now
        self.signalled = False  # a SIGINT came: start no more workers
        self._before: Any = None  # SIGINT's handler before (None: not installed)

    def __enter__(self) -> SigintToWorker:
        before = signal.getsignal(signal.SIGINT)
        if before is not signal.SIG_IGN:
            self._before = before if before is not None else signal.SIG_DFL
            signal.signal(signal.SIGINT, self._on_sigint)
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._before is not None:
            signal.signal(signal.SIGINT, self._before)

    def _on_sigint(self, _signum: int, _frame: Any) -> None:
        self.signalled = True
        self._forward()

    def _forward(self) -> None:
        """SIGINT to the running worker (a second one is ignored by its ``CancelWatch``)."""
        worker = self.worker
        if worker is not None and worker.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                worker.send_signal(signal.SIGINT)

    def run(self, job_dir: Path, python: str = sys.executable) -> int | None:
        """Run ``python -m profiling_worker run job_dir`` as a fresh process and wait for it;
        returns its exit code (0 done, 1 failed or cancelled: the job's manifest says which,
        2 bad usage), None when a SIGINT came before it started (not started). A SIGTERM to
        the task (Slurm's cancel, preemption) reaches the worker too: it is in the same
        process group and its own handler ends the job ``cancelled``."""
        if self.signalled:
            return None
        with open(job_dir / CONSOLE_FILE, "wb") as console:
            self.worker = subprocess.Popen(
                [python, "-u", "-m", "profiling_worker", "run", str(job_dir)], cwd=job_dir,
                stdout=console, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            try:
                if self.signalled:  # it came while the worker started
                    self._forward()
                return self.worker.wait()  # a SIGINT meanwhile runs _on_sigint; wait goes on
            finally:
                self.worker = None


def run_task(attempt_dir: str) -> dict[str, Any]:
    """Run one attempt of a sweep task: reference kernel, then the task's configs.

    Args:
        attempt_dir: the attempt folder (shared file system), with ``spec.json`` and, unless
            the sweep turned it off, ``reference/spec.json``.

    Returns:
        ``{"returncode": int, "reference_returncode": int | None, "node": str}``; the results
        themselves are the bundles in the folder (``manifest.json`` of each). A SIGINT while
        a worker runs cancels it (:class:`SigintToWorker`): the configs' worker keeps what it
        measured and the task returns as usual.

    Raises:
        KeyboardInterrupt: a SIGINT came before the configs' worker started (none measured).
    """
    folder = Path(attempt_dir)
    info = where_am_i()
    (folder / TASK_FILE).write_text(json.dumps(info, indent=1), encoding="utf-8")
    reference_rc = None
    with SigintToWorker() as sigint:
        if (folder / REFERENCE_DIR / "spec.json").is_file():
            reference_rc = sigint.run(folder / REFERENCE_DIR)
        code = sigint.run(folder)
    if code is None:  # a SIGINT before the configs' worker started: it measured nothing
        raise KeyboardInterrupt
    return {"returncode": code, "reference_returncode": reference_rc, "node": info["node"]}
