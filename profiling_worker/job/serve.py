"""A warm worker: one process that keeps its imports done, CUDA initialised, nsight-python's
tool activated and the environment probed, and runs jobs one after another.

``python -m profiling_worker serve --backend cupti --gpu 0`` reads one JSON object per line on
stdin (``{"job_dir": "..."}``) and answers on stdout, one JSON line each:
``{"event": "ready", ...}`` once, then ``{"event": "done", "job_dir": ..., "code": 0|1}`` per job,
or ``{"event": "rejected", "job_dir": ..., "reason": ...}`` for a job it must not run (another
backend or GPU: the caller starts a fresh worker for it). Each job writes the same bundle as
``run`` (events.jsonl, worker.log, tables, manifest last).

nsight-python allows one tool per process and Nsight Compute cannot be deactivated, so a warm
worker serves one backend on one GPU; launch mode (nsight-python 0.9.x) re-runs the worker
under ncu for every job and cannot be warm. A cancelled job ends the process.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from profiling_worker.probes import gpu_select
from profiling_worker.probes.environment import ProbeInBackground
from profiling_worker.backends import gc_pause
from profiling_worker.job import runner
from profiling_worker.backends.registry import environment_report, run_side
from profiling_worker.backends.run_side import BackendStatus
from profiling_worker.bundle.errors import WorkerError
from profiling_worker.backends.channel import Channel
from profiling_worker.bundle.schema import backends as B, columns as C
from profiling_worker.bundle.schema.bundle_spec import PartialSpec, read_spec
from profiling_worker.bundle.schema.manifest import JobStatus
from profiling_worker.bundle.schema.spec import JobSpec
from profiling_worker.bundle.schema.spec_errors import SpecInvalid
from profiling_worker.bundle.schema.spec_file import read_spec_json


def _say(fd: int, **event: Any) -> None:
    os.write(fd, (json.dumps(event) + "\n").encode())


def _point_output_at(job_dir: Path) -> None:
    """Send fds 1 and 2 (library prints, tracebacks) to this job's worker.log."""
    log = os.open(job_dir / C.LOG_FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)


def refusal(spec: JobSpec | PartialSpec | None, backend: str, gpu: int) -> str | None:
    """Why this warm worker must not run a job with this spec (None: it may). An invalid spec
    (a :class:`PartialSpec`) is judged on what it says; ``run_job`` then fails it by name."""
    asked = (spec.backend if spec is not None else "") or B.DEFAULT
    if asked != backend:
        return f"serves backend {backend}, the job asks {asked}"
    asked_gpu = (spec.gpu if spec is not None else None) or 0
    if B.on_gpu(backend) and asked_gpu != gpu:
        return f"serves GPU {gpu}, the job asks GPU {asked_gpu}"
    return None


def serve(backend: str, gpu: int, stdin: TextIO, probe: ProbeInBackground | None = None) -> int:
    """Run jobs from ``stdin`` until it closes; returns the exit code. ``probe``: the
    environment probe started before this module's imports (cli.py; None: probe now)."""
    control = os.dup(1)  # the control channel; fds 1 and 2 then go to each job's log
    report = environment_report() if probe is None else environment_report(env=probe.result())
    if B.on_gpu(backend):  # before anything starts CUDA; gpu counts the visible GPUs
        try:
            gpu_select.pin(gpu_select.resolve(gpu, report["environment"].get("gpus") or ()))
        except WorkerError as exc:
            _say(control, event="error", **exc.to_event_fields())
            return 1
    status = BackendStatus.from_json(report["backends"].get(backend, {}))
    if not status.available or not B.resolve(backend, status.nsight_mode).warm:
        _say(control, event="error", kind="backend_unavailable",
             message=f"a warm {backend} worker cannot run here: "
                     f"{status.reason or 'launch mode re-runs the worker per job'}",
             hint=status.fix or "use cold workers (one process per job)")
        return 1
    run_side(backend).warm_up(status)  # once what every job would: imports, CUDA
    gc_pause.resume()  # what start-up made is frozen: no job's collection scans it again
    _say(control, event="ready", backend=backend, gpu=gpu, pid=os.getpid())
    for line in stdin:
        job_dir = Path(json.loads(line)["job_dir"]).resolve()
        try:
            raw = read_spec_json(job_dir / C.SPEC_FILE)
        except SpecInvalid:  # run_job fails the job with the named error
            raw = {}
        reason = refusal(read_spec(raw), backend, gpu)
        if reason:
            _say(control, event="rejected", job_dir=str(job_dir), reason=reason)
            continue
        _point_output_at(job_dir)
        code = runner.run_job(job_dir, Channel(job_dir, None), report)
        _say(control, event="done", job_dir=str(job_dir), code=code)
        manifest = json.loads((job_dir / C.MANIFEST_FILE).read_text(encoding="utf-8"))
        if manifest.get("status") == JobStatus.CANCELLED:
            return 1  # CUPTI or CUDA state after an interrupted job is not to be trusted
    return 0
