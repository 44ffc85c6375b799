"""The agent door and the CLI agree (issue 39), driven by the MCP SDK's own stdio client: the
allowed slowdown through the CLI's own check (a bare 0.03 refused as ambiguous, "0.47%" judged
as ``compare --max-slowdown 0.47%`` judges it), list_jobs' counts for any limit, and the
package version in ``serverInfo``."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from profiling_worker.bundle.gate.command import slowdown_arg
from tests.scenarios import SCENARIOS, scenario_names

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from app.agent_door.server import version  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BASE, AGAIN = "h200-cupti-gate-base", "h200-cupti-gate-again"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "profiling_worker", "compare",
                           str(SCENARIOS / BASE), str(SCENARIOS / AGAIN), *args],
                          capture_output=True, text=True, timeout=120, check=False,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))


def test_the_door_checks_and_counts_as_the_cli_does(tmp_path: Path) -> None:
    """Consumer: the MCP Python SDK's stdio client (mcp.client.stdio, ClientSession)."""
    env = {"PYTHONPATH": str(ROOT), "KPROF_BUNDLED_DIR": str(SCENARIOS),
           "KPROF_WARM_WORKER": "0", "PATH": os.environ.get("PATH", "")}
    params = StdioServerParameters(command=sys.executable, cwd=str(ROOT), env=env, args=[
        "-m", "app.agent_door", "--results", str(tmp_path / "results")])
    seen: dict[str, Any] = {}

    async def run() -> None:
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                seen["info"] = (await session.initialize()).server_info
                for pct in (0.03, "0.03", "0.47%", 0.47):
                    seen[pct] = await session.call_tool("compare_jobs", {
                        "baseline": BASE, "candidate": AGAIN, "max_slowdown_pct": pct})
                for limit in (-1, 0, 5, 1000):
                    answer = await session.call_tool("list_jobs", {"limit": limit})
                    seen[f"limit {limit}"] = json.loads(answer.content[0].text)

    asyncio.run(run())
    assert seen["info"].version == version() != ""
    cli = _cli("--max-slowdown", "0.03")
    assert cli.returncode == 2
    with pytest.raises(ValueError) as refused:
        slowdown_arg(0.03)
    for pct in (0.03, "0.03", 0.47):
        assert seen[pct].is_error, pct
        text = seen[pct].content[0].text
        assert "a bare number is percent" in text, text
    assert str(refused.value) in seen[0.03].content[0].text and str(refused.value) in cli.stderr
    judged = json.loads(seen["0.47%"].content[0].text)
    assert judged["exit_code"] == _cli("--max-slowdown", "0.47%").returncode == 4
    jobs = len(scenario_names())
    for limit, listed in ((-1, jobs), (0, 0), (5, 5), (1000, jobs)):
        answer = seen[f"limit {limit}"]
        assert (len(answer["jobs"]), answer["jobs_not_listed"]) == (listed, jobs - listed), limit
