"""An Nsight Compute job in several nsight-python calls, so that a cancel keeps the calls
finished before it (issue 37), as a CUPTI job's calls do (cupti.py).

nsight-python keeps nothing of a call the profiled function leaves by an exception (the
worker's :class:`~profiling_worker.bundle.errors.Cancelled`): 1.1 (attach mode) ends profiling
in a ``finally`` and leaves without waiting for ncu or reading its report (``NCUCollector.
collect`` in ``nsight/collection/ncu.py``), 0.9.6 (launch mode) is inside ``subprocess.run`` of
the ncu command, which kills the shell it started ncu with. Whether ncu leaves a readable
report when it is stopped is not known, so nothing relies on it: the configs go in consecutive
calls of about :data:`CALL_BUDGET_S` of estimated profiling each, and each call's report is
read (its launches kept, ``report_summary.json`` written) before the next call starts. A
cancel loses the call under way (its ncu and the program ncu runs are stopped,
:func:`stop_ncu`, and its files removed); the calls before it are the job's partial result.
So does a later call that fails (a kernel that raised in it, ncu that exited with an error):
the calls after it are not run, its report is removed and its ncu log kept, and the job ends
``failed`` with the configs of the calls read (:meth:`NcuCalls.shortfall`).

Each more call costs an ncu start: in launch mode a new copy of the worker under ncu (about
10 s, the pre-flight fit's constant, docs/performance.md). So a call holds about a minute, and
a job that fits one call (J1: 40 runs, about 8 s estimated) is one call, its files in
``nsight/`` as before; a later call's files are ``nsight/configs<a>-<b>-*``. A job with a
section set (a deep dive, read from one report) stays one call.
"""

from __future__ import annotations

import json
import os
import signal
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from profiling_worker.backends import nsight_backend as nb
from profiling_worker.backends.base import Emit, RunCounter
from profiling_worker.backends.cupti import lost_text, plan_calls
from profiling_worker.bundle.errors import (Cancelled, KernelFailed, ProfilingFailed,
                                            WorkerError, classify_known, last_error_event)
from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.events import last_event
from profiling_worker.bundle.schema.partial import Shortfall, config_label
from profiling_worker.bundle.schema.spec import JobSpec

#: Estimated seconds of profiling one Nsight Compute call holds: a cancel loses about this much
#: at most. In launch mode each more call costs about 10 s (a worker started under ncu), a
#: sixth of a full call.
CALL_BUDGET_S = 60.0
#: Seconds of one profiled launch under ncu with a metric list: the least-squares fit over the
#: bundled H200 jobs (docs/performance.md, the pre-flight's estimates: app/core/preflight.py).
#: Counted once a run (a run that launches more kernels takes longer).
NCU_LAUNCH_S = 0.19
#: Environment variable naming the configs of the call a launch-mode child runs, and the job's
#: nsight folder (:func:`call_value`): the child is a copy of the worker that nsight-python
#: 0.9.x starts under ncu, with our environment.
CALL_ENV = "KPROF_NCU_CALL"
#: Seconds a cancelled call's ncu is given to end on SIGTERM before SIGKILL.
STOP_WAIT_S = 2.0


def plan(spec: JobSpec, warm_up_s: Sequence[float] | None = None) -> list[list[int]]:
    """The configs of each call, in config order (:func:`cupti.plan_calls`): each config's
    estimate is its warm-up call (attach mode; 0 where none was timed: the launch-mode parent
    runs no kernel) plus :data:`NCU_LAUNCH_S` a run, at most :data:`CALL_BUDGET_S` a call. One
    call for a job with a section set or one config."""
    total = len(spec.configs)
    if spec.section_set or total < 2:
        return [list(range(total))]
    estimates = list(warm_up_s) if warm_up_s and len(warm_up_s) == total else [0.0] * total
    return plan_calls(estimates, total, spec.runs, CALL_BUDGET_S, NCU_LAUNCH_S)


def prefix(configs: Sequence[int], total: int) -> str:
    """The start of a call's file names in ``nsight/`` (nsight-python's ``output_prefix`` after
    the folder): "" for a call of every config (the files as a job of one call always had
    them), ``configs<first>-<last>-`` otherwise."""
    return "" if len(configs) == total else f"configs{configs[0]}-{configs[-1]}-"


