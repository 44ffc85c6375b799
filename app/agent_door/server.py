"""The agent door: a Model Context Protocol server (the official ``mcp`` Python SDK, stdio
transport) over the dashboard's worker, job manager and regression gate (:mod:`.door`).

    python -m app.agent_door [--results DIR] [--worker-python PATH] [--import-dir DIR ...]

Tools: ``list_kernels``, ``list_jobs``, ``submit_and_wait``, ``job_summary``, ``compare_jobs``
(the gate's verdict, at most 4 KB), ``deep_dive`` (a launch's sections and rules),
``import_files``, ``write_report`` (the shareable HTML report), ``analysis_table`` (the table a
dashboard page opens on) and ``cancel_job``. It reads
and writes only inside the result store (and reads the kernel folders and the folders
``--import-dir`` allows): :mod:`.confine`. docs/agents.md says how to
attach it to an agent. Needs ``pip install "kernel-profiling-dashboard[mcp]"``.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from app.agent_door.confine import ENV_IMPORT_DIRS
from app.agent_door.door import WAIT_S, Door, DoorError
from app.core.pages import ANALYSES

INSTRUCTIONS = (
    "GPU kernel profiling (NVIDIA Nsight Compute / CUPTI through nsight-python). Call "
    "list_kernels for what can run and which backends this machine has, list_jobs for the "
    "results there are, submit_and_wait with a job spec (kernels, configs, runs, backend; the "
    "spec format of docs/headless.md) to profile, job_summary for a job's durations, "
    "analysis_table for the table a dashboard page (sweep, stability, bound, roofline, ...) "
    "opens on, compare_jobs "
    "for the regression gate's verdict of a candidate against a baseline (regressed / improved / "
    "same / ambiguous / clock-explained / not comparable per region x config), deep_dive for one "
    "launch's Nsight Compute sections and rules, import_files for nsight-python or Nsight "
    "Compute output made elsewhere (inside the result store or a folder the user allowed), "
    "write_report for a self-contained HTML report to share (written in the result store), "
    "cancel_job to stop a job submit_and_wait left running.")

#: The analysis_table tool's description, its keys read from the one list of analyses.
ANALYSIS_TABLE = (
    "The table a dashboard page opens on for a job, by analysis key ("
    f"{', '.join(a.key for a in ANALYSES)}; job_summary lists them too), as the page and the "
    "HTML report show it: the page's title and URL path and at most 60 rows; \"missing\" says "
    "why a job cannot feed it.")

T = TypeVar("T")
PACKAGE = "kernel-profiling-dashboard"
#: Signals that end the server as closing its stdin does: running jobs end ``interrupted``.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


def version() -> str:
    """The installed package's version (``serverInfo.version``); says so where the package is
    not installed (a checkout on PYTHONPATH only)."""
    try:
        return importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return "unknown (package not installed)"


def _answer(call: Callable[[], T]) -> T:
    """Run a door call; its refusal becomes the tool's error message (field and fix)."""
    try:
        return call()
    except DoorError as exc:
        raise ToolError(str(exc)) from exc


