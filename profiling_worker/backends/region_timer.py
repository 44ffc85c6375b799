"""The loop of the backends that time each annotated region themselves, configs x runs, with a
:class:`Stopwatch`: the host clock (cpu backend, :class:`HostClock`) or CUDA events (events
backend). Warm-up calls run before each config's first timed run, with no region timed. With
``spec.run_target`` (runs "auto") the stopping rule of :mod:`profiling_worker.bundle.stats.adaptive`
chooses how many runs each config gets, in batches.

Marks are read only after each config's runs (:meth:`Stopwatch.settle`): a CUDA event's time is
known once the GPU has passed it, and reading it earlier would stall the stream mid-run.

Beside the stopwatch, each region's host time from its start mark to its end mark (the two
marks' own calls left out) is taken with ``time.perf_counter_ns`` (:attr:`Timed.host_ns`): for
CUDA events, the time the host spent launching the region's work, which the events' time holds
when the GPU waits for the host. (On the H200 with torch 2.11, the two ``Event.record`` calls
took about 15 µs together, device run "h200 1202-run5": counted in, they outweighed the gap
they are meant to explain.) The end mark's own call is timed apart (:attr:`Timed.end_mark_ns`):
when the GPU finishes a region's kernels before the host reaches its end event, the event is
stamped only once that call has submitted it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any, NamedTuple, Protocol

from profiling_worker.bundle.stats import adaptive
from profiling_worker.backends.base import Emit, RunCounter
from profiling_worker.bundle.errors import Cancelled, KernelFailed
from profiling_worker.bundle.schema.partial import Shortfall
from profiling_worker.catalog.declare import Annotate
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.spec import JobSpec


class Stopwatch(Protocol):
    """Marks the start and end of each region and turns a pair of marks into nanoseconds.

    ``kernel_prefix``: the Kernel column of a region's row is ``<prefix>:<annotation>`` (a
    region, not one kernel). ``metric``: the duration metric recorded (ns).
    """

    kernel_prefix: str
    metric: str

    def before_region(self) -> None:
        """Called just before each region's start mark, outside it (an L2 flush)."""

    def mark(self) -> Any:
        """A point in time on this stopwatch's clock."""

    def settle(self) -> None:
        """Wait until every mark taken so far can be read."""

    def elapsed_ns(self, start: Any, end: Any) -> float:
        """Nanoseconds from mark ``start`` to mark ``end`` (after :meth:`settle`)."""


class HostClock:
    """The host's ``time.perf_counter_ns``: wall-clock time of the region's host code."""

    kernel_prefix = "host"
    metric = C.HOST_TIME

    def before_region(self) -> None:
        """Nothing to do before a region on the host."""

    def mark(self) -> int:
        """``time.perf_counter_ns()``."""
        return time.perf_counter_ns()

    def settle(self) -> None:
        """Host marks are read at once."""

    def elapsed_ns(self, start: Any, end: Any) -> float:
        """``end - start`` (ns)."""
        return float(end - start)


class Timed(NamedTuple):
    """What :func:`time_regions` measured."""

    #: Launch rows, one per region and run: Kernel ``<clock.kernel_prefix>:<annotation>``,
    #: Launch 0, Metric ``clock.metric``, Value in ns, Unit ``ns``.
    rows: list[dict[str, Any]]
    #: ``adaptive.summary`` of a runs "auto" job (the manifest's ``backend.auto_runs``), else None.
    auto_runs: dict[str, Any] | None
    #: Per row of :attr:`rows`, the host time (ns) from the region's start mark to its end mark.
    host_ns: list[float]
    #: Per row of :attr:`rows`, the host time (ns) of the end mark's own call.
    end_mark_ns: list[float]
    #: What was not measured when a cancel came or a config's kernel raised, else None.
    shortfall: Shortfall | None = None


