"""How the values of one metric from several launches of one run are combined (pure Python).

Why not nsight-python's ``combine_kernel_metrics`` (docs/design-notes.md,
"Where this project departs"): it applies one function to every metric, so
``lambda a, b: a + b`` sums percentages of peak (176 % of DRAM peak was seen on an H200). Here
each metric is combined by the rule its Nsight Compute name implies (:func:`combine_rule`):
amounts are summed, rates and fractions of a peak are duration-weighted means.
"""

from __future__ import annotations

import re

from profiling_worker.bundle.schema import metrics as M

RULE_SUM = "sum"
RULE_WEIGHTED = "duration-weighted mean"
RULE_MEAN_UNWEIGHTED = "mean (no duration to weight)"
RULE_SINGLE = "single"
#: Suffix added to the rule when the metric name was not recognised and the unit (or the
#: default) decided; shown in the CombineRule column so a reader can tell a guess from a rule.
UNKNOWN_KIND_NOTE = " (unknown metric kind)"

_ROLLUPS = frozenset({"sum", "avg", "min", "max"})
# Sub-metrics that express a rate, a ratio or a fraction of a peak: intensive quantities.
# A duration-weighted mean of "counter / elapsed time" over launches run one after the other is
# exactly "total counter / total time", which is what the combined region achieved.
_RATE_SUBMETRIC = re.compile(
    r"^(per_second|per_cycle_\w+|per_\w+|pct(_of_\w+)?|ratio|max_rate|peak_\w+)$"
)
# Units that are rates, ratios or fractions (intensive) vs amounts (extensive); used only for
# names that do not follow the Nsight Compute structure.
_INTENSIVE_UNIT = re.compile(r"(%|/|\bper\b|hz$|ratio|second$)", re.IGNORECASE)
_EXTENSIVE_UNIT = re.compile(
    r"^([kmgtp]?(byte|bytes|b)|[mun]?s(econd)?|[mun]?sec|ns|usecond|msecond|nsecond|cycle|cycles|"
    r"inst|instructions?|warp|warps|sector|sectors|request|requests|thread|threads|block|blocks|"
    r"count|flop|flops|op|ops)$",
    re.IGNORECASE,
)


#: Duration metric names without their rollup: every rollup of a duration adds.
_DURATION_BASES = tuple(m.split(".")[0] for m in M.DURATION_METRICS)

def combine_rule(metric: str, unit: str | None = None) -> str:
    """How the values of one metric from several launches of one run are combined.

    Decided by Nsight Compute's metric naming ``<unit>__<counter>.<rollup>[.<sub-metric>]``
    (rollups ``sum``/``avg``/``min``/``max``; sub-metrics such as ``per_second``,
    ``pct_of_peak_sustained_elapsed``, ``ratio``) -- as Nsight Compute documents its metric
    structure:
    durations, counts and bytes add; percentages of peak, rates and averages are
    duration-weighted means.

    Rules, first match wins:

    1. ``gpu__time_duration.*`` and ``host__time_duration.*`` (ns): ``"sum"``.
    2. A rate / ratio / percentage sub-metric after the rollup (``.per_second``,
       ``.per_cycle_active``, ``.pct_of_peak_sustained_elapsed``, ``.pct``, ``.ratio``,
       ``.max_rate``, ``.peak_sustained``), or a name ending in ``.pct``/``.ratio``:
       ``"duration-weighted mean"``. E.g. ``dram__throughput.avg.pct_of_peak_sustained_elapsed``
       (%), ``dram__bytes.sum.per_second`` (byte/s), ``gpc__cycles_elapsed.avg.per_second`` (Hz).
    3. Rollup ``.sum`` with no sub-metric (``dram__bytes_read.sum``, byte;
       ``smsp__inst_executed.sum``, inst): ``"sum"``.
    4. Rollup ``.avg``/``.min``/``.max`` with no sub-metric: these are still *counter values*
       (``sm__cycles_elapsed.avg`` = cycles per SM instance, averaged over the SMs), and kernels
       run one after another, so their per-unit counts add: ``"sum"``. (For ``.min``/``.max``
       the sum of per-launch extremes bounds the extreme of the sum; exact for one launch.)
    5. ``launch__*`` and ``device__*`` attributes (grid size, registers, device limits) are
       properties of a launch, not accumulated quantities: ``"duration-weighted mean"``.
    6. Anything else (derived metrics, user names) is decided by ``unit`` when given: an amount
       (ns, byte, cycle, inst, ...) -> ``"sum (unknown metric kind)"``, a rate or fraction
       (%, x/second, Hz, ratio) -> ``"duration-weighted mean (unknown metric kind)"``; without a
       unit -> ``"duration-weighted mean (unknown metric kind)"``, because a mean of k values of a
       count is off by the factor k but stays inside the range of the launches, while a sum of
       percentages produces impossible values. The suffix makes the guess visible.

    Args:
        metric: an Nsight Compute metric name, e.g. ``"dram__bytes_read.sum"``.
        unit: the metric's unit if known (``"ns"``, ``"%"``, ``"byte"``, ``"byte/second"``);
            only consulted for names rule 1-5 do not recognise.

    Returns:
        ``"sum"`` or ``"duration-weighted mean"``, each possibly followed by
        ``" (unknown metric kind)"``. (:func:`launches_to_runs` reports ``"single"`` for one
        launch and ``"mean (no duration to weight)"`` when no duration was collected.)
    """
    name = str(metric).strip()
    base = name.split(":")[-1]  # "breakdown:sm__throughput.avg.pct..." -> the metric itself
    if base.startswith(_DURATION_BASES):
        return RULE_SUM
    parts = base.split(".")
    if "__" in parts[0] and len(parts) >= 2:
        # Find the rollup; everything after it is the sub-metric chain.
        rollup_at = next((i for i, p in enumerate(parts[1:], 1) if p in _ROLLUPS), None)
        tail = parts[rollup_at + 1:] if rollup_at is not None else parts[1:]
        if any(_RATE_SUBMETRIC.match(p) for p in tail):
            return RULE_WEIGHTED
        if rollup_at is not None and not tail:
            return RULE_SUM
    if base.startswith(("launch__", "device__")):
        return RULE_WEIGHTED
    if unit is not None and isinstance(unit, str) and unit.strip():
        u = unit.strip()
        if _INTENSIVE_UNIT.search(u):
            return RULE_WEIGHTED + UNKNOWN_KIND_NOTE
        if _EXTENSIVE_UNIT.match(u):
            return RULE_SUM + UNKNOWN_KIND_NOTE
    return RULE_WEIGHTED + UNKNOWN_KIND_NOTE