def build_server(door: Door) -> MCPServer[Any]:
    """The MCP server with the door's tools registered."""
    server: MCPServer[Any] = MCPServer(PACKAGE, instructions=INSTRUCTIONS, version=version())

    @server.tool()
    def list_kernels() -> dict[str, Any]:
        """Kernels the worker can run (id, parameters, regions = annotations, default configs,
        cpu configs) and the backends available here (ncu, cupti, cpu)."""
        return _answer(door.list_kernels)

    @server.tool()
    def list_jobs(limit: int = 50) -> dict[str, Any]:
        """Jobs in the result store and the bundled H200 jobs, newest first (id, status,
        kernels, backend, GPU, label): the first limit of them (negative: all), and how many
        are not listed."""
        return _answer(lambda: door.list_jobs(limit))

    @server.tool()
    def submit_and_wait(spec: dict[str, Any], timeout_s: float = WAIT_S,
                        again: bool = False, confirm: bool = False) -> dict[str, Any]:
        """Profile a job spec, e.g. {"kernels": ["matmul"], "annotations": ["fp16"],
        "configs": [{"n": 1024}], "runs": 5, "backend": "cupti"} ("cpu" times on the host);
        validated as the dashboard's sidebar validates it, run by its job manager; waits up to
        timeout_s seconds (at most 3600) and returns the job's summary (or its id and status
        if still running: job_summary later, or cancel_job). An identical spec queued in the
        last 30 s is refused (it names that job) unless again is true. A job estimated over
        10 min or 10,000 runs is not queued unless confirm is true: the answer is its estimate
        (runs, seconds, how estimated) with status "not queued"."""
        return _answer(lambda: door.submit_and_wait(spec, timeout_s, again, confirm))

    @server.tool()
    def job_summary(job_id: str) -> dict[str, Any]:
        """A job's status, backend, GPU, spec, notes, error, and per region x config the
        duration's mean, std dev, CI95, relative std dev and stability (µs; the stability
        page's table), and ci95: the CI95's method and its coverage."""
        return _answer(lambda: door.job_summary(job_id))

    @server.tool(description=ANALYSIS_TABLE)
    def analysis_table(job_id: str, analysis: str) -> dict[str, Any]:
        return _answer(lambda: door.analysis_table(job_id, analysis))

    @server.tool()
    def compare_jobs(baseline: str, candidate: str, max_slowdown_pct: float | str = 3.0,
                     metric: str | None = None) -> dict[str, Any]:
        """The regression gate's verdict on candidate vs baseline: passed / regressed / not
        judged / undecided (exit code 0 / 1 / 3 / 4, as `python -m profiling_worker compare`),
        counts per outcome, the measurement differences that make jobs not comparable, and per
        region x config the outcome, difference and smallest detectable difference (%), and
        interval: the method and coverage of the 95 % interval each reason gives. At
        most 4 KB. When the gate refuses the pair (a side it cannot judge, e.g. a damaged
        table), verdict "refused", exit code 2, and the reason, as the Compare page says it.
        max_slowdown_pct as the CLI's --max-slowdown: 3 or "3%"; a bare number below 1 is
        refused as ambiguous (write "0.5%")."""
        return _answer(lambda: door.compare_jobs(baseline, candidate, max_slowdown_pct, metric))

    @server.tool()
    def replicate_job(job_id: str, tolerance_pct: float = 3.0, against: str | None = None,
                      timeout_s: float = WAIT_S) -> dict[str, Any]:
        """Does a job reproduce? Runs its spec again here (or takes against=, a re-run made on
        another GPU, day or machine) and judges each region x config with two one-sided tests
        (TOST) against +/- tolerance_pct: reproduced / not reproduced / not decided (with the
        runs a side that would decide) / not comparable (the regression gate's context
        checks: GPU, clocks, tools, run options)."""
        return _answer(lambda: door.replicate_job(job_id, tolerance_pct, against, timeout_s))

    @server.tool()
    def deep_dive(job_id: str, launch_id: int | None = None) -> dict[str, Any]:
        """One profiled launch of an Nsight Compute job (launch_id, default the first): speed
        of light, memory workload, occupancy and its limiter, warp stalls, launch statistics,
        source hot spots and its rule results; plus the job's rule digest (every rule that
        fired, by estimated saving)."""
        return _answer(lambda: door.deep_dive(job_id, launch_id))

    @server.tool()
    def import_files(paths: list[str]) -> dict[str, Any]:
        """Import files made elsewhere (nsight-python profiled_data/processed_data CSVs,
        Nsight Compute CSV exports, .ncu-rep or .ncu-rep.gz reports; absolute paths on this
        machine, inside the result store, a kernel folder or a folder the server's user
        allowed with --import-dir) as new jobs; each report or table becomes a job of its
        own."""
        return _answer(lambda: door.import_files(paths))

    @server.tool()
    def write_report(job_ids: list[str], out: str, max_slowdown_pct: float | str = 3.0
                     ) -> dict[str, Any]:
        """Write the self-contained HTML report (opens offline in any browser) of one job, or
        of two (baseline, candidate: with the gate's verdict), to out: an .html file name in
        the result store (or a path inside it)."""
        return _answer(lambda: door.write_report(job_ids, out, max_slowdown_pct))

    @server.tool()
    def cancel_job(job_id: str) -> dict[str, Any]:
        """Cancel a job submit_and_wait started here (a queued one never starts, a running one
        is stopped); waits up to a minute for it to end and returns its status."""
        return _answer(lambda: door.cancel_job(job_id))

    return server


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the options (they set the dashboard's ``KPROF_*`` variables) and serve on stdio
    until the client closes it; the door's workers are stopped on the way out."""
    parser = argparse.ArgumentParser(prog="python -m app.agent_door", description=__doc__)
    parser.add_argument("--results", type=Path, metavar="DIR",
                        help="result store (sets KPROF_RESULTS_DIR; default ./results)")
    parser.add_argument("--worker-python", metavar="PATH",
                        help="interpreter of the GPU environment (sets KPROF_WORKER_PYTHON)")
    parser.add_argument("--import-dir", type=Path, action="append", default=[], metavar="DIR",
                        help="a folder import_files may read besides the result store and the "
                             f"kernel folders (repeatable; adds to {ENV_IMPORT_DIRS})")
    ns = parser.parse_args(argv)
    if ns.results is not None:
        os.environ["KPROF_RESULTS_DIR"] = str(ns.results.expanduser().resolve())
    if ns.worker_python is not None:
        os.environ["KPROF_WORKER_PYTHON"] = ns.worker_python
    if ns.import_dir:
        given = [p for p in os.environ.get(ENV_IMPORT_DIRS, "").split(os.pathsep) if p]
        os.environ[ENV_IMPORT_DIRS] = os.pathsep.join(
            given + [str(d.expanduser().resolve()) for d in ns.import_dir])
    door = Door()
    for signum in STOP_SIGNALS:
        signal.signal(signum, lambda n, _frame: _stop_on_signal(door, n))
    try:
        build_server(door).run("stdio")
    finally:
        _stop(door, "the client closed stdin")
    return 0


def _stop(door: Door, why: str) -> None:
    """Stop the door's workers; a job still running ends ``interrupted`` (said on stderr).
    A second caller (a signal during the first) waits for the first (JobManager.shutdown)."""
    ended = door.shutdown()
    if ended:
        print(f"kernel-dashboard-mcp: {why}: {', '.join(ended)} ended interrupted",
              file=sys.stderr, flush=True)


def _stop_on_signal(door: Door, signum: int) -> None:
    """SIGTERM/SIGHUP/SIGINT: stop as on a closed stdin, then exit 128 + signum. In a thread:
    the handler runs on the main thread, which may hold a lock shutdown() needs, and the
    event loop's own exit would wait for the thread blocked reading stdin."""
    def stop() -> None:
        _stop(door, signal.Signals(signum).name)
        os._exit(128 + signum)

    threading.Thread(target=stop, name="kprof-door-stop").start()

if __name__ == "__main__":
    sys.exit(main())
