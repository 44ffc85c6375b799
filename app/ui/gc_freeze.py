"""The objects a dashboard server keeps for good, kept out of Python's full garbage collections.

A full collection (the oldest generation) scans every object the collector tracks. In a server
that has drawn the Size sweep, Stability, Kernels and One kernel that is about 150,000 objects,
most of them the modules' own and the pages' caches, which live as long as the server: one full
collection took 94-98 ms of CPU (AppTest in one interpreter, 2-core machine beside a CPU hog,
2026-12-05), and when one fell into a click's script run before the page's chart, that run took
171-176 ms of CPU to the chart instead of about 40 (``benchmarks/click_cpu.py``, 2 of 16 clicks;
issue 40). :func:`freeze_once` collects once, then moves every object left to the permanent
generation (``gc.freeze``), so that a later full collection scans only what was made since:
1-6 ms in the same interpreter after six more page visits. The prefetch thread calls it once
it has computed the pages' frames (:mod:`app.ui.prefetch`), i.e. while the user reads the
first page. Objects frozen are not freed by the collector later (those that become garbage
through reference counting still are): the collection just before leaves no cycle of garbage
pending, but for what a script run of another session has in its hands at that moment, which
is kept once.
"""

from __future__ import annotations

import gc
import threading

_frozen = threading.Event()


def freeze_once() -> None:
    """Collect, then freeze every tracked object (``gc.freeze``), the first time it is called
    in this process; later calls return at once. The collection holds the GIL for as long as it
    runs (about 0.1 s on the 2-core machine), so call it off the script thread."""
    if _frozen.is_set():
        return
    _frozen.set()
    gc.collect()
    gc.freeze()
