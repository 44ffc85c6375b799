"""Client of a warm worker (``python -m profiling_worker serve``): one process per (backend, GPU)
kept alive between jobs, so a repeated sweep pays only the profiling itself.

No Streamlit here. The worker answers on its stdout with JSON lines (see
profiling_worker/job/serve.py); its stderr goes to a log file in the results directory. A worker
that dies, or is asked for another backend or GPU, is discarded and the next job starts a fresh one.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time
from pathlib import Path
from typing import Any


class WarmWorkerError(RuntimeError):
    """The warm worker could not start, refused the job, or died."""


class WarmWorker:
    """One ``serve`` process for ``backend`` on ``gpu``.

    Args:
        worker_python: interpreter that has profiling_worker (and the GPU stack).
        backend: "cupti", "cpu" or "ncu" (ncu only in nsight-python attach mode).
        gpu: CUDA device index the process is pinned to.
        env: environment of the process.
        log_path: where the process's stderr goes.
        lock_fd: the lane's lock descriptor (job_model.LaneLocks), inherited like a cold
            worker's, so the lane stays locked while this process runs a job of a killed server.
    """

    def __init__(self, worker_python: str, backend: str, gpu: int, env: dict[str, str] | None,
                 log_path: Path, start_timeout_s: float = 180.0, lock_fd: int | None = None):
        self.backend, self.gpu = backend, gpu
        self._log = open(log_path, "ab")
        self.proc = subprocess.Popen(
            [worker_python, "-u", "-m", "profiling_worker", "serve", "--backend", backend,
             "--gpu", str(gpu)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._log, env=env, start_new_session=True,
            pass_fds=() if lock_fd is None else (lock_fd,))
        ready = self._read(start_timeout_s)
        if ready.get("event") != "ready":
            self.close()
            raise WarmWorkerError(ready.get("message") or f"warm worker did not start: {ready}")

    def alive(self) -> bool:
        """True while the process runs."""
        return self.proc.poll() is None

    def submit(self, job_dir: Path) -> None:
        """Hand a job directory (with spec.json) to the worker; returns at once."""
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps({"job_dir": str(job_dir)}) + "\n").encode())
        self.proc.stdin.flush()

    def poll(self, timeout_s: float) -> dict[str, Any] | None:
        """The worker's answer for the current job ({"event": "done"|"rejected", ...}), or None
        if none came within ``timeout_s``.

        Raises:
            WarmWorkerError: the process died (its exit code in the message).
        """
        return self._read(timeout_s, none_on_timeout=True)

    def _read(self, timeout_s: float, none_on_timeout: bool = False) -> dict[str, Any]:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.proc.stdout], [], [], max(0.0, left))
            if ready:
                line = self.proc.stdout.readline()
                if not line:
                    raise WarmWorkerError(f"warm worker exited with code {self.proc.wait()}")
                try:
                    event: dict[str, Any] = json.loads(line)
                    return event
                except ValueError:
                    continue  # not ours: keep reading
            if left <= 0:
                if none_on_timeout:
                    return None  # type: ignore[return-value]
                raise WarmWorkerError(f"warm worker gave no answer in {timeout_s:.0f} s")

    def kill(self, sig: int = signal.SIGTERM) -> None:
        """Signal the whole process group (the job in flight ends cancelled)."""
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            pass

    def close(self) -> None:
        """Stop the process (stdin closed, then killed if it lingers)."""
        try:
            if self.proc.stdin:
                self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.kill(signal.SIGKILL)
            self.proc.wait()
        finally:
            self._log.close()