def plan_text(calls: Sequence[Sequence[int]], total: int) -> str:
    """The log line of a job's plan of calls."""
    if len(calls) == 1:
        return f"Nsight Compute: the {counted(total, 'config')} in one nsight-python call"
    return (f"Nsight Compute: the {counted(total, 'config')} in {len(calls)} nsight-python "
            f"calls of at most about {CALL_BUDGET_S:g} s estimated each: a cancel keeps the "
            "calls finished before it")


def call_value(configs: Sequence[int], out_dir: Path) -> str:
    """:data:`CALL_ENV`'s value for the call of ``configs`` of the job whose nsight folder is
    ``out_dir``: ``"2,3 /path/to/job/nsight"`` (the folder tells a child of this job from
    another job's on the same host, :func:`stop_ncu`)."""
    return f"{','.join(map(str, configs))} {out_dir}"


def child_configs(spec: JobSpec) -> list[int]:
    """The configs the launch-mode child runs: those its parent named in :data:`CALL_ENV`
    (:func:`call_value`), every config where it named none or what it named is not configs of
    this job."""
    total = len(spec.configs)
    try:
        named = [int(i) for i in os.environ.get(CALL_ENV, "").split(" ", 1)[0].split(",")
                 if i.strip()]
    except ValueError:
        named = []
    return named if named and all(0 <= i < total for i in named) else list(range(total))


