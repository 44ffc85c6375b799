"""A launch's PM sampling: metric values Nsight Compute sampled at a fixed interval while the
kernel ran (the ``PmSampling`` section of ``--set full``; the GUI draws it as the kernel's own
timeline). Read from ncu_report actions; no GPU.

Where the series are: every instanced metric whose instances are keyed by GPU timestamps (ns),
named ``<unit group>.TriageCompute.<metric>`` (the H200 report of ncu 2025.3.1,
e.g. ``TPC.TriageCompute.sm__inst_executed_realtime.avg.pct_of_peak_sustained_elapsed``) or
``pmsampling:<metric>`` / ``warpsampling:<metric>`` (other ncu versions and chips). Each
instance is the counter accumulated over one sample interval (``profiler__pmsampler_interval_time``,
ns) starting at its timestamp.

Time axis: a sample's start minus the kernel's start, ``profiler__timestamp_workload_start_<g>``
of the pass group ``g`` whose workload window ``[start_g, end_g]`` the series overlaps (each
pass group replays the kernel, on its own clock). The sampler runs for the whole pass, so samples
ending before the kernel began or starting after it ended are left out (counted in
``dropped``). A report without workload timestamps gets ncu_report's own alignment
(``IAction.timelines().aligned_metric``), whose zero is the first aligned sample, not the kernel's
start; ``origin`` says which.
"""

from __future__ import annotations

from typing import Any

from profiling_worker.bundle.schema import metrics as M

#: Name parts that mark a sampled series.
SERIES_PREFIXES = ("pmsampling:", "warpsampling:")
TRIAGE_PART = ".TriageCompute."
INTERVAL_METRIC = M.PM_INTERVAL
WORKLOAD_START, WORKLOAD_END = M.PM_WORKLOAD_START, M.PM_WORKLOAD_END
#: ``origin`` values.
FROM_KERNEL_START, FROM_FIRST_SAMPLE = "kernel start", "first aligned sample"


def is_series(name: str) -> bool:
    """True for a PM-sampling or warp-sampling series name."""
    return name.startswith(SERIES_PREFIXES) or TRIAGE_PART in name


def base_name(name: str) -> str:
    """The metric without its sampler prefix or unit group (``sm__inst_executed_realtime...``)."""
    for prefix in SERIES_PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix):]
    return name.split(TRIAGE_PART, 1)[1] if TRIAGE_PART in name else name


def _stamp(action: Any, name: str) -> int | None:
    """The timestamp (ns) a one-instance profiler__timestamp_* metric carries as its id."""
    if name not in action.metric_names():
        return None
    metric = action[name]
    if not metric.has_correlation_ids():
        return None
    return int(metric.correlation_ids().as_uint64(0))


def workload_windows(action: Any) -> list[tuple[int, int]]:
    """[(start, end)] GPU timestamps (ns) of the kernel in each pass group, in group order."""
    out, group = [], 0
    while (start := _stamp(action, f"{WORKLOAD_START}{group}")) is not None:
        end = _stamp(action, f"{WORKLOAD_END}{group}")
        if end is None:
            break
        out.append((start, end))
        group += 1
    return out


def _instances(metric: Any) -> list[tuple[int, float]]:
    """(timestamp ns, value) of each instance; id 0 marks an empty slot of the buffer."""
    ids = metric.correlation_ids()
    return [(int(ids.as_uint64(i)), float(metric.as_double(i)))
            for i in range(metric.num_instances()) if int(ids.as_uint64(i)) != 0]


def _relative(samples: list[tuple[int, float]], windows: list[tuple[int, int]],
              interval: float) -> tuple[list[tuple[int, float]], int, float] | None:
    """Samples as (ns from kernel start, value) inside the window they overlap, the number
    left out and the kernel's duration (ns); None when no window overlaps them."""
    first, last = samples[0][0], samples[-1][0]
    for start, end in windows:
        if start <= last and end >= first:
            kept = [(t - start, v) for t, v in samples if t + interval > start and t < end]
            return kept, len(samples) - len(kept), float(end - start)
    return None


def _aligned(action: Any, metric: Any) -> list[tuple[int, float]]:
    timelines = action.timelines()
    aligned = timelines.aligned_metric(metric) if timelines is not None else None
    if aligned is None or not aligned.has_correlation_ids():
        return []
    ids = aligned.correlation_ids()
    return [(int(ids.as_uint64(i)), float(aligned.as_double(i)))
            for i in range(aligned.num_instances())]


def sampled_series(action: Any) -> list[dict[str, Any]]:
    """One dict per sampled metric of the launch: ``metric`` (base name), ``name`` (as in the
    report), ``unit``, ``interval_ns``, ``origin``, ``duration_ns`` (kernel, None without
    workload timestamps), ``dropped`` (samples outside the kernel), ``t_ns`` and ``values``
    (equal-length lists: sample start in ns from ``origin``, value accumulated over the interval
    in ``unit``). Empty when the launch has no PmSampling data."""
    names = sorted(n for n in action.metric_names() if is_series(n))
    if not names:
        return []
    interval = float(action[INTERVAL_METRIC].value()) if INTERVAL_METRIC in \
        action.metric_names() else 0.0
    windows = workload_windows(action)
    out = []
    for name in names:
        metric = action[name]
        if metric.num_instances() < 2 or not metric.has_correlation_ids():
            continue
        samples = _instances(metric)
        placed = _relative(samples, windows, interval) if samples and windows else None
        if placed is not None:
            kept, dropped, duration = placed
            origin: str = FROM_KERNEL_START
        else:
            kept, dropped, duration, origin = _aligned(action, metric), 0, None, FROM_FIRST_SAMPLE
        if not kept:
            continue
        out.append({"metric": base_name(name), "name": name, "unit": str(metric.unit() or ""),
                    "interval_ns": interval, "origin": origin, "duration_ns": duration,
                    "dropped": dropped, "t_ns": [t for t, _ in kept],
                    "values": [v for _, v in kept]})
    return out
