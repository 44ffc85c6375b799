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

import json
import os
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


def run_worker(job_dir: Path, python: str = sys.executable) -> int:
    """Run ``python -m profiling_worker run job_dir`` as a fresh process; returns its exit code
    (0 done, 1 failed or cancelled: the job's manifest says which, 2 bad usage). A SIGTERM to
    this task (Slurm's cancel, preemption) reaches the worker too: it is in the same process
    group and its own handler ends the job ``cancelled``."""
    with open(job_dir / CONSOLE_FILE, "wb") as console:
        proc = subprocess.run([python, "-u", "-m", "profiling_worker", "run", str(job_dir)],
                              cwd=job_dir, stdout=console, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, check=False)
    return proc.returncode


def run_task(attempt_dir: str) -> dict[str, Any]:
    """Run one attempt of a sweep task: reference kernel, then the task's configs.

    Args:
        attempt_dir: the attempt folder (shared file system), with ``spec.json`` and, unless
            the sweep turned it off, ``reference/spec.json``.

    Returns:
        ``{"returncode": int, "reference_returncode": int | None, "node": str}``; the results
        themselves are the bundles in the folder (``manifest.json`` of each).
    """
    folder = Path(attempt_dir)
    info = where_am_i()
    (folder / TASK_FILE).write_text(json.dumps(info, indent=1), encoding="utf-8")
    reference_rc = None
    if (folder / REFERENCE_DIR / "spec.json").is_file():
        reference_rc = run_worker(folder / REFERENCE_DIR)
    code = run_worker(folder)
    return {"returncode": code, "reference_returncode": reference_rc, "node": info["node"]}
