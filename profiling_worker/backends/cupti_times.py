"""What nsight-python 1.1's CUPTI collector sees but does not hand on: each kernel's GPU start
and end timestamps, and the kernels no annotation holds.

nsight-python keeps only ``end - start`` of a CUPTI kernel activity record and drops the
kernels launched outside every annotation. Both are read here from its internals
(``nsight.collection.cupti``: the ``cupti`` module it registers its activity callbacks with,
and ``_attribute_kernels``), without changing what it measures: the timeline
(profiling_worker/bundle/timeline.py) places each launch at its real start.

Timestamps are CUPTI's (``cupti.get_timestamp()`` clock, ns); :func:`clock_pair` ties that
clock to ``time.perf_counter_ns`` so the NVML trace can be placed on the same axis.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Attribution:
    """What one nsight-python CUPTI call attributed.

    ``times``: (annotation, kernel name, start ns, end ns) per attributed kernel, in
    nsight-python's order (launch order: the order of its per-annotation lists); start/end
    None where CUPTI delivered no kernel record. ``outside``: (kernel name, duration ns) of the
    kernels no annotation holds. ``launched`` / ``outside_launched``: the CPU timestamp (ns,
    CUPTI's clock) of each one's launch, in the same order; None where no launch record was
    seen.
    """

    times: list[tuple[str, str, int | None, int | None]] = field(default_factory=list)
    outside: list[tuple[str, int]] = field(default_factory=list)
    launched: list[int | None] = field(default_factory=list)
    outside_launched: list[int | None] = field(default_factory=list)

    def for_annotation(self, annotation: str) -> list[tuple[str, int | None, int | None]]:
        """(kernel, start ns, end ns) of one annotation's kernels, in order."""
        return [(k, s, e) for a, k, s, e in self.times if a == annotation]

    def launches_of(self, annotation: str) -> list[int | None]:
        """Launch timestamps (ns, CUPTI's clock) of one annotation's kernels, in order."""
        return [t for (a, *_), t in zip(self.times, self.launched, strict=True)
                if a == annotation]


class _CallbackSpy:
    """Stands in for the ``cupti`` module inside nsight-python's collector: its buffer-completed
    callback is wrapped to note each kernel record's start and end by correlation id."""

    def __init__(self, cupti: Any, gpu_times: dict[int, tuple[int, int]]):
        self._cupti = cupti
        self._gpu_times = gpu_times

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cupti, name)

    def activity_register_callbacks(self, requested: Any, completed: Any) -> Any:
        kernel_kind = self._cupti.ActivityKind.CONCURRENT_KERNEL

        def spy(activities: list[Any]) -> Any:
            for activity in activities:
                if activity.kind == kernel_kind:
                    self._gpu_times[activity.correlation_id] = (int(activity.start),
                                                                int(activity.end))
            return completed(activities)

        return self._cupti.activity_register_callbacks(requested, spy)


@contextmanager
def capture_attribution(nsight: Any) -> Iterator[Attribution]:
    """Record :class:`Attribution` of the nsight-python CUPTI calls made inside the block.

    Leaves ``Attribution`` empty with nsight-python versions without these internals.
    """
    found = Attribution()
    module: Any = importlib.import_module(f"{nsight.__name__}.collection.cupti")
    original = getattr(module, "_attribute_kernels", None)
    cupti = getattr(module, "cupti", None)
    if original is None or cupti is None:
        yield found
        return
    gpu_times: dict[int, tuple[int, int]] = {}

    def spy(markers: Any, launches: Any, kernels: Any) -> Any:
        # The name carries the correlation id through nsight-python's own attribution, so the
        # launch order and rules stay its own.
        tagged = [k._replace(name=(k.name, k.correlation_id)) for k in kernels]
        launched_at = {launch.correlation_id: launch.start for launch in launches}
        attributed, seen = [], set()
        for annotation, (name, corr), ns in original(markers, launches, tagged):
            found.times.append((annotation, name, *gpu_times.get(corr, (None, None))))
            found.launched.append(launched_at.get(corr))
            attributed.append((annotation, name, ns))
            seen.add(corr)
        for kernel in kernels:
            if kernel.correlation_id not in seen:
                found.outside.append((kernel.name, kernel.duration))
                found.outside_launched.append(launched_at.get(kernel.correlation_id))
        return attributed

    module._attribute_kernels, module.cupti = spy, _CallbackSpy(cupti, gpu_times)
    try:
        yield found
    finally:
        module._attribute_kernels, module.cupti = original, cupti


def clock_pair() -> dict[str, int] | None:
    """``{"cupti_ns", "perf_counter_ns"}`` read back to back; None where CUPTI's clock cannot be
    read (the timeline then keeps the NVML trace on an axis of its own and says so)."""
    try:
        from cupti import cupti

        return {"cupti_ns": int(cupti.get_timestamp()), "perf_counter_ns": time.perf_counter_ns()}
    except Exception:  # no cupti-python, or CUPTI refused: never fail the measurement for this
        return None
