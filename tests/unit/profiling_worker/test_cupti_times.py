"""CUPTI start/end capture (backends/cupti_times.py) against a stand-in for nsight-python 1.1's
``nsight.collection.cupti`` (the real one needs CUDA): the same names, callback flow and
attribution contract (launch order, annotation open at launch, outside ones dropped)."""

from __future__ import annotations

import sys
import types
from types import SimpleNamespace
from typing import Any, NamedTuple

import numpy as np

from profiling_worker.backends.cupti_times import capture_attribution
from profiling_worker.backends.cupti import _cupti_rows
from profiling_worker.bundle.schema import columns as C

KERNEL = 10


class _KernelRecord(NamedTuple):
    correlation_id: int
    name: str
    duration: int


class _LaunchRecord(NamedTuple):  # nsight/collection/cupti.py, 1.1.0
    correlation_id: int
    start: int


def _attribute(markers: list, launches: list, kernels: list) -> list:
    by_corr = {k.correlation_id: k for k in kernels}
    out = []
    for corr, t in sorted(launches, key=lambda launch: launch[1]):
        open_ = [name for name, start, end in markers if start <= t <= end]
        if open_ and corr in by_corr:
            out.append((open_[0], by_corr[corr].name, by_corr[corr].duration))
    return out


def _fake_nsight() -> tuple[Any, Any]:
    module = types.ModuleType("fake_nsight.collection.cupti")
    registered: dict[str, Any] = {}
    module.cupti = SimpleNamespace(  # type: ignore[attr-defined]
        ActivityKind=SimpleNamespace(CONCURRENT_KERNEL=KERNEL, DRIVER=1),
        activity_register_callbacks=lambda req, done: registered.update(done=done))
    module._attribute_kernels = _attribute  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module

    def collect(activities: list, markers: list, launches: list) -> list:
        kernels: list[_KernelRecord] = []

        def done(acts: list) -> None:
            kernels.extend(_KernelRecord(a.correlation_id, a.name, a.end - a.start)
                           for a in acts if a.kind == module.cupti.ActivityKind.CONCURRENT_KERNEL)

        module.cupti.activity_register_callbacks(None, done)
        registered["done"](activities)
        return module._attribute_kernels(markers, launches, kernels)

    return SimpleNamespace(__name__="fake_nsight"), collect


def _kernel(corr: int, name: str, start: int, end: int) -> SimpleNamespace:
    return SimpleNamespace(kind=KERNEL, correlation_id=corr, name=name, start=start, end=end)


def test_start_end_follow_each_attributed_kernel_and_outside_ones_are_kept() -> None:
    nsight, collect = _fake_nsight()
    activities = [_kernel(1, "gemm", 1000, 1500), _kernel(2, "flush", 1600, 1700),
                  _kernel(3, "gemm", 2000, 2600), SimpleNamespace(kind=1)]
    markers = [("fp16", 0, 100), ("fp16", 300, 400)]
    launches = [_LaunchRecord(3, 350), _LaunchRecord(1, 50), _LaunchRecord(2, 200)]
    # corr 2 was launched between the two ranges
    with capture_attribution(nsight) as seen:
        attributed = collect(activities, markers, launches)
    assert attributed == [("fp16", "gemm", 500), ("fp16", "gemm", 600)]  # nsight's own result
    assert seen.times == [("fp16", "gemm", 1000, 1500), ("fp16", "gemm", 2000, 2600)]
    assert seen.outside == [("flush", 100)]
    assert seen.launched == [50, 350] and seen.outside_launched == [200]
    assert seen.launches_of("fp16") == [50, 350] and seen.launches_of("other") == []
    module = sys.modules["fake_nsight.collection.cupti"]
    assert module._attribute_kernels is _attribute  # restored


def test_rows_carry_start_end_only_when_the_lists_agree() -> None:
    nsight, collect = _fake_nsight()
    with capture_attribution(nsight) as seen:
        collect([_kernel(1, "a", 10, 20), _kernel(2, "a", 30, 45)], [("r", 0, 100)],
                [_LaunchRecord(1, 1), _LaunchRecord(2, 2)])
    actions = [SimpleNamespace(name="a", values=np.array([10])),
               SimpleNamespace(name="a", values=np.array([15]))]
    rows = _cupti_rows({"r": actions}, {"r": seen.for_annotation("r")}, 0, 2, [])
    assert [(r[C.RUN], r[C.START_NS], r[C.END_NS]) for r in rows] == [(0, 10, 20), (1, 30, 45)]
    other = [SimpleNamespace(name="b", values=np.array([10]))] * 2
    rows = _cupti_rows({"r": other}, {"r": seen.for_annotation("r")}, 0, 2, [])
    assert all(r[C.START_NS] is None for r in rows)