@dataclass
class NcuCalls:
    """The calls of one Nsight Compute job and what the finished ones measured.

    Attributes:
        rows: launch rows of the calls read (the calls' configs, and launches outside every
            config range: those :func:`~profiling_worker.backends.base.split_unattributed`
            sets apart).
        measured: configs of the calls read, in order.
        flight: the call under way (its configs) and the progress count when it began.
    """

    nsight: Any
    spec: JobSpec
    options: dict[str, Any]
    profiled: Callable[..., None]
    out_dir: Path
    emit: Emit
    counter: RunCounter
    rows: list[dict[str, Any]] = field(default_factory=list)
    device: dict[str, Any] = field(default_factory=dict)
    summaries: list[dict[str, Any]] = field(default_factory=list)
    measured: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    flight: tuple[list[int], int] | None = None

    def run(self, calls: Sequence[Sequence[int]]) -> WorkerError | None:
        """Run and read ``calls`` in order; what stopped them (None: every call ran): a cancel,
        or a call that failed or wrote no report (``Cancelled``; ``KernelFailed`` or
        ``ProfilingFailed``, the launch-mode child's own error first)."""
        try:
            for configs in calls:
                self.call(list(configs))
        except WorkerError as exc:
            return exc
        return None

    def call(self, configs: list[int]) -> None:
        """One nsight-python call of ``configs``, then its report read (:meth:`read`)."""
        start = prefix(configs, len(self.spec.configs))
        options = {**self.options, "output_prefix": f"{self.out_dir}/{start}"}
        decorated = self.nsight.analyze.kernel(**options)(self.profiled)
        self.flight = (configs, self.counter.done)
        os.environ[CALL_ENV] = call_value(configs, self.out_dir)  # launch mode: the child's
        try:
            decorated(configs=[tuple(self.spec.configs[i].values()) for i in configs])
        except RuntimeError as exc:  # nsight-python's own extraction; ours reads every launch
            self.note(f"nsight-python's extraction failed ({exc}); tables come from the "
                      "per-launch data of the .ncu-rep")
        except Exception as exc:
            err = nb.profiling_error(exc, "Nsight Compute", "see the ncu log in the job's files; "
                                     "check the metric names with `ncu --query-metrics` and "
                                     "counter permissions")
            if isinstance(err, Cancelled):
                raise err from exc
            raise last_error_event(self.out_dir.parent) or err from exc  # the child's own
        finally:
            os.environ.pop(CALL_ENV, None)
        # a launch-mode child's error while its ncu still exited 0: its report is not whole (the
        # job stops at a call's failure, so an error event is this call's child's)
        child = last_error_event(self.out_dir.parent)
        if child is not None:
            raise child
        self.read(configs, start)

    def note(self, warning: str) -> None:
        """A warning, said once however many calls give it."""
        if warning not in self.warnings:
            self.warnings.append(warning)

    def read(self, configs: list[int], start: str) -> None:
        """Read the report of the call of ``configs`` (files ``nsight/<start>*``): its launch
        rows kept, the summary of every call read so far written, the deep dive of a job with
        a section set. A report holds its call's launches only (ncu profiles the call); rows
        of any other config of the job are left out so that no launch is counted twice.

        Raises:
            ProfilingFailed: the call wrote no report.
        """
        from profiling_worker.extract.ncu_report_reader import merged_summary, read_with_summary
        from profiling_worker.extract.ncu_sections import write_deep_dive

        reports = sorted(self.out_dir.glob(f"{start}*.ncu-rep"))
        if not reports:
            raise ProfilingFailed("Nsight Compute wrote no report",
                                  "see worker.log and the ncu log for the cause")
        rows, device, summary = read_with_summary(reports[-1], self.spec.metrics)
        total = len(self.spec.configs)
        self.rows += [r for r in rows if r[C.CONFIG] in configs or not 0 <= r[C.CONFIG] < total]
        missing = set(self.device.get("missing_metrics", ())) | set(device["missing_metrics"])
        self.device = {**device, **self.device, "missing_metrics": sorted(missing)}
        self.summaries.append(summary)
        (self.out_dir.parent / C.REPORT_SUMMARY_FILE).write_text(
            json.dumps(merged_summary(self.summaries), indent=1, default=str))
        if self.spec.section_set:  # the deep-dive view's tables, read from the report once
            write_deep_dive(reports[-1], self.out_dir.parent / C.DEEP_DIVE_FILE)
        self.measured += configs
        self.flight = None
        if len(configs) < total:
            self.emit("log", message=f"Nsight Compute: configs {configs[0]}-{configs[-1]} "
                                     "measured and their report read", ncu_call_read=configs)

    def shortfall(self, stop: WorkerError | None) -> Shortfall | None:
        """What a cancel or a failed call left unmeasured (None: every call ran): the call
        under way has its ncu stopped (:func:`stop_ncu`), then :meth:`cancelled` or
        :meth:`failed` says what the calls read before keep.

        Raises:
            WorkerError: ``stop`` came before any call was read (a cancel, or the first call's
                failure): nothing to keep, the job ends with it as before.
        """
        if stop is None:
            return None
        if self.flight is not None:  # its ncu: 1.1 does not wait for it, 0.9.x's shell is gone
            stop_ncu(f"{self.out_dir}/{prefix(self.flight[0], len(self.spec.configs))}",
                     call_value(self.flight[0], self.out_dir))
        if not self.measured:
            raise stop  # nothing to keep (the cancel's files left, as before)
        if isinstance(stop, Cancelled):
            return self.cancelled(stop)
        return self.failed(classify_known(stop) or stop)

    def cancelled(self, cancel: Cancelled) -> Shortfall:
        """A cancel's shortfall: the call it cut has its files removed; the config it was
        running is ``cut`` where the worker saw its runs (attach mode), else the call's configs
        are named in ``lost``."""
        cut, lost = None, ""
        if self.flight is not None:
            configs, done_before = self.flight
            for path in self.out_dir.glob(f"{prefix(configs, len(self.spec.configs))}*"):
                if path.is_file():
                    path.unlink()
            ran = self.counter.last if self.counter.done > done_before else None
            cut = ran[0] if ran is not None and ran[0] in configs else None
            lost = (lost_text(configs[:configs.index(cut)], self.spec.configs)
                    if cut is not None  # launch mode: the child ran it, unseen here
                    else dropped_call_text(configs, self.spec.configs, "under way"))
        return Shortfall(sorted(self.measured), {}, cancel.how, cut, lost)

    def failed(self, err: WorkerError) -> Shortfall:
        """A later call's failure's shortfall: the calls after it are not run; its report (if
        ncu wrote one) is removed, never read, and its ncu log kept and named in ``lost``; the
        config whose kernel raised is ``failed`` with ``err``'s text where it is known
        (:meth:`raised_at`; the configs the call ran before it ``dropped``), else every config
        of the call (ncu's own failure: its text with the first)."""
        assert self.flight is not None  # a call fails while it is under way
        traceback.print_exception(err)  # the job's error says where: worker.log
        configs = self.flight[0]
        start = prefix(configs, len(self.spec.configs))
        for path in self.out_dir.glob(f"{start}*.ncu-rep*"):
            path.unlink()
        logs = [f"{self.out_dir.name}/{log.name}"
                for log in sorted(self.out_dir.glob(f"{start}*.log"))]
        at = self.raised_at(configs, err)
        first = config_label(self.spec.configs[configs[0]])  # ncu's error said once, there
        failed = {at: err.message} if at is not None else {
            i: err.message if i == configs[0] else f"with config {first}, in the same Nsight "
                                                   "Compute call" for i in configs}
        lost = dropped_call_text(configs, self.spec.configs, "that failed", logs)
        self.emit("log", message=f"Nsight Compute: the call of configs {configs[0]}-"
                                 f"{configs[-1]} failed ({err.message}); the calls read before "
                                 "are kept", ncu_call_failed=configs)
        ran = configs[:configs.index(at)] if at is not None else []  # the configs run before it
        return Shortfall(sorted(self.measured), failed, None, None, lost, err.kind, err.hint,
                         ran)

    def raised_at(self, configs: Sequence[int], err: WorkerError) -> int | None:
        """The config of ``configs`` whose kernel raised ``err`` (None: not a kernel's failure,
        or not seen): the latest run this process counted in the call (attach mode), else the
        latest config the launch-mode child's progress events name (its warm-up or a run)."""
        if err.kind != KernelFailed.kind or self.flight is None:
            return None
        if self.counter.done > self.flight[1] and self.counter.last is not None:
            at: Any = self.counter.last[0]
        else:
            event = last_event(self.out_dir.parent / C.EVENTS_FILE, "progress", "config")
            at = event["config"] if event is not None else None
        return at if at in configs else None


