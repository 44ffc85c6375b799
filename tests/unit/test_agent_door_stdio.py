"""The agent door end to end: ``python -m app.agent_door`` started as a subprocess and driven by
the MCP SDK's own client over stdio (``mcp.client.stdio.stdio_client`` + ``ClientSession``).
Every tool is called on real data: a cpu matmul job it runs itself, recorded H200 scenarios
(tests/fixtures/bundles), and an import of the nsight-python CSVs of one of them. Its verdicts are checked
against ``python -m profiling_worker compare`` (exit codes) and the compare page's judgement."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from tests.scenarios import SCENARIOS

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from profiling_worker.bundle.loader import load_bundle  # noqa: E402
from app.core.share.verdict import MAX_BYTES, judged  # noqa: E402
from app.core.views import deep_dive as D  # noqa: E402
from app.core import frame_columns as F  # noqa: E402
from app.core.views.bound import BoundOptions, bound_frame  # noqa: E402
from app.services import report_client  # noqa: E402
from profiling_worker.bundle.gate import report as gate_report  # noqa: E402
from profiling_worker.bundle.gate.judge import Outcome  # noqa: E402
from profiling_worker.bundle.schema import metrics as M  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TOOLS = {"list_kernels", "list_jobs", "submit_and_wait", "job_summary", "compare_jobs",
         "deep_dive", "import_files", "write_report", "cancel_job", "replicate_job",
         "analysis_table"}
#: Gate pairs of H200 bundles and what `python -m profiling_worker compare` exits with.
PAIRS = [("h200-cupti-gate-base", "h200-cupti-gate-again"),   # the same job twice
         ("h200-cupti-gate-tf32", "h200-cupti-gate-fp32"),    # TF32 off: slower
         ("h200-cupti-gate-base", "h200-ncu-gate-base")]      # backends differ

Session = Callable[[str, dict[str, Any]], Awaitable[Any]]


def test_the_agents_doc_has_a_row_per_tool() -> None:
    """docs/agents.md's tool table: replicate_job had no row."""
    doc = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8").splitlines()
    assert sorted(t for t in TOOLS if not any(row.startswith(f"| `{t}` |") for row in doc)) == []


def _drive(results: Path, steps: Callable[[Session, list[str]], Awaitable[None]],
           options: Sequence[str] = ()) -> None:
    """Start the server (with ``options`` after ``--results``), list its tools, then run
    ``steps`` with a tool caller."""
    env = {"PYTHONPATH": str(ROOT), "KPROF_BUNDLED_DIR": str(SCENARIOS),
           "KPROF_WARM_WORKER": "0", "PATH": os.environ.get("PATH", "")}
    params = StdioServerParameters(command=sys.executable, cwd=str(ROOT), env=env,
                                   args=["-m", "app.agent_door", "--results", str(results),
                                         *options])

    async def run() -> None:
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                names = [t.name for t in (await session.list_tools()).tools]

                async def call(name: str, arguments: dict[str, Any]) -> Any:
                    result = await session.call_tool(name, arguments)
                    return result

                await steps(call, names)

    asyncio.run(run())


