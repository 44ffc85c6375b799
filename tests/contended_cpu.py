"""A real cpu-backend job timed on a contended CPU, for the tests of the contention warning:
the worker pinned (taskset) to one CPU with two busy loops pinned there too, so each of the
three gets about a third of it and the job's threads wait ~2/3 of the time (50-68 % measured on
the 2-core dev machine, far over CONTENTION_THRESHOLD)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from profiling_worker.backends.cpu import contention_snapshot
from profiling_worker.bundle.schema import columns as C

REPO = Path(__file__).resolve().parents[1]


def one_cpu() -> int:
    """A CPU this process may use; skips the test where contention cannot be made or read."""
    if not hasattr(os, "sched_setaffinity") or shutil.which("taskset") is None:
        pytest.skip("needs taskset and os.sched_setaffinity to share one CPU with busy loops")
    if contention_snapshot()["run_delay_ns"] is None:
        pytest.skip("/proc/self/task/*/schedstat is not readable: the run-queue delay "
                    "cannot be measured here (the load-average fallback is tested apart)")
    return min(os.sched_getaffinity(0))


#: The job of the README's first steps (matmul, fp32/fp16/bf16 at n = 64, 128, 256, 10 runs):
#: 9 annotation x config pairs, the job a fresh user ran beside a busy CPU.
README_JOB: dict[str, Any] = {"annotations": ["fp32", "fp16", "bf16"],
                              "configs": [{"n": 64}, {"n": 128}, {"n": 256}], "runs": 10}


def record_contended_job(job: Path, spec: Mapping[str, Any] | None = None
                         ) -> subprocess.CompletedProcess[str]:
    """Run a small cpu matmul job into the new directory ``job`` on a contended CPU (``spec``:
    keys over the default, e.g. :data:`README_JOB`). n = 512 by default, so that its timing loop
    spans several of the scheduler's time slices: with one torch thread (the cpu backend's
    default since cpu_threads) a 64x64 job's loop took 4-30 ms and once passed unwarned, losing
    no slice; 512x512 loops took 47-59 ms at a waiting fraction of 0.62-0.69 (three runs each,
    2026-12-06)."""
    cpu = one_cpu()
    job.mkdir()
    (job / C.SPEC_FILE).write_text(json.dumps({
        "kernels": ["matmul"], "annotations": ["fp32"], "configs": [{"n": 512}], "runs": 3,
        "backend": "cpu", **(spec or {})}))
    busy = [subprocess.Popen(["taskset", "-c", str(cpu), sys.executable, "-c",
                              "while True: pass"]) for _ in range(2)]
    try:
        time.sleep(0.5)  # both loops running before the job starts
        return subprocess.run(["taskset", "-c", str(cpu), sys.executable, "-m",
                               "profiling_worker", "run", str(job)], cwd=REPO,
                              capture_output=True, text=True, timeout=300)
    finally:
        for p in busy:
            p.kill()
        for p in busy:
            p.wait(timeout=30)
