"""Host-timer backend: the catalog's torch bodies on the CPU, each annotation timed with
``time.perf_counter_ns``. It measures host wall-clock time, not GPU time, and says so:
its only metric is ``host__time_duration.sum``.

Host wall-clock time includes any time the process waited for a CPU, so the job records the
host's 1-minute load average before and after timing against its usable CPUs
(``backend.host_load``) and warns when the load exceeded them (:func:`load_warning`): the same
body measured 50x slower between two jobs on a loaded 2-core machine.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from profiling_worker.backends.base import Collection, Emit, launches_frame
from profiling_worker.backends.region_timer import HostClock, time_regions
from profiling_worker.backends.run_side import BackendStatus, RunJob, RunSide, unavailable
from profiling_worker.catalog.declare import Annotate
from profiling_worker.schema import backends as B
from profiling_worker.schema.spec import JobSpec

MEASUREMENT = "host wall-clock, not GPU"


class CpuBackend(RunSide):
    """The host timer: available wherever torch is installed."""

    name = B.CPU

    def probe(self, env: dict[str, Any]) -> BackendStatus:
        """Available wherever torch is installed."""
        if not env.get("torch"):
            return unavailable("torch is not installed",
                               "pip install torch==2.13.0 (CPU) or a CUDA build")
        return BackendStatus(True, "host wall-clock timing of the same torch bodies on the "
                                   "CPU, not GPU")

    def warm_up(self, status: BackendStatus) -> None:
        """Import torch once (no device to start)."""
        import torch  # noqa: F401

    def run(self, job: RunJob) -> Collection:
        """Time ``job``'s bodies on the host (:func:`collect`)."""
        return collect(job.spec, lambda k, timed: job.body(k, "cpu", timed), job.channel.emit)


def collect(spec: JobSpec, make_body: Callable[[str, Annotate], Callable[..., None]],
            emit: Emit) -> Collection:
    """Run every config ``spec.runs`` times (after ``spec.warmup`` untimed calls), or, with
    ``spec.run_target``, as many times as the stopping rule says (profiling_worker/adaptive.py),
    each region timed on the host (:func:`~profiling_worker.backends.region_timer.time_regions`).

    Args:
        spec: the validated job.
        make_body: ``make_body(kernel_id, annotate)`` -> the kernel's body (device "cpu").
        emit: event callback; progress is reported per config and run.

    Returns:
        A :class:`Collection` whose launches have one row per annotation run
        (Kernel ``host:<annotation>``, Metric ``host__time_duration.sum``, Unit ``ns``).
    """
    before = os.getloadavg()[0]
    timed = time_regions(spec, make_body, emit, HostClock())  # its host_ns: the values themselves
    rows, auto_runs = timed.rows, timed.auto_runs
    load = {"before": before, "after": os.getloadavg()[0], "cpus": len(os.sched_getaffinity(0))}
    info: dict[str, Any] = {"measurement": MEASUREMENT, "timer": "time.perf_counter_ns",
                            "host_load": load}
    if auto_runs is not None:
        info["auto_runs"] = auto_runs
    warning = load_warning(max(load["before"], load["after"]), load["cpus"])
    return Collection(launches_frame(rows, spec), [warning] if warning else [], info)


def load_warning(load: float, cpus: float) -> str | None:
    """A warning when the host's 1-minute load average ``load`` (runnable processes, from
    ``os.getloadavg``) exceeded its ``cpus`` usable CPUs while timing, else None."""
    if load <= cpus:
        return None
    return (f"the host's load average was {load:.1f} on {cpus} usable CPU(s) while timing: "
            "host wall-clock times include time spent waiting for a CPU; compare jobs "
            "recorded on an idle host")
