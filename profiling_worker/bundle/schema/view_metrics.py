"""Each view's metric set, declared once, next to the sidebar preset that collects it.

The sidebar's presets (:data:`METRIC_PRESETS`), the "run it with the ... preset" hints
(:data:`PRESET_OF`), the metrics a view reads and the metrics whose plausibility notes its page
shows all derive from these declarations. A metric a view shows as it is (its mean, in its
unit) is one entry of ``shown``: the view's table gets the column, and NaN where a job did not
collect it. Names are Nsight Compute metric names (:mod:`profiling_worker.bundle.schema.metrics`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from profiling_worker.bundle.schema import columns as C, metrics as M


@dataclass(frozen=True)
class ViewMetrics:
    """The metrics one view reads.

    Attributes:
        preset: the sidebar preset that collects ``needs`` and ``collects``.
        needs: without these the view says what is missing and which preset collects them.
        collects: also collected by ``preset``; the view shows them when present.
        reads: shown when present, collected by another preset or a job's own metric list.
        shown: column name -> metric (one of the above) shown as it is, NaN where absent.
    """

    preset: str
    needs: tuple[str, ...] = ()
    collects: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    shown: Mapping[str, str] = field(default_factory=dict)

    @property
    def metrics(self) -> tuple[str, ...]:
        """Every metric the view reads (its page's plausibility notes cover these and the
        job's duration metric), in declaration order."""
        return tuple(dict.fromkeys((*self.needs, *self.collects, *self.reads)))


#: Durations only: every view draws them.
TIMING = ViewMetrics("timing")
#: Bound view: SM % vs DRAM % of peak, the SM clock, achieved DRAM bandwidth.
BOUND = ViewMetrics("bound", needs=(M.SM_PCT, M.DRAM_PCT), collects=(M.GPC_HZ,),
                    reads=(M.DRAM_READ, M.DRAM_WRITE))
#: Memory view: DRAM bytes read and written against the analytic bytes.
MEMORY = ViewMetrics("memory", needs=(M.DRAM_READ, M.DRAM_WRITE))
VIEWS = (TIMING, BOUND, MEMORY)

#: Metric presets offered by the sidebar: the job's duration and each view's own metrics.
METRIC_PRESETS: dict[str, tuple[str, ...]] = {
    v.preset: tuple(dict.fromkeys((C.GPU_TIME, *v.needs, *v.collects))) for v in VIEWS}
#: Metric -> the preset that collects it, for "run it with the ... preset" messages.
PRESET_OF: dict[str, str] = {m: v.preset for v in VIEWS for m in (*v.needs, *v.collects)}

__all__ = ["BOUND", "MEMORY", "METRIC_PRESETS", "PRESET_OF", "TIMING", "VIEWS", "ViewMetrics"]
