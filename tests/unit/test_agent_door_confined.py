"""The agent door cannot reach outside its store (issue 41), driven by the MCP SDK's own stdio
client as an agent drives it: ``import_files`` reads only inside the result store, the bundled
jobs, the kernel folders and the folders ``--import-dir`` allows; ``write_report`` writes only
inside the result store, never through a link; ``submit_and_wait``'s wait is bounded;
``cancel_job`` stops a job it left running; 45 first calls at once start one environment
probe."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.scenarios import SCENARIOS

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from tests.unit.test_agent_door_stdio import ROOT, Session, _drive, _json  # noqa: E402

NSIGHT_CSV = SCENARIOS / "h200-ncu-deepdive-fp16-4096" / "nsight" / "profiled_data-profiled-0.csv"
LONG_SPEC = {"kernels": ["matmul"], "annotations": ["fp32"], "configs": [{"n": 256}],
             "runs": 5000, "backend": "cpu"}


def _error(result: Any) -> str:
    assert result.is_error, result.content[0].text
    return str(result.content[0].text)


def test_import_and_report_stay_inside_the_store(tmp_path: Path) -> None:
    results, outside = tmp_path / "results", tmp_path / "outside"
    results.mkdir()
    outside.mkdir()
    foreign = outside / "profiled_data.csv"
    foreign.write_bytes(NSIGHT_CSV.read_bytes())  # shaped like nsight output, outside the store
    victim = outside / "notes.txt"
    victim.write_text("keep me", encoding="utf-8")
    (results / "link.html").symlink_to(victim)
    (results / "linked-dir").symlink_to(outside, target_is_directory=True)
    (results / "in.csv").symlink_to(foreign)  # a link in the store to a file outside it
    seen: dict[str, Any] = {}

    async def steps(call: Session, names: list[str]) -> None:
        assert "cancel_job" in names
        for path in (foreign, results / "in.csv", Path("/etc/hostname")):
            text = _error(await call("import_files", {"paths": [str(path)]}))
            assert "outside the folders this server may read" in text, text
        for out in (str(outside / "r.html"), "/dev/null.html", "link.html",
                    "linked-dir/r.html", "a/../../r.html", str(tmp_path / "r.html")):
            text = _error(await call("write_report", {"job_ids": ["h200-cupti-gate-base"],
                                                      "out": out}))
            assert f"write_report: out {out}" in text, text
        seen["report"] = _json(await call("write_report", {"job_ids": ["h200-cupti-gate-base"],
                                                           "out": "reports/base.html"}))
        allowed = _json(await call("import_files", {"paths": [str(NSIGHT_CSV)]}))  # bundled
        seen["imported"] = [i["ok"] for i in allowed["imports"]]

    _drive(results, steps)
    assert victim.read_text(encoding="utf-8") == "keep me"
    assert not Path("/dev/null.html").exists() and not (outside / "r.html").exists()
    assert not (tmp_path / "r.html").exists()
    report = results / "reports" / "base.html"
    assert seen["report"] == {"out": str(report.resolve()), "bytes": report.stat().st_size}
    assert seen["imported"] == [True]


def test_an_allowed_import_dir_is_read(tmp_path: Path) -> None:
    """``--import-dir`` widens what import_files reads (the user's choice, on the command)."""
    drop = tmp_path / "drop"
    drop.mkdir()
    (drop / "profiled_data.csv").write_bytes(NSIGHT_CSV.read_bytes())
    seen: dict[str, Any] = {}

    async def steps(call: Session, names: list[str]) -> None:
        seen["import"] = _json(await call("import_files", {"paths": [
            str(drop / "profiled_data.csv")]}))

    _drive(tmp_path / "results", steps, ["--import-dir", str(drop)])
    assert [i["ok"] for i in seen["import"]["imports"]] == [True]


def test_the_wait_is_bounded_and_a_job_left_running_is_cancelled(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    async def steps(call: Session, names: list[str]) -> None:
        for bad, shown in ((1e308, "1e+308"), (-1, "-1")):
            text = _error(await call("submit_and_wait", {"spec": LONG_SPEC, "timeout_s": bad}))
            assert f"timeout_s {shown}: give 0 to 3600 s" in text, text
        assert "not a job this server runs" in _error(await call("cancel_job",
                                                                 {"job_id": "no-such-job"}))
        left = _json(await call("submit_and_wait", {"spec": LONG_SPEC, "timeout_s": 0}))
        assert left["status"] in ("queued", "running") and "cancel_job" in left["note"]
        seen["cancelled"] = _json(await call("cancel_job", {"job_id": left["job_id"]}))

    _drive(tmp_path / "results", steps)
    assert seen["cancelled"]["status"] == "cancelled"


def test_45_first_calls_at_once_start_one_environment_probe(tmp_path: Path) -> None:
    """The SDK runs tools in threads: the lazy setup holds a lock, so 45 concurrent first
    list_kernels calls wait for one ``profiling_worker env`` instead of starting 45."""
    log = tmp_path / "worker-calls.log"
    wrapper = tmp_path / "worker-python"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    env = {"PYTHONPATH": str(ROOT), "KPROF_BUNDLED_DIR": str(SCENARIOS),
           "KPROF_WARM_WORKER": "0", "PATH": os.environ.get("PATH", "")}
    params = StdioServerParameters(command=sys.executable, cwd=str(ROOT), env=env, args=[
        "-m", "app.agent_door", "--results", str(tmp_path / "results"),
        "--worker-python", str(wrapper)])

    async def run() -> list[Any]:
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return list(await asyncio.gather(*(session.call_tool("list_kernels", {})
                                                   for _ in range(45))))

    answers = asyncio.run(run())
    assert all("matmul" in {k["id"] for k in _json(a)["kernels"]} for a in answers)
    probes = [line for line in log.read_text().splitlines() if " env" in f" {line}"]
    assert len(probes) == 1, probes
