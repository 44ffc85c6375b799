"""The NVTX range that names one config x run of a job: written and read in one place.

The ncu backend wraps each run of the profiled function in a range ``c<config>r<run>`` of the
``kprof`` domain; the .ncu-rep reader reads it back to place each kernel launch in its config
and run (both 0-based). nsight-python's own ranges (the annotations) use another domain.
"""

from __future__ import annotations

import re

KPROF_DOMAIN = "kprof"
NSIGHT_DOMAIN = "nsight-python"  # nsight-python's annotation ranges
_RUN_RE = re.compile(r"^c(\d+)r(\d+)$")


def run_range_name(config: int, run: int) -> str:
    """``c<config>r<run>``, e.g. ``c0r2`` for config 0, run 2 (0-based)."""
    return f"c{config}r{run}"


def parse_run_range(name: str) -> tuple[int, int] | None:
    """(config, run) of a :func:`run_range_name` range, or None for any other range name."""
    match = _RUN_RE.match(name)
    return (int(match.group(1)), int(match.group(2))) if match else None