def dropped_call_text(call: Sequence[int], configs: Sequence[Mapping[str, Any]], which: str,
                      logs: Sequence[str] = ()) -> str:
    """The ``lost`` words of the call of ``call`` (indices into the job's ``configs``) that was
    dropped (``which``: "under way", a cancel cut it; "that failed"), naming its ncu ``logs``
    (paths in the job folder)."""
    labels = ", ".join(config_label(configs[i]) for i in call)
    said = "; its ncu log: " + ", ".join(logs) if logs else ""
    return (f"the Nsight Compute call {which} ({labels}) was dropped whole: a call's report "
            f"is read only once the call has ended{said}")


def child_call(nsight: Any, spec: JobSpec, options: dict[str, Any],
               profiled: Callable[..., None], counter: RunCounter) -> None:
    """The launch-mode child's call: the configs its parent named (:func:`child_configs`),
    its progress counted on from the runs of the calls before; nsight-python ends the process
    after it (0.9.x's ``os._exit``)."""
    configs = child_configs(spec)
    counter.resume_at(configs[0] * spec.runs)  # the calls before hold the configs before
    decorated = nsight.analyze.kernel(**options)(profiled)
    decorated(configs=[tuple(spec.configs[i].values()) for i in configs])


def stop_ncu(report_start: str, call: str) -> list[int]:
    """End the ncu that writes a report whose path begins with ``report_start`` (the call a
    cancel cut), the processes it started, and the launch-mode child of the call (the
    worker's copy under ncu: its environment holds ``call``, :func:`call_value`, which an ncu
    SIGKILLed with its shell leaves behind): nsight-python 1.1 leaves ncu running unwaited-for,
    and 0.9.x's ``subprocess.run`` kills only the shell it started ncu with. The group's own
    cancel signal (the dashboard signals the worker's process group, Slurm every process of the
    step, Ctrl-C the terminal's) reaches them too, but a signal to the worker alone (a sweep
    task's SIGINT, ``kill PID``) does not. SIGTERM, SIGKILL after :data:`STOP_WAIT_S`. Linux
    (/proc) only; elsewhere nothing.

    Returns:
        The pids signalled.
    """
    table = _processes()
    ncu = [pid for pid, (_ppid, argv) in table.items()
           if any(a == "-o" and b.startswith(report_start)
                  for a, b in zip(argv, argv[1:], strict=False))]
    mark = f"{CALL_ENV}={call}".encode()
    pids = list(dict.fromkeys(
        ncu + [pid for pid, (ppid, _argv) in table.items() if ppid in ncu]
        + [pid for pid in table if mark in _environ(pid)]))
    _signal(pids, signal.SIGTERM)
    deadline = time.monotonic() + STOP_WAIT_S
    while any(map(_alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    _signal([p for p in pids if _alive(p)], signal.SIGKILL)
    return pids


def _processes() -> dict[int, tuple[int, list[str]]]:
    """pid -> (parent pid, command line) of every process /proc shows (not this one)."""
    found: dict[int, tuple[int, list[str]]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        pid = int(entry.name)
        try:
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):  # gone meanwhile, or not ours to read
            continue
        if pid != os.getpid():
            found[pid] = (ppid, argv)
    return found


def _environ(pid: int) -> list[bytes]:
    """The environment of ``pid`` (``NAME=value`` entries), empty where it cannot be read."""
    try:
        return Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return []


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie, ended and not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _signal(pids: Sequence[int], signum: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, signum)
        except (ProcessLookupError, PermissionError):
            pass
