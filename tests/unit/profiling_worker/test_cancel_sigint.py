"""Ctrl-C (SIGINT) in the terminal that runs ``python -m profiling_worker run JOB`` is a cancel,
as SIGTERM is (``runner.CancelWatch``): the job ends a partial ``cancelled`` job with the whole
configs measured, which the loader reads; before, SIGINT raised KeyboardInterrupt and the job
kept nothing. A worker started with SIGINT ignored (``nohup``, a sweep task's ``trap '' INT``)
leaves it ignored. Real worker subprocesses on the cpu backend; the test waits for the worker's
progress events, never a fixed time."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from profiling_worker.bundle.loader import load_bundle
from profiling_worker.bundle.schema import columns as C, partial
from profiling_worker.bundle.schema.events import parse_line
from profiling_worker.bundle.schema.manifest import read_manifest

REPO = Path(__file__).resolve().parents[3]
RUNS = 3000
#: Ten configs of RUNS runs each: seconds per config on a busy 2-core host, still measuring
#: when the test signals it a config or two in.
SPEC = {"kernels": ["matmul"], "annotations": ["fp32"],
        "configs": [{"n": n} for n in range(8, 88, 8)], "runs": RUNS, "backend": "cpu",
        "warmup": 1}
BOUND_S = 120.0  # generous: CI runs on 2 busy cores


def _start(tmp_path: Path, ignore_sigint: bool = False) -> tuple[subprocess.Popen[bytes], Path]:
    """A worker running :data:`SPEC` in its own job folder; ``ignore_sigint``: started with
    SIGINT ignored, as ``nohup`` starts a command."""
    job = tmp_path / "job"
    job.mkdir()
    (job / C.SPEC_FILE).write_text(json.dumps(SPEC), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    ignore = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None
    proc = subprocess.Popen([sys.executable, "-u", "-m", "profiling_worker", "run", str(job)],
                            cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, preexec_fn=ignore)
    return proc, job


def _config(job: Path) -> int:
    """The config the worker's last progress event names (-1 before any)."""
    try:
        lines = (job / C.EVENTS_FILE).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return -1
    events = [e for e in map(parse_line, lines) if e and e.get("event") == "progress"]
    return max((int(e["config"]) for e in events if e.get("config") is not None), default=-1)


def _until_config(proc: subprocess.Popen[bytes], job: Path, config: int) -> None:
    """Wait until the worker measures ``config`` (its configs before it measured whole)."""
    deadline = time.monotonic() + BOUND_S
    while _config(job) < config:
        assert proc.poll() is None, f"the worker ended (code {proc.returncode}) first"
        assert time.monotonic() < deadline, f"config {config} not reached in {BOUND_S:g} s"
        time.sleep(0.05)


def _assert_partial(job: Path, how: str) -> None:
    """The job ended cancelled by ``how``, its whole configs measured kept and readable."""
    manifest = read_manifest(job)
    assert manifest["status"] == "cancelled" and manifest["error"]["kind"] == "cancelled"
    record = manifest[partial.CONFIGS_KEY]
    measured = record["measured"]
    assert record["cancelled"].startswith(f"{how} at 20")
    assert measured == list(range(len(measured))) and 1 <= len(measured) < record["total"]
    runs = load_bundle(job).table(C.TABLE_RUNS)
    assert runs.groupby(C.CONFIG).size().to_dict() == {i: RUNS for i in measured}


def test_sigint_cancels_the_worker_and_keeps_the_configs_measured(tmp_path: Path) -> None:
    proc, job = _start(tmp_path)
    try:
        _until_config(proc, job, 1)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(BOUND_S) == 1  # ended by itself: not done
    finally:
        proc.kill()
    _assert_partial(job, "SIGINT")


def test_a_worker_started_ignoring_sigint_keeps_ignoring_it(tmp_path: Path) -> None:
    proc, job = _start(tmp_path, ignore_sigint=True)
    try:
        _until_config(proc, job, 1)
        proc.send_signal(signal.SIGINT)
        at = _config(job)
        _until_config(proc, job, at + 1)  # measures on: the SIGINT did nothing
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(BOUND_S) == 1
    finally:
        proc.kill()
    _assert_partial(job, "SIGTERM")