def time_regions(spec: JobSpec, make_body: Callable[[str, Annotate], Callable[..., None]],
                 emit: Emit, clock: Stopwatch,
                 before_run: Callable[[int, int, tuple[Any, ...]], None] | None = None,
                 on_measured: Callable[[], None] = lambda: None) -> Timed:
    """Run every config ``spec.runs`` times, or as many times as ``spec.run_target``'s stopping
    rule says (after ``spec.warmup`` untimed calls), each annotated region between two marks of
    ``clock``.

    Args:
        spec: the validated job.
        make_body: ``make_body(kernel_id, annotate)`` -> the kernel's body.
        emit: event callback; progress is reported per config and run.
        clock: the stopwatch.
        before_run: called as ``before_run(config_index, run, config_values)`` just before each
            timed run, outside every region (the user's RUN-scope info collectors).
        on_measured: called right after the last run, inside the loop's cancel handling: a cancel
            before it is caught here, one after it is the caller's to note
            (:class:`~profiling_worker.job.runner.CancelWatch`).

    A config whose kernel raises (:class:`KernelFailed`) is skipped, its runs dropped, and the
    others run on; a cancel (:class:`Cancelled`) stops the loop, the config it cut dropped
    (marks are read per config, so a config is kept whole or not at all). Either way the
    configs measured are returned with a :attr:`Timed.shortfall`.

    Returns:
        The rows and, for runs "auto", the stopping rule's record (:class:`Timed`).

    Raises:
        KernelFailed: every config's kernel raised (the first config's error).
        Cancelled: the cancel came before any config was measured.
    """
    rows: list[dict[str, Any]] = []
    host_ns: list[float] = []
    end_mark_ns: list[float] = []
    # (row, start, end, host, end call)
    pending: list[tuple[dict[str, Any], Any, Any, int, int]] = []
    current: dict[str, int] = {}

    @contextmanager
    def timed(name: str) -> Iterator[None]:
        clock.before_region()
        start = clock.mark()
        host_start = time.perf_counter_ns()
        yield
        host_end = time.perf_counter_ns()
        end = clock.mark()
        end_call = time.perf_counter_ns() - host_end
        pending.append(({C.ANNOTATION: name, C.CONFIG: current["config"], C.RUN: current["run"],
                         C.LAUNCH: 0, C.KERNEL: f"{clock.kernel_prefix}:{name}", C.GRID: None,
                         C.BLOCK: None, C.METRIC: clock.metric, C.UNIT: "ns"},
                        start, end, host_end - host_start, end_call))

    bodies = [make_body(k, timed) for k in spec.kernels]
    counter = RunCounter(spec, emit)
    warmed: set[int] = set()

    failed: dict[int, KernelFailed] = {}

    def measure(idx: int, runs: int) -> dict[str, list[float]]:
        values = tuple(spec.configs[idx].values())
        first = len(rows)
        if idx in failed:  # runs "auto" may come back to it: it raised once, it is skipped
            return {}
        try:
            if spec.warmup and idx not in warmed:
                counter.warming(idx)  # before the calls, outside every timed region
            for _ in range(0 if idx in warmed else spec.warmup):
                for body in bodies:
                    body(*values, annotate=lambda _name: nullcontext())
            warmed.add(idx)
            for _ in range(runs):
                # its progress event is written here, before the run's regions open their
                # marks: the report adds nothing to any measured region
                current["config"], current["run"] = counter.next(values)
                if before_run is not None:
                    before_run(current["config"], current["run"], values)
                for body in bodies:
                    body(*values)
            clock.settle()
            rows.extend({**row, C.VALUE: clock.elapsed_ns(start, end)}
                        for row, start, end, *_ in pending)
            host_ns.extend(float(host) for *_, host, _ in pending)
            end_mark_ns.extend(float(call) for *_, call in pending)
        except KernelFailed as exc:
            failed[idx] = exc
            emit("warning", message=f"{exc.message}; config skipped, the others run on")
        except Cancelled:
            current["cut"] = idx
            raise
        finally:  # a config's runs are kept whole or not at all
            if idx in failed or "cut" in current:
                del rows[first:]
            del host_ns[len(rows):], end_mark_ns[len(rows):]
            pending.clear()
        return adaptive.region_values(rows[first:])

    auto: dict[str, Any] | None = None
    cancel: Cancelled | None = None
    try:
        if spec.run_target is None:
            for idx in range(len(spec.configs)):
                measure(idx, spec.runs)
        else:
            states = adaptive.run_adaptive(spec.run_target, len(spec.configs), measure)
            auto = adaptive.summary(states, spec.run_target)
        # last in the try: a cancel until here keeps the configs measured (a shortfall), one
        # after it is only noted by the caller, which writes the whole result
        on_measured()
    except Cancelled as exc:
        cancel = exc
    measured = sorted({int(r[C.CONFIG]) for r in rows})
    if not measured:  # nothing to keep: the job ends as it did before any partial result
        raise cancel or next(iter(failed.values()))
    short = None if cancel is None and not failed else Shortfall(
        measured, {i: e.message for i, e in failed.items()},
        cancel.how if cancel else None, current.get("cut"))
    return Timed(rows, auto, host_ns, end_mark_ns, short)
