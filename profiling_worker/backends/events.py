"""The ``events`` backend: each annotated region timed between two ``torch.cuda.Event`` marks on
the current stream, as benchmark scripts do (``triton.testing.do_bench``, nvbench's GPU time).

What it measures (``bundle/schema/backends.py`` EVENTS_BACKEND.measures): the wall time on the
stream from the start event to the end event. The stream is synchronised just before each start
event, so every region starts on an idle GPU and its time holds the launch of its first kernel,
the kernels, and every gap between them (host launch overhead, small copies, allocator work).
That is why it reads longer than CUPTI's kernel durations, most for short kernels: the sum of
the gaps is what the backends page attributes to launch overhead. ``cudaEventElapsedTime`` has a
resolution of about 0.5 µs (CUDA Runtime API, cudaEventElapsedTime). Both events of a region
are created before its start mark, as ``triton.testing.do_bench`` creates its events before
timing, so event creation is not timed.

Beside each region's events, the host time from its start mark to its end mark is measured
(``region_timer.Timed.host_ns``) and summarised per annotation x config in the manifest
(``backend.host_launch``, :func:`host_launch_summary`): when the GPU waits for the host, the
events' time is that host time plus the kernels', and the backends page attributes the
difference to CUPTI with it.

With ``cache_control="all"`` the L2 is flushed before each region, outside it, as the CUPTI
backend does (``l2_flush.py``); Nsight Compute flushes before every kernel instead. Warm-up calls
(``spec.warmup``) run before each config's timed runs and are not timed
(``region_timer.time_regions``).
"""

from __future__ import annotations

import statistics
from typing import Any

from profiling_worker.backends import nsight_backend as nb
from profiling_worker.backends.base import (Collection, launches_frame, user_collector_frame,
                                            user_collector_info)
from profiling_worker.catalog.user_collectors import CollectorRun
from profiling_worker.backends.l2_flush import L2Flush, no_flush
from profiling_worker.backends.region_timer import Timed, time_regions
from profiling_worker.backends.run_side import NO_GPU, BackendStatus, RunJob, RunSide, unavailable
from profiling_worker.bundle.errors import BackendUnavailable
from profiling_worker.bundle.schema import backends as B, columns as C

MEASUREMENT = B.EVENTS_BACKEND.measures
#: cudaEventElapsedTime's resolution (CUDA Runtime API reference), for the manifest.
TIMER = "torch.cuda.Event pairs (cudaEventElapsedTime, resolution about 0.5 µs)"
NO_CUDA_FIX = ("run on a machine with an NVIDIA GPU and a CUDA build of torch "
               "(pip install torch from the CUDA index), or choose the cpu backend")


class EventsBackend(RunSide):
    """CUDA events around each region (module docstring)."""

    name = B.EVENTS

    def probe(self, env: dict[str, Any]) -> BackendStatus:
        """Available with a GPU (NVML) and torch; a CPU-only torch is found at the run
        (:func:`require_cuda`): the probe never starts CUDA."""
        if not env.get("gpus"):
            return unavailable(*NO_GPU)
        if not env.get("torch"):
            return unavailable("torch is not installed", NO_CUDA_FIX)
        return BackendStatus(True, f"torch {env['torch']} CUDA events: {MEASUREMENT}")

    def warm_up(self, status: BackendStatus) -> None:
        """Import torch and start CUDA."""
        torch = require_cuda()
        torch.cuda.init()
        torch.zeros(1, device="cuda")

    def run(self, job: RunJob) -> Collection:
        """Time ``job``'s regions with CUDA events on the job's GPU.

        Raises:
            BackendUnavailable: torch sees no CUDA device.
            KernelFailed: a kernel body raised (CUDA out of memory included).
        """
        torch = require_cuda()
        spec = job.spec
        job.ready()
        flush = L2Flush() if spec.cache_control == "all" else None
        user = job.registry.user_collectors(spec.collectors)
        collectors = CollectorRun(user)
        collectors.run_once()
        with nb.autograd_on_calling_thread():
            timed = time_regions(spec, lambda k, annotate: job.body(k, "cuda", annotate),
                                 job.channel.emit, CudaEventClock(torch, flush),
                                 collectors.before_run if user else None, job.measured)
        # An unapplied thermal_mode is said by runner._ignored_by_backend, only when set
        return Collection(launches_frame(timed.rows, spec), collectors.warnings(), {
            "measurement": MEASUREMENT, "timer": TIMER,
            "cache_flush": flush.describe() if flush else no_flush(spec.cache_control),
            "cuda_device": nb.cuda_device(job.uuid),
            B.HOST_LAUNCH: host_launch_summary(timed),
            **({"auto_runs": timed.auto_runs} if timed.auto_runs is not None else {}),
            **user_collector_info(collectors)}, user_collector_frame(collectors, spec),
            shortfall=timed.shortfall)


