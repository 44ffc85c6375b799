"""The job's timeline (profiling_worker/bundle/timeline.py's trace) as frames for the clocks page's
embedded chart, and the trace file the Files page offers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pandas as pd

from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import ManifestError
from profiling_worker.bundle.timeline import (PLACED_BY_CUPTI, RUN_ORDER_NOTE, TimelineError,
                                              build_trace)

from app.core import frame_columns as F
from profiling_worker.bundle.loader import Bundle
from app.core.metrics import MissingData

#: File name suffix of the trace download (opens in ui.perfetto.dev and chrome://tracing).
TRACE_SUFFIX = "-timeline.json"
PERFETTO_UI = "https://ui.perfetto.dev"
TIMELINE_ALIGNED = (
    "Each launch at its CUPTI GPU start and end; the NVML clocks below on the same axis (the "
    "worker read CUPTI's clock and the sampler's clock back to back). A clock sample every few "
    "tens of ms still misses most short kernels.")
TIMELINE_NO_NVML = ("Each launch at its CUPTI GPU start and end; this job has no NVML trace on "
                    "CUPTI's clock to draw beside them.")
TIMELINE_RUN_ORDER = (
    "This job has no kernel start times (Nsight Compute replays each kernel, so its jobs have "
    "none; CUPTI jobs have them in tables/launch_times when their worker wrote that table): "
    "the launches sit back to back in run order, each as long as its measured duration, so gaps "
    "between them are not shown and the NVML trace above cannot be placed beside them.")

#: A cpu job's run-order note: its runs are timed on the host and it has no NVML trace (a fresh
#: user read TIMELINE_RUN_ORDER's Nsight Compute, CUPTI and NVML trace of a cpu job's page).
TIMELINE_RUN_ORDER_HOST = (
    "A cpu job records no start time of each run: its regions' runs sit back to back in run "
    "order, each as long as its host wall-clock time, so gaps between them are not shown.")


@dataclass(frozen=True)
class TimelineView:
    """``launches``: Track (the trace's track name less the run-order note), Kernel, StartMs,
    DurationUs (the measured duration), Config, ConfigLabel, Run; one row per launch, StartMs on
    the chart's axis. ``counters``: StartMs, Counter, CounterValue, CounterUnit (NVML; empty
    when the samples are not on the launches' axis). ``placement``: where the launches sit
    (profiling_worker.bundle.timeline's PLACED_*). ``aligned``: launches and NVML share the axis.
    ``untimed``: launches left out for want of a CUPTI start. ``host_timer``: the durations
    are host wall-clock times (cpu backend)."""

    launches: pd.DataFrame
    counters: pd.DataFrame
    placement: str
    aligned: bool
    untimed: int = 0
    host_timer: bool = False

    @property
    def measured_starts(self) -> bool:
        """True when the launches sit at their CUPTI start times (not run order)."""
        return self.placement == PLACED_BY_CUPTI

    @property
    def note(self) -> str:
        """The caption under the chart: where the launches sit, and whether NVML is beside them."""
        if not self.measured_starts:
            return TIMELINE_RUN_ORDER_HOST if self.host_timer else TIMELINE_RUN_ORDER
        left_out = (f" {counted(self.untimed, 'launch', 'launches')} had no CUPTI start and "
                    f"{'is' if self.untimed == 1 else 'are'} left out (the other "
                    "pages count them)." if self.untimed else "")
        return (TIMELINE_ALIGNED if self.aligned else TIMELINE_NO_NVML) + left_out


def timeline_problem(bundle: Bundle) -> str | None:
    """Why this job has no timeline (None: it has one): no launches, or no duration metric."""
    launches = bundle.table(C.TABLE_LAUNCHES)
    if launches.empty:
        return "the job has no per-launch table"
    if not launches[C.METRIC].isin(C.DURATION_METRICS).any():
        return f"the launches hold no duration ({' or '.join(C.DURATION_METRICS)})"
    return None


def _trace(bundle: Bundle) -> dict[str, Any]:
    try:
        return build_trace(bundle.path)
    except (TimelineError, ManifestError) as exc:
        raise MissingData(f"No timeline: {exc}", getattr(exc, "hint", "")) from exc


def trace_bytes(bundle: Bundle) -> bytes:
    """The trace file (Trace Event Format JSON, UTF-8).

    Raises:
        MissingData: no launches table or duration metric, or no readable manifest.
    """
    return json.dumps(_trace(bundle)).encode("utf-8")


def timeline_view(bundle: Bundle) -> TimelineView:
    """The trace as frames (see :class:`TimelineView`); times in ms from the trace's origin.

    Raises:
        MissingData: as :func:`trace_bytes`.
    """
    trace = _trace(bundle)
    events = trace["traceEvents"]
    tracks = {(e["pid"], e["tid"]): e["args"]["name"].removesuffix(RUN_ORDER_NOTE)
              for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    kernels = [e for e in events if e["ph"] == "X"]
    launches = pd.DataFrame({
        F.TRACK: [tracks[(e["pid"], e["tid"])] for e in kernels],
        C.KERNEL: [e["name"] for e in kernels],
        F.START_MS: [_ms(e["ts"]) for e in kernels],
        F.DURATION_US: [e["args"]["duration_ns"] / 1e3 for e in kernels],
        C.CONFIG: [e["args"]["config"] for e in kernels],
        F.CONFIG_LABEL: [_label(e["args"], bundle.parameters) for e in kernels],
        C.RUN: [e["args"]["run"] for e in kernels]})
    aligned = bool(trace["otherData"]["nvml_aligned"])  # the counters share the launches' axis
    counters = [e for e in events if e["ph"] == "C"] if aligned else []
    frame = pd.DataFrame({
        F.START_MS: [_ms(e["ts"]) for e in counters],
        F.COUNTER: [e["name"] for e in counters],
        F.COUNTER_VALUE: [next(iter(e["args"].values())) for e in counters],
        F.COUNTER_UNIT: [next(iter(e["args"])) for e in counters]})
    facts = trace["otherData"]
    return TimelineView(launches, frame, facts["placement"], aligned,
                        facts["launches_without_start"], bundle.host_timer)


def _ms(ts_us: float) -> float:
    """A trace ``ts`` (µs, nudged by 1e-6 for Perfetto: profiling_worker.bundle.timeline._us) in ms,
    rounded to the ns it stands for."""
    return round(ts_us / 1e3, 6)


def _label(args: dict[str, Any], params: tuple[str, ...]) -> str:
    return ", ".join(f"{p}={args[p]}" for p in params if p in args)
