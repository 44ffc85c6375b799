"""Python's cyclic garbage collector paused while a cold worker starts (issue 40).

A cold job imports pandas, pyarrow, nsight-python (matplotlib) and torch: some hundred
thousand objects, nearly none of them garbage. Each import allocates enough to trigger
collections, and every full one scans all that was imported so far; the worker's imports
of the same modules took longer than the bare nsight-python script's, most of it in a few
modules where a collection fell (``benchmarks/cold_imports.py``, device run "gpu
2026-12-07-s24cold"). So the collector is off from the worker's start to the job's first
kernel call, and what start-up made is then frozen (``gc.freeze``: moved to a generation
the collector never scans), so no later collection of the job, or of a warm worker's next
jobs, scans it again. Nothing is collected at the freeze: start-up garbage is small, and a
collection there would cost the full scan this module avoids.
"""

from __future__ import annotations

import gc
import os

#: ``KPROF_GC_PAUSE=0`` leaves the collector as Python starts it (to compare; docs/performance.md).
ENV = "KPROF_GC_PAUSE"


def pause() -> None:
    """Turn the collector off for the start-up (no-op with ``KPROF_GC_PAUSE=0``)."""
    if os.environ.get(ENV, "1") != "0":
        gc.disable()


def resume() -> None:
    """Freeze what start-up made and turn the collector back on, once the imports are done
    (idempotent: a no-op when the collector is on already)."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()