def host_launch_summary(timed: Timed) -> list[dict[str, Any]]:
    """The host time of each region (its start mark to its end mark), per annotation x config,
    the end mark's own call, and the events' time less the same run's host time.

    Args:
        timed: what :func:`~profiling_worker.backends.region_timer.time_regions` measured (one
            row, host time and end-mark time per region run).

    Returns:
        One record per annotation x config, in first-seen order: ``annotation``, ``config`` (its
        index), ``runs``, the host time's ``mean_ns`` and ``median_ns``, the end mark's
        ``median_end_mark_ns``, and ``median_events_minus_host_ns``: the median over runs of each
        run's events time less its host time (ns; a run's host jitter is in both, so the
        difference keeps what the host does not explain).
    """
    groups: dict[tuple[str, int], list[tuple[float, float, float]]] = {}
    for row, host, end in zip(timed.rows, timed.host_ns, timed.end_mark_ns):
        groups.setdefault((row[C.ANNOTATION], row[C.CONFIG]), []).append((host, end, row[C.VALUE]))
    return [{"annotation": name, "config": config, "runs": len(runs),
             "mean_ns": statistics.fmean(h for h, _, _ in runs),
             B.HOST_MEDIAN_NS: statistics.median(h for h, _, _ in runs),
             B.END_MARK_MEDIAN_NS: statistics.median(e for _, e, _ in runs),
             B.EVENTS_LESS_HOST_MEDIAN_NS: statistics.median(v - h for h, _, v in runs)}
            for (name, config), runs in groups.items()]


def require_cuda() -> Any:
    """The ``torch`` module, once it sees a CUDA device.

    Raises:
        BackendUnavailable: torch is missing, or ``torch.cuda.is_available()`` is False (a CPU
            build of torch, or no GPU visible to it).
    """
    try:
        import torch
    except ImportError as exc:
        raise BackendUnavailable(f"the events backend needs torch: {exc}", NO_CUDA_FIX) from exc
    if not torch.cuda.is_available():
        raise BackendUnavailable(f"the events backend needs a CUDA device, and torch "
                                 f"{torch.__version__} sees none (torch.cuda.is_available() "
                                 "is False)", NO_CUDA_FIX)
    return torch


class CudaEventClock:
    """A :class:`~profiling_worker.backends.region_timer.Stopwatch` of CUDA events on the current
    stream: before each region the L2 flush (when asked), the region's two events created, and a
    stream synchronisation."""

    kernel_prefix = "events"
    metric = C.EVENTS_TIME

    def __init__(self, torch: Any, flush: L2Flush | None):
        self._torch = torch
        self._flush = flush
        self._ready: list[Any] = []

    def before_region(self) -> None:
        """Flush the L2 (when asked), create the region's start and end events (creation is not
        timed), then wait for the stream to be idle."""
        if self._flush is not None:
            self._flush()
        self._ready = [self._torch.cuda.Event(enable_timing=True) for _ in range(2)]
        self._torch.cuda.synchronize()

    def mark(self) -> Any:
        """The next of the region's events, recorded on the current stream."""
        event = self._ready.pop(0)
        event.record()
        return event

    def settle(self) -> None:
        """Wait for every recorded event."""
        self._torch.cuda.synchronize()

    def elapsed_ns(self, start: Any, end: Any) -> float:
        """``start.elapsed_time(end)`` (ms) in ns."""
        return float(start.elapsed_time(end)) * 1e6
