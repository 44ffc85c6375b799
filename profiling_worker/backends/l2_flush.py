"""L2 flush between CUPTI runs, so that ``cache_control="all"`` means a cold L2 on both backends.

Nsight Compute flushes all caches before every profiled kernel when cache control is "all".
CUPTI only timestamps kernels: without a flush the L2 (tens of MiB on an H200; the size is read from
the device) keeps a run's data for the next one, and ``x*2`` on 4 Mi fp32 elements read 5.55 µs,
6.0 TB/s, above the 4.8 TB/s HBM peak (bundle/schema/peaks.py; measured in
docs/measurements-h200.md, run 11). As benchmark harnesses do (triton ``do_bench`` zeroes a 256 MB
buffer), a buffer larger than the L2 is written just before each annotated region opens, outside it:
the flush kernel is not measured, and a region finds none of its data in the L2, neither from the
previous run nor from an earlier region of the same run (``fused`` after ``unfused`` on the same
inputs read 6.0 TB/s with one flush per run). Kernels inside one region still share the L2 (Nsight
Compute flushes before each kernel; the worker does not intrude into a region).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

#: At least this many bytes are written (triton do_bench's buffer), and at least twice the L2.
MIN_FLUSH_BYTES = 256 << 20


class L2Flush:
    """Writes a device buffer of ``max(2 x L2 size, 256 MiB)`` bytes on the current stream.

    :meth:`before_each` wraps the annotate function so each region starts cold;
    :meth:`describe` is the manifest entry (bytes, L2 size, how, count).
    """

    def __init__(self, device: int = 0):
        import torch

        self.l2_bytes = int(torch.cuda.get_device_properties(device).L2_cache_size)
        self.bytes = max(2 * self.l2_bytes, MIN_FLUSH_BYTES)
        self._buffer = torch.empty(self.bytes, dtype=torch.uint8, device=f"cuda:{device}")
        self.count = 0

    def __call__(self) -> None:
        self._buffer.zero_()
        self.count += 1

    def before_each(self, annotate: Callable[[str], Any]) -> Callable[[str], Any]:
        """``annotate`` with the flush launched just before each region opens (outside it)."""

        @contextmanager
        def region(name: str) -> Iterator[None]:
            self()
            with annotate(name):
                yield

        return region

    def describe(self) -> dict[str, Any]:
        """``{"method", "bytes", "l2_bytes", "flushes"}`` for the manifest's backend entry."""
        return {"method": "a device buffer written before each annotated region, outside it "
                          "(not measured)",
                "bytes": self.bytes, "l2_bytes": self.l2_bytes, "flushes": self.count}


def no_flush(cache_control: str) -> dict[str, Any]:
    """The manifest entry when nothing is flushed (cache_control "none": warm L2 by request)."""
    return {"method": f"none (cache_control {cache_control!r}): the L2 keeps data between runs",
            "bytes": 0, "l2_bytes": None, "flushes": 0}
