"""Is higher better for this Nsight Compute metric? The reading behind the baseline colours.

Nsight Compute's own reading of its sections, by metric name (ncu's metric naming:
``<unit>__<counter>.<rollup>.<submetric>``; Profiling Guide, "Metrics Structure"):

- **higher is better**: throughputs as a % of peak (``pct_of_peak``: how near the speed of light
  a unit ran), hit rates, achieved occupancy and issue rates (``warps_active``,
  ``issue_active``, instructions per cycle, eligible warps), bandwidths (``per_second`` of
  bytes);
- **lower is better**: durations (ns, us, ms, s), elapsed cycles, warp stall cycles
  (``stalled``, ``warp_latency``, ``pcsamp``), bank conflicts, excessive sectors, spills and
  divergent branches;
- **unknown** for everything else (bytes and instruction counts, launch configuration,
  registers, clock frequencies, waves): a change is coloured by its sign only, and the page
  says so.
"""

from __future__ import annotations

import re

HIGHER, LOWER = "higher", "lower"

_LOWER = re.compile(r"time_duration|cycles_elapsed\.(avg|max|min|sum)$|stalled|warp_latency|"
                    r"pcsamp|bank_conflicts|excessive|spill|divergent")
_HIGHER = re.compile(r"pct_of_peak|hit_rate|warps_active|issue_active|warps_eligible|"
                     r"per_cycle_(active|elapsed)$|occupancy.*pct|_pct$|bytes.*per_second$")
_TIME_UNITS = frozenset({"ns", "us", "usecond", "ms", "msecond", "s", "second", "nsecond"})


def better(metric: str, unit: str = "") -> str | None:
    """``"higher"`` or ``"lower"`` (which way is better for ``metric``), None when unknown.

    Args:
        metric: the Nsight Compute metric name, e.g. ``gpu__time_duration.sum``.
        unit: its unit as the report writes it (a duration unit decides "lower").
    """
    if unit.strip().lower() in _TIME_UNITS or _LOWER.search(metric):
        return LOWER
    if "per_second" in metric and "bytes" not in metric:  # a clock frequency (Hz)
        return None
    if _HIGHER.search(metric):
        return HIGHER
    return None
