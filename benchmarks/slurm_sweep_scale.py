"""Scale of a cluster sweep against the local Slurm (scripts/local_slurm.sh): a cpu sweep of
``--configs`` configs as one job array, through the SlurmExecutor the dashboard uses.

Measured first: how long ``submit`` holds its caller (the sidebar) and when the whole array is
in Slurm (the watcher submits it). Measured while it runs: the job panel's refresh, i.e. the executor's snapshot plus drawing the
panel's task table (``app.sidebar.job_panel.task_table``) in Streamlit's AppTest, every
``--every`` s; and the watcher's poll cycle (one squeue call and the new lines of every task's
events file). At the end: the merge of the task results into one bundle (timed inside the
executor's watcher, then once more alone on the same folders).

    SLURM_CONF=... python benchmarks/slurm_sweep_scale.py --configs 1000 --per-task 1

Prints one JSON object (figures in docs/batch-runs.md).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import types
from pathlib import Path

from streamlit.testing.v1 import AppTest

from app.services import slurm_executor as se
from app.services.job_model import TaskView
from app.services.sweep_plan import SweepOptions
from profiling_worker.bundle.schema.spec import validate_spec
from profiling_worker.sweep.merge import merge_sweep

#: The running sweep, for the panel script (AppTest runs it in this process, as its own
#: __main__, so it finds this module by name in sys.modules).
STATE = types.ModuleType("kprof_scale_state")
sys.modules[STATE.__name__] = STATE
PANEL = """
import kprof_scale_state as b
from app.sidebar.job_panel import task_table
task_table(b.EXECUTOR.get(b.JOB_ID))
"""


def _timed_poll(executor: se.SlurmExecutor, cycles: list[float]) -> None:
    """Wrap the executor's poll to record each cycle's wall time."""
    poll = executor._poll

    def timed(sweep: object) -> bool:
        t0 = time.perf_counter()
        try:
            return poll(sweep)  # type: ignore[arg-type]
        finally:
            cycles.append(time.perf_counter() - t0)

    executor._poll = timed  # type: ignore[method-assign]


def _tasks(executor: se.SlurmExecutor, job_id: str) -> tuple[TaskView, ...]:
    job = executor.get(job_id)
    return job.tasks if job is not None else ()


def main() -> int:
    args = argparse.ArgumentParser()
    args.add_argument("--configs", type=int, default=1000)
    args.add_argument("--per-task", type=int, default=1)
    args.add_argument("--parallelism", type=int, default=8)
    args.add_argument("--every", type=float, default=2.0)
    args.add_argument("--nice", type=int, default=0,
                      help="run the tasks under `nice -n N` (a shared machine)")
    opts = args.parse_args()
    results = Path(tempfile.mkdtemp(prefix="kprof-scale-"))
    results.chmod(0o777)
    spec = validate_spec({"kernels": ["scale"], "configs": [{"n": 64 + i} for i in
                                                           range(opts.configs)],
                          "runs": 2, "backend": "cpu", "warmup": 0})
    executor = STATE.EXECUTOR = se.SlurmExecutor(results, sys.executable, poll_s=1.0)
    cycles: list[float] = []
    _timed_poll(executor, cycles)
    t0 = time.perf_counter()
    python = f"nice -n {opts.nice} {sys.executable}" if opts.nice else sys.executable
    options = SweepOptions(configs_per_task=opts.per_task, retries=0, worker_python=python,
                           parallelism=opts.parallelism, reference=False)
    job_id = STATE.JOB_ID = executor.submit(spec, options)
    submit_s = time.perf_counter() - t0  # what the sidebar waits for
    while executor.active() and not all(t.scheduler_id for t in _tasks(executor, job_id)):
        time.sleep(0.05)
    submitted_s = time.perf_counter() - t0  # the watcher has submitted the whole array
    refresh: list[float] = []
    at = AppTest.from_string(PANEL, default_timeout=60).run()  # the first run starts Streamlit
    while executor.active():
        job = executor.get(job_id)
        if job is not None and job.stage != "merging":
            t1 = time.perf_counter()
            at.run()  # a rerun, as the panel fragment's run_every does
            refresh.append(time.perf_counter() - t1)
            assert not at.exception, at.exception
            if len(refresh) % 20 == 0:  # figures so far, for a run cut short
                print(json.dumps({"t_s": round(time.perf_counter() - t0), "ended": job.done,
                                  "refresh_ms_max": round(1e3 * max(refresh), 1),
                                  "refresh_ms_median": round(1e3 * statistics.median(refresh), 1),
                                  "poll_ms_max": round(1e3 * max(cycles), 1)}),
                      file=sys.stderr, flush=True)
        time.sleep(opts.every)
    wall = time.perf_counter() - t0
    job = executor.get(job_id)
    assert job is not None
    tasks = [{"task": t.name, "configs": list(t.configs), "state": t.state, "attempts": 1,
              "reason": t.reason, "folder": str(job.path / "tasks" / t.name / "a0")}
             for t in job.tasks]
    t2 = time.perf_counter()
    merge_sweep(job.path, tasks)
    merge_s = time.perf_counter() - t2
    print(json.dumps({
        "configs": opts.configs, "tasks": len(job.tasks), "status": job.status.value,
        "tasks_done": sum(t.state == "done" for t in job.tasks), "submit_s": round(submit_s, 2),
        "array_submitted_s": round(submitted_s, 2),
        "sweep_wall_s": round(wall, 1), "panel_refreshes": len(refresh),
        "panel_refresh_ms": {"median": round(1e3 * statistics.median(refresh), 1),
                             "max": round(1e3 * max(refresh), 1)} if refresh else None,
        "poll_cycle_ms": {"median": round(1e3 * statistics.median(cycles), 1),
                          "max": round(1e3 * max(cycles), 1), "n": len(cycles)},
        "merge_s": round(merge_s, 2), "results": str(results)}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