def _json(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    data = json.loads(result.content[0].text)
    assert data == result.structured_content
    return data


def _cli_exit(base: str, candidate: str) -> int:
    return subprocess.run([sys.executable, "-m", "profiling_worker", "compare",
                           str(SCENARIOS / base), str(SCENARIOS / candidate)], capture_output=True,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=120,
                          check=False).returncode


def test_every_tool_over_stdio_with_the_sdk_client(tmp_path: Path) -> None:
    results = tmp_path / "results"
    seen: dict[str, Any] = {}

    async def steps(call: Session, names: list[str]) -> None:
        assert set(names) == TOOLS
        kernels = _json(await call("list_kernels", {}))
        assert "matmul" in {k["id"] for k in kernels["kernels"]}
        assert kernels["backends"]["cpu"]["available"]
        spec = {"kernels": ["matmul"], "annotations": ["fp32"], "configs": [{"n": 64}, {"n": 96}],
                "runs": 3, "backend": "cpu"}
        seen["job"] = _json(await call("submit_and_wait", {"spec": spec, "timeout_s": 300}))
        bad = await call("submit_and_wait", {"spec": {**spec, "runs": 0}})
        assert bad.is_error and "runs" in bad.content[0].text
        # an unknown kernel without configs: its error only, no knock-on "no configs" one
        unknown_kernel = await call("submit_and_wait", {"spec": {"kernels": ["nope"],
                                                                 "backend": "cpu"}})
        assert unknown_kernel.is_error, unknown_kernel.content[0].text
        assert "unknown kernel(s): nope" in unknown_kernel.content[0].text
        assert "configs" not in unknown_kernel.content[0].text
        jobs = _json(await call("list_jobs", {}))
        assert seen["job"]["job_id"] in {j["job_id"] for j in jobs["jobs"]}
        seen["summary"] = _json(await call("job_summary", {"job_id": "h200-cupti-gate-base"}))
        seen["bound"] = _json(await call("analysis_table", {"job_id": "h200-ncu-roofline",
                                                            "analysis": "bound"}))
        wrong = await call("analysis_table", {"job_id": "h200-ncu-roofline", "analysis": "x"})
        assert wrong.is_error and "collectors" in wrong.content[0].text  # names the keys
        seen["verdicts"] = [_json(await call("compare_jobs", {"baseline": b, "candidate": c}))
                            for b, c in PAIRS]
        seen["verdict_text"] = (await call("compare_jobs", {"baseline": PAIRS[1][0],
                                                            "candidate": PAIRS[1][1]})
                                ).content[0].text
        unknown = await call("compare_jobs", {"baseline": "no-such-job", "candidate": PAIRS[0][1]})
        assert unknown.is_error and "no such job" in unknown.content[0].text
        seen["replicated"] = _json(await call("replicate_job", {
            "job_id": PAIRS[0][0], "against": PAIRS[0][1]}))
        seen["rerun"] = _json(await call("replicate_job", {"job_id": seen["job"]["job_id"],
                                                           "timeout_s": 300}))
        seen["deep"] = _json(await call("deep_dive", {"job_id": "h200-ncu-deepdive-fp16-4096"}))
        nsight = SCENARIOS / "h200-ncu-deepdive-fp16-4096" / "nsight"
        seen["import"] = _json(await call("import_files", {"paths": [
            str(nsight / "profiled_data-profiled-0.csv"),
            str(nsight / "processed_data-profiled-0.csv")]}))
        cupti = _json(await call("deep_dive", {"job_id": "h200-cupti-gate-base"}))
        assert "no Nsight Compute report" in cupti["no_deep_dive"]
        not_html = await call("write_report", {"job_ids": [PAIRS[0][0]],
                                               "out": str(tmp_path / "report.txt")})
        assert not_html.is_error and ".html" in not_html.content[0].text
        seen["report"] = _json(await call("write_report", {  # written in the result store
            "job_ids": [PAIRS[1][0], PAIRS[1][1]], "out": "cmp.html"}))

    _drive(results, steps)

    job = seen["job"]
    assert job["status"] == "done" and job["backend"] == "cpu"
    agg = pd.read_parquet(results / job["job_id"] / "tables" / "aggregated.parquet")
    rows = job["durations"]["rows"]
    assert sorted(r["AvgValue"] for r in rows) == pytest.approx(sorted(agg["AvgValue"] / 1e3))

    base = pd.read_parquet(SCENARIOS / "h200-cupti-gate-base" / "tables" / "aggregated.parquet")
    shown = sorted(r["AvgValue"] for r in seen["summary"]["durations"]["rows"])
    assert shown == pytest.approx(sorted(base["AvgValue"] / 1e3), rel=1e-12)
    bound = bound_frame(load_bundle(SCENARIOS / "h200-ncu-roofline"), BoundOptions())
    assert seen["bound"]["page"] == "Bound and roofline" and seen["bound"]["url_path"] == "bound"
    assert [r[F.SM_PCT] for r in seen["bound"]["rows"]] == pytest.approx(list(bound[F.SM_PCT]))
    audit = seen["summary"]["run_audit"]["rows"]  # every run of gate-base passed (issue 36)
    assert [(r["Runs"], r["Passed"]) for r in audit] == [(20, 20)] * 3

    for (b, c), verdict in zip(PAIRS, seen["verdicts"]):
        page = judged(load_bundle(SCENARIOS / b), load_bundle(SCENARIOS / c))
        assert verdict["exit_code"] == _cli_exit(b, c) == gate_report.exit_code(page)
        assert verdict["verdict"] == gate_report.exit_label(page)
        assert verdict["counts"] == {o.value: page.count(o) for o in Outcome}
    assert [v["verdict"] for v in seen["verdicts"]] == ["passed", "regressed", "not judged"]
    assert len(seen["verdict_text"].encode("utf-8")) <= MAX_BYTES

    replicated = seen["replicated"]  # the same H200 spec twice: within 3 % (TOST)
    assert replicated["verdict"] == "reproduced" and replicated["tolerance_pct"] == 3.0
    assert [r["Replication"] for r in replicated["rows"]] == ["reproduced"] * 3
    rerun = seen["rerun"]  # the cpu job's spec run again by the door's job manager
    assert rerun["reference"] == job["job_id"] and rerun["replica"] != job["job_id"]
    assert rerun["verdict"] in {"reproduced", "not reproduced", "not decided", "not comparable"}
    assert (results / rerun["replica"] / "manifest.json").is_file()

    deep = seen["deep"]  # the deep-dive page's panels of the first launch, the same numbers
    answer = report_client.ask(sys.executable, "deepdive", SCENARIOS / "h200-ncu-deepdive-fp16-4096",
                               dict(os.environ, PYTHONPATH=str(ROOT)))
    sol = D.metric_panel(answer.data(), 0, "speed of light", (M.GPU_TIME, M.GPC_HZ,
                                                               *M.SPEED_OF_LIGHT)).frame
    assert [(r["Metric"], r["Value"]) for r in deep["speed_of_light"]["rows"]] == list(
        zip(sol["Metric"], sol["Value"]))
    assert "sm__throughput.avg.pct_of_peak_sustained_elapsed" in set(sol["Metric"])
    limiter = D.occupancy(answer.data(), 0)[1]
    assert deep["occupancy_limited_by"] == {"resource": limiter[0], "blocks_per_sm": limiter[1]}
    assert deep["warp_stalls"]["rows"] and deep["rules"]["rows"]

    imported = seen["import"]["imports"]
    assert [i["ok"] for i in imported] == [True]
    new = load_bundle(results / imported[0]["job_id"])
    assert new.status.value == "done" and not new.table("aggregated").empty

    report = results / "cmp.html"
    assert seen["report"]["bytes"] == report.stat().st_size
    assert "Gate verdict: regressed" in report.read_text(encoding="utf-8")
