"""``kernel-sweep``: a sweep on a Slurm cluster from a shell, the sidebar's "Run on: Slurm".

    kernel-sweep spec.json --results /shared/results --partition gpu --gpu-type h200 \\
        --configs-per-task 4 --parallelism 8 --retries 1

Submits the spec's configs as a job array (through the same
:class:`~app.services.slurm_executor.SlurmExecutor` the dashboard uses), prints the count of
tasks in each state while it runs and the bundle's folder at the end; Ctrl-C cancels the
array and waits for its tasks to stop (a second Ctrl-C is ignored meanwhile). Exit status: 0
done, 1 failed or cancelled, 2 bad spec or options, 3 no Slurm here, 4 an identical spec was
queued in the last 30 s (``--again`` queues it anyway), 5 a job estimated over 10 min or
10,000 runs (:func:`app.core.job_size.confirm_text`; ``--yes`` queues it anyway).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

from profiling_worker.bundle.schema import partial
from profiling_worker.bundle.schema.spec import SpecInvalid, validate_spec

from app.core import config_grid, job_size
from app import settings
from app.services import call_time, repeat_guard, sweep_plan as plan
from app.services.slurm_executor import SlurmExecutor
from app.services.sweep_queue import SlurmMissing


def _typed(kind: type[int] | type[float]) -> Callable[[str], int | float]:
    """An option's type: ``kind`` of its text, refusing what int() and float() read silently
    (``١٦``, ``1_000``: :func:`config_grid.digits_problem`) with the number to type.

    Raises (from the returned function):
        argparse.ArgumentTypeError: the text is no plain number; argparse names the option.
    """
    def read(text: str) -> int | float:
        problem = config_grid.digits_problem(text)
        if problem:
            raise argparse.ArgumentTypeError(problem)
        try:
            return kind(text)
        except ValueError:
            noun = "a whole number" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"{text!r} is not {noun}") from None
    return read


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="kernel-sweep", description=__doc__.split("\n\n")[0])
    p.add_argument("spec", type=Path,
                   help="job spec (JSON), as the sidebar writes it (docs/headless.md)")
    p.add_argument("--results", type=Path, default=Path("results"),
                   help="result store shared with the nodes (default ./results)")
    p.add_argument("--worker-python", default=sys.executable,
                   help="the worker's Python on the nodes (with submitit and profiling_worker)")
    p.add_argument("--local", action="store_true",
                   help="submitit's local executor on this host instead of Slurm")
    p.add_argument("--partition", default="")
    p.add_argument("--gpus-per-task", type=_typed(int), default=1)
    p.add_argument("--time-min", type=_typed(int), default=30, help="time limit of each task")
    p.add_argument("--parallelism", type=_typed(int), default=16, help="tasks at once")
    p.add_argument("--retries", type=_typed(int), default=1)
    p.add_argument("--gpu-type", action="append", default=[],
                   help="a GRES GPU type; repeat it to run the spec once on each type")
    p.add_argument("--configs-per-task", type=_typed(int), default=1)
    p.add_argument("--no-reference", action="store_true", help="skip the reference kernel")
    p.add_argument("--again", action="store_true",
                   help="queue even if an identical spec was queued in the last 30 s")
    p.add_argument("--yes", action="store_true",
                   help="queue a job over 10 min or 10,000 runs (estimated) without asking")
    p.add_argument("--poll", type=_typed(float), default=5.0, help="seconds between status lines")
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        spec = validate_spec(json.loads(args.spec.read_text(encoding="utf-8")))
        options = plan.sweep_options({
            "cluster": "local" if args.local else "slurm", "partition": args.partition,
            "gpus_per_task": args.gpus_per_task, "time_limit_min": args.time_min,
            "parallelism": args.parallelism, "retries": args.retries,
            "configs_per_task": args.configs_per_task, "reference": not args.no_reference,
            "worker_python": args.worker_python})
    except (OSError, ValueError) as exc:  # SpecInvalid is a ValueError
        errors = exc.errors if isinstance(exc, SpecInvalid) else [exc]
        print("\n".join(f"kernel-sweep: {e}" for e in errors), file=sys.stderr)
        return 2
    if not args.again and (twin := repeat_guard.recent_twin(args.results, spec)):
        print(f"kernel-sweep: {repeat_guard.twin_text(args.results, twin)} Run again with --again "
              f"to queue "
              "it.", file=sys.stderr)
        return 4
    ask = call_time.ask_before(spec, job_size.confirm_text(spec, job_size.estimate(spec)),
                              args.results, settings.bundled_dir()).text()
    if not args.yes and ask:
        print(f"kernel-sweep: {ask} Run again with --yes to queue it.", file=sys.stderr)
        return 5
    executor = SlurmExecutor(args.results, args.worker_python, poll_s=1.0)
    try:
        job_ids = executor.submit_each_type(spec, options, args.gpu_type)
    except SlurmMissing as exc:
        print(f"kernel-sweep: {exc}; use --local to run the array on this host",
              file=sys.stderr)
        return 3
    try:
        while executor.active():
            for job in executor.snapshot():
                print(f"{job.job_id}: {job.status} · tasks {job.done}/{job.total} · {job.stage}",
                      flush=True)
            time.sleep(args.poll)
    except KeyboardInterrupt:
        _cancel(executor, job_ids)
    statuses = []
    for ended in executor.snapshot():
        statuses.append(ended.status.value)
        print(f"{ended.status}: {ended.path}", flush=True)
        for warning in ended.warnings:
            print(f"  {warning}", flush=True)
    return 0 if all(s == "done" for s in statuses) else 1


def _cancel(executor: SlurmExecutor, job_ids: list[str]) -> None:
    """Ctrl-C: cancel the sweeps and wait (up to 300 s each) for their watchers to stop the
    tasks and merge. A local task leads its own process group, out of this terminal's reach,
    so a second Ctrl-C is ignored meanwhile: it would end this process, the watcher with it."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    print("kernel-sweep: cancelling; waiting for the tasks to stop (Ctrl-C again is ignored)",
          flush=True)
    try:
        for job_id in job_ids:
            executor.cancel(job_id, partial.SWEEP_CLI_CANCEL)  # each task records it
        for job_id in job_ids:
            executor.wait(job_id, 300)
    finally:
        signal.signal(signal.SIGINT, previous)


if __name__ == "__main__":
    sys.exit(main())
