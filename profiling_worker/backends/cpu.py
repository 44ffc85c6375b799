"""Host-timer backend: the catalog's torch bodies on the CPU, each annotation timed with
``time.perf_counter_ns``. It measures host wall-clock time, not GPU time, and says so:
its only metric is ``host__time_duration.sum``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from profiling_worker import adaptive
from profiling_worker.backends.base import Collection, Emit, RunCounter, launches_frame
from profiling_worker.backends.registry import RunJob
from profiling_worker.catalog.declare import Annotate
from profiling_worker.schema import columns as C
from profiling_worker.schema.spec import JobSpec

MEASUREMENT = "host wall-clock, not GPU"


def probe(env: dict[str, Any]) -> dict[str, Any]:
    """Available wherever torch is installed."""
    from profiling_worker.environment import unavailable

    if not env.get("torch"):
        return unavailable("torch is not installed", "pip install torch==2.13.0 (CPU) or a CUDA build")
    return {"available": True, "nsight_mode": None, "fix": "",
            "reason": "host wall-clock timing of the same torch bodies on the CPU, not GPU"}


def warm_up(entry: dict[str, Any]) -> None:
    """Import torch once (no device to start)."""
    import torch  # noqa: F401


def run(job: RunJob) -> Collection:
    """Time ``job``'s bodies on the host (:func:`collect`)."""
    return collect(job.spec, lambda k, timed: job.body(k, "cpu", timed), job.channel.emit)


def collect(spec: JobSpec, make_body: Callable[[str, Annotate], Callable[..., None]],
            emit: Emit) -> Collection:
    """Run every config ``spec.runs`` times (after ``spec.warmup`` untimed calls), or, with
    ``spec.run_target``, as many times as the stopping rule says (profiling_worker/adaptive.py).

    Args:
        spec: the validated job.
        make_body: ``make_body(kernel_id, annotate)`` -> the kernel's body (device "cpu").
        emit: event callback; progress is reported per config and run.

    Returns:
        A :class:`Collection` whose launches have one row per annotation run
        (Kernel ``host:<annotation>``, Metric ``host__time_duration.sum``, Unit ``ns``).
    """
    rows: list[dict[str, Any]] = []
    current: dict[str, int] = {}

    @contextmanager
    def timed(name: str) -> Iterator[None]:
        start = time.perf_counter_ns()
        yield
        rows.append({C.ANNOTATION: name, C.CONFIG: current["config"], C.RUN: current["run"],
                     C.LAUNCH: 0, C.KERNEL: f"host:{name}", C.GRID: None, C.BLOCK: None,
                     C.METRIC: C.HOST_TIME, C.VALUE: float(time.perf_counter_ns() - start),
                     C.UNIT: "ns"})

    bodies = [make_body(k, timed) for k in spec.kernels]
    counter = RunCounter(spec, emit)
    warmed: set[int] = set()

    def measure(idx: int, runs: int) -> dict[str, list[float]]:
        values = tuple(spec.configs[idx].values())
        for _ in range(0 if idx in warmed else spec.warmup):
            for body in bodies:
                body(*values, annotate=lambda _name: nullcontext())
        warmed.add(idx)
        first = len(rows)
        for _ in range(runs):
            current["config"], current["run"] = counter.next(values)
            for body in bodies:
                body(*values)
        return adaptive.region_values(rows[first:])

    info: dict[str, Any] = {"measurement": MEASUREMENT, "timer": "time.perf_counter_ns"}
    if spec.run_target is not None:
        states = adaptive.run_adaptive(spec.run_target, len(spec.configs), measure)
        info["auto_runs"] = adaptive.summary(states, spec.run_target)
    else:
        for idx in range(len(spec.configs)):
            measure(idx, spec.runs)
    return Collection(launches_frame(rows, spec), backend_info=info)
