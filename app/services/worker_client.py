"""How the app talks to ``python -m profiling_worker``: argv, the events file, log tails.

No Streamlit here. The events file (``events.jsonl``) is tailed from a byte offset, so a reader
never re-parses old lines and never sees a half-written last line.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from profiling_worker.bundle.paths import inside_bundle
from profiling_worker.bundle.schema import backends as B, columns, events

CONSOLE_FILE = "worker.console.log"  # the worker's stdout + stderr (tracebacks of a crash)


def run_argv(worker_python: str, job_dir: Path) -> list[str]:
    """argv that runs one job; the spec is read by the worker from ``job_dir/spec.json``."""
    return [worker_python, "-u", "-m", "profiling_worker", "run", str(job_dir)]


def env_argv(worker_python: str, out: Path) -> list[str]:
    """argv that writes the environment report (one JSON object) to ``out``."""
    return [worker_python, "-m", "profiling_worker", "env", "--out", str(out)]


@dataclass
class EventTail:
    """Incremental reader of ``events.jsonl``: :meth:`read_new` returns only complete new lines."""

    path: Path
    offset: int = 0

    def read_new(self) -> list[dict[str, Any]]:
        """Parse the complete lines appended since the last call; non-event lines are skipped."""
        try:
            with self.path.open("rb") as fh:
                fh.seek(self.offset)
                data = fh.read()
        except FileNotFoundError:
            return []
        end = data.rfind(b"\n")
        if end < 0:
            return []
        self.offset += end + 1
        out = []
        for line in data[: end + 1].decode("utf-8", "replace").splitlines():
            event = events.parse_line(line)
            if event is not None:
                out.append(event)
        return out


def signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    """Send ``sig`` to a worker's process group (the worker, ncu and launch-mode children),
    unless the worker has already ended."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def log_tail(job_dir: Path, max_chars: int = 4000) -> str:
    """The last ``max_chars`` characters of the worker log and console output of a job."""
    parts = []
    for name in (columns.LOG_FILE, CONSOLE_FILE):
        path = inside_bundle(job_dir, name)  # a link out of the job folder is not copied
        if path is not None:
            text = path.read_text(encoding="utf-8", errors="replace")
            if text.strip():
                parts.append(f"--- {name} ---\n{text[-max_chars:]}")
    return "\n".join(parts)[-max_chars:]


def console_events(job_dir: Path, max_bytes: int = 1 << 20) -> list[dict[str, Any]]:
    """Events the worker wrote to its console (its private stdout) - the copy that remains
    when ``events.jsonl`` could not be written (disk full). Non-event lines are skipped."""
    path = inside_bundle(job_dir, CONSOLE_FILE)
    if path is None:
        return []
    try:
        with path.open("rb") as fh:
            fh.seek(max(0, path.stat().st_size - max_bytes))
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return []
    return [ev for ev in map(events.parse_line, text.splitlines()) if ev is not None]


def unavailable_report(reason: str, fix: str) -> dict[str, Any]:
    """An environment report for when the worker cannot even be asked: every backend is down."""
    backend = {"available": False, "reason": reason, "fix": fix}
    return {"error": reason, "backends": {name: dict(backend) for name in B.NAMES}}


def probe_environment(worker_python: str, timeout_s: float = 120.0) -> dict[str, Any]:
    """Run ``profiling_worker env`` and return its JSON report.

    Returns:
        The report, always with a ``backends`` mapping ``name -> {available, reason, fix}``
        (normalised from a top-level ``ncu``/``cupti``/``cpu`` layout if the worker used one).
        When the worker cannot run, every backend is unavailable with the reason and fix.
    """
    with tempfile.TemporaryDirectory(prefix="kprof-env-") as tmp:
        out = Path(tmp) / "env.json"
        try:
            proc = subprocess.run(env_argv(worker_python, out), capture_output=True, text=True,
                                  timeout=timeout_s, check=False, env=_env())
        except (OSError, subprocess.TimeoutExpired) as exc:
            return _probe_failed(worker_python, exc)
        written = out.read_text(encoding="utf-8", errors="replace") if out.is_file() else ""
    # the report comes in its own file; stdout only when no file was written
    report = _last_json_object(written or proc.stdout)
    if report is None:
        tail = (proc.stderr or proc.stdout)[-1500:]
        return unavailable_report(f"the worker's env report printed no JSON (exit "
                                  f"{proc.returncode})"
                                  f": {tail.strip()}", "run `python -m profiling_worker env` by "
                                                       "hand")
    return normalise_report(report)


def _probe_failed(worker_python: str, exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, FileNotFoundError):
        return unavailable_report(f"worker interpreter {worker_python} not found",
                                  "set KPROF_WORKER_PYTHON to a Python with profiling_worker")
    return unavailable_report(f"the worker's env report failed: {exc}",
                              "run `python -m profiling_worker env` by hand to see why")


def normalise_report(report: dict[str, Any]) -> dict[str, Any]:
    """Give ``report`` a ``backends`` mapping whatever layout the worker used."""
    backends = report.get("backends")
    if not isinstance(backends, dict):
        backends = {k: report[k] for k in B.NAMES if isinstance(report.get(k), dict)}
    report = dict(report)
    report["backends"] = backends
    return report


def gpu_backend_available(report: dict[str, Any]) -> bool:
    """True when ncu or cupti can run here (i.e. a GPU is usable for profiling)."""
    backends = report.get("backends") or {}
    return any(bool((backends.get(name) or {}).get("available")) for name in B.GPU_NAMES)


def best_backend(report: dict[str, Any]) -> str:
    """The first available backend of ncu, cupti, cpu (cpu if none reports available)."""
    backends = report.get("backends") or {}
    for name in B.NAMES:
        if (backends.get(name) or {}).get("available"):
            return name
    return B.CPU


def environment_of(report: dict[str, Any]) -> dict[str, Any]:
    """The environment part of a report (``environment`` key, or the report minus backends)."""
    env = report.get("environment")
    if isinstance(env, dict):
        return env
    return {k: v for k, v in report.items() if k not in ("backends", *B.NAMES)}


def _last_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object printed by the worker (the whole text, else the last parsable line)."""
    try:
        data = json.loads(text)
        if isinstance(data, dict):
            return data
    except ValueError:
        pass
    for line in reversed(text.splitlines()):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    return None


def _env() -> dict[str, str]:
    from app import settings  # local: settings reads os.environ at call time

    return settings.worker_env()
