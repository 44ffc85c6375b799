"""Jobs that kept part of their configs, written by the real worker (cpu backend) with the
kernels of tests/fixtures/kernel_files_partial: ``cancel_at_4`` is cancelled (SIGTERM to its own
worker) while config n=4 runs, ``raise_at_3`` raises at n=3. Shared by the AppTests and the
browser test of partial results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from profiling_worker.bundle.schema import columns as C

REPO = Path(__file__).resolve().parents[1]
KERNELS = REPO / "tests" / "fixtures" / "kernel_files_partial"
CONFIGS = [{"n": n} for n in (1, 2, 3, 4, 5, 6)]


def record_partial_job(path: Path, kernel: str) -> Path:
    """Run the worker on ``kernel`` at :data:`CONFIGS` (3 runs each) into the new folder
    ``path``; it must end not done (exit 1) with its partial result written."""
    return record_job(path, kernel, CONFIGS, 1)


def record_job(path: Path, kernel: str, configs: list[dict[str, int]], code: int) -> Path:
    """Run the worker on ``kernel`` at ``configs`` (3 runs each) into the new folder ``path``;
    it must exit ``code`` (0: done, e.g. ``cancel_at_4`` below n=4; 1: not done)."""
    path.mkdir()
    spec = {"kernels": [kernel], "configs": configs, "runs": 3, "backend": "cpu"}
    (path / C.SPEC_FILE).write_text(json.dumps(spec), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(path)],
                          cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "KPROF_KERNEL_DIRS": str(KERNELS)})
    assert proc.returncode == code, proc.stdout + proc.stderr
    return path
