"""The agent door's running job when its client goes away (issue 39), driven by the MCP SDK's
own stdio client (``mcp.client.stdio.stdio_client`` + ``ClientSession``): by closing the
server's stdin and by SIGTERM, the job ends ``interrupted`` on disk at once (no later server
needed) and its worker is gone."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from profiling_worker.bundle.schema.manifest import ManifestError, read_manifest
from tests.scenarios import SCENARIOS

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
#: A cpu job that runs for minutes on this machine: it is still running when the client goes.
LONG = {"kernels": ["matmul"], "configs": [{"n": 256}], "runs": 5000, "backend": "cpu",
        "warmup": 0}
BOUND_S = 120.0  # generous: CI runs on 2 busy cores


def _until(done: Callable[[], bool], what: str) -> None:
    """Wait for ``done()`` (polled), failing with ``what`` after :data:`BOUND_S`."""
    deadline = time.monotonic() + BOUND_S
    while not done():
        assert time.monotonic() < deadline, f"not within {BOUND_S:g} s: {what}"
        time.sleep(0.05)


def _manifest(job: Path) -> dict[str, Any]:
    try:
        return read_manifest(job)
    except ManifestError:
        return {}


def _gone(pid: int) -> bool:
    """No such process, or a zombie (dead, not yet reaped by its new parent)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):
        return True


def _serve(results: Path, errlog: Path, warm: str,
           in_session: Callable[[Path], None]) -> None:
    """Start the door, submit :data:`LONG`, wait until its worker runs, call
    ``in_session(job_dir)`` while the client is connected, then leave the client."""
    env = {"PYTHONPATH": str(ROOT), "KPROF_BUNDLED_DIR": str(SCENARIOS),
           "KPROF_WARM_WORKER": warm, "PATH": os.environ.get("PATH", "")}
    params = StdioServerParameters(command=sys.executable, cwd=str(ROOT), env=env,
                                   args=["-m", "app.agent_door", "--results", str(results)])

    async def run() -> None:
        with errlog.open("w") as err:
            async with stdio_client(params, errlog=err) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    answer = await session.call_tool("submit_and_wait",
                                                     {"spec": LONG, "timeout_s": 0})
                    assert not answer.is_error, answer.content[0].text
                    job = results / json.loads(answer.content[0].text)["job_id"]
                    await asyncio.to_thread(
                        _until, lambda: _manifest(job).get("status") == "running"
                        and "worker" in _manifest(job), f"{job.name} running")
                    await asyncio.to_thread(in_session, job)

    asyncio.run(run())


def test_closing_the_client_ends_the_running_job_interrupted(tmp_path: Path) -> None:
    """Consumer: the MCP Python SDK's stdio client (mcp.client.stdio). Leaving its context
    closes the server's stdin: by the time it returns the job is ``interrupted`` on disk and
    its (cold) worker gone; the server's stderr says it stopped because stdin closed (not
    the SIGTERM the SDK sends a server still alive 2 s later)."""
    results, errlog = tmp_path / "results", tmp_path / "server.err"
    seen: dict[str, Any] = {}
    _serve(results, errlog, "0", lambda job: seen.update(job=job,
                                                         worker=_manifest(job)["worker"]["pid"]))
    manifest = _manifest(seen["job"])
    assert manifest["status"] == "interrupted", manifest.get("status")
    assert manifest["error"]["kind"] == "interrupted"
    _until(lambda: _gone(seen["worker"]), f"worker {seen['worker']} gone")
    said = errlog.read_text()
    assert f"the client closed stdin: {seen['job'].name} ended interrupted" in said, said


def test_sigterm_ends_the_running_job_interrupted_and_kills_its_worker(tmp_path: Path) -> None:
    """Consumer: the MCP Python SDK's stdio client (mcp.client.stdio), connected while the
    server gets SIGTERM (its pid from the job's manifest). The job ends ``interrupted`` and the
    (warm) worker is killed: before, the signal skipped the shutdown and the orphaned worker
    finished the job as ``done``."""
    results, errlog = tmp_path / "results", tmp_path / "server.err"
    seen: dict[str, Any] = {}

    def terminate(job: Path) -> None:
        manifest = _manifest(job)
        seen.update(job=job, worker=manifest["worker"]["pid"])
        os.kill(manifest["server"]["pid"], signal.SIGTERM)
        _until(lambda: _manifest(job).get("status") == "interrupted",
               f"{job.name} interrupted after SIGTERM")
        _until(lambda: _gone(seen["worker"]), f"worker {seen['worker']} gone")

    _serve(results, errlog, "1", terminate)
    assert _manifest(seen["job"])["error"]["kind"] == "interrupted"
    said = errlog.read_text()
    assert f"SIGTERM: {seen['job'].name} ended interrupted" in said, said
