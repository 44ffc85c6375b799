"""Memory view: DRAM bytes read and written per annotation x config beside the analytic minimum,
and the unfused-vs-fused comparison (traffic and time ratios) per config (pure pandas)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.view_metrics import MEMORY

from app.core import frame_columns as F
from profiling_worker.bundle.loader import Bundle
from app.core.views.run_audit import with_outcome
from app.core.metrics import (DRAM_READ, DRAM_WRITE, MissingData, annotation_order, keys_of,
                              missing_metric, wide_means, with_labels)

#: Measured / analytic outside [1 - GAP, 1 + GAP] gets an explanation.
GAP = 0.05
BELOW = ("below the analytic minimum: output still dirty in the L2 when the region ended is not "
         "written to DRAM inside it (L2 residue under-counts writes; a working set that fits the "
         "L2 may write nothing)")
BELOW_WARM = "; with cache_control none, inputs may also still be in the L2 from the last run"
ABOVE = ("above the analytic minimum: data re-read from DRAM (GEMM tiles read more than once), "
         "split-K partial sums or intermediate arrays of unfused kernels")
CLOSE = "within 5 % of the analytic minimum"


@dataclass(frozen=True)
class MemoryOptions:
    """Attributes:
        unfused / fused: the two annotations the fusion comparison puts side by side.
    """

    unfused: str = "unfused"
    fused: str = "fused"


def memory_frame(bundle: Bundle, options: MemoryOptions) -> pd.DataFrame:
    """Measured DRAM traffic per annotation x config.

    Returns:
        Annotation, Config, <params>, ConfigLabel, DramReadBytes, DramWriteBytes, DramBytes,
        AnalyticBytes (the kernel catalog's minimum; NaN without a work row),
        MeasuredOverAnalytic, TimeNs, MeasuredDramGBps (measured DramBytes / TimeNs), GapNote,
        and ``Run audit``, each pair's run audit badge as on the Size sweep
        (:func:`app.core.views.run_audit.with_outcome`; absent for a job without an audit).

    Raises:
        MissingData: the job did not collect dram__bytes_read.sum / dram__bytes_write.sum.
    """
    del options
    wide = wide_means(bundle, (*MEMORY.metrics, bundle.duration_metric))
    absent = tuple(m for m in MEMORY.needs if wide.empty or wide[m].isna().all())
    if absent:
        error = missing_metric(bundle, absent, "DRAM byte counters")
        if len(absent) == 1:  # half the traffic: a total from it would be too low
            (measured,) = {DRAM_READ, DRAM_WRITE} - set(absent)
            error = MissingData(f"This job measured {measured} but not {absent[0]}: DRAM "
                                "traffic is read + write, and a total from one of them would be "
                                "too low.", error.hint)
        raise error
    out = wide[keys_of(bundle, wide)].copy()
    out[F.DRAM_READ_BYTES] = wide[DRAM_READ].astype(float)
    out[F.DRAM_WRITE_BYTES] = wide[DRAM_WRITE].astype(float)
    out[F.DRAM_BYTES] = out[F.DRAM_READ_BYTES] + out[F.DRAM_WRITE_BYTES]
    out = _with_analytic(bundle, out)
    out[F.MEASURED_OVER_ANALYTIC] = out[F.DRAM_BYTES] / out[F.ANALYTIC_BYTES]
    out[F.TIME_NS] = wide[bundle.duration_metric].astype(float).to_numpy()
    out[F.ACHIEVED_GBPS] = out[F.DRAM_BYTES] / out[F.TIME_NS]
    warm = bundle.job_spec is not None and bundle.job_spec.cache_control == "none"
    out[F.GAP_NOTE] = [_gap_note(r, warm) for r in out[F.MEASURED_OVER_ANALYTIC]]
    return with_outcome(with_labels(out, bundle.parameters), bundle)


def _with_analytic(bundle: Bundle, out: pd.DataFrame) -> pd.DataFrame:
    """``out`` with AnalyticBytes, the kernel catalog's minimum per annotation x config (NaN
    without a work row)."""
    work = bundle.table(C.TABLE_WORK)
    if not work.empty and C.BYTES in work:
        return out.merge(work[[C.ANNOTATION, C.CONFIG, C.BYTES]], on=[C.ANNOTATION, C.CONFIG],
                         how="left").rename(columns={C.BYTES: F.ANALYTIC_BYTES})
    return out.assign(**{F.ANALYTIC_BYTES: np.nan})


def _durations_frame(bundle: Bundle) -> pd.DataFrame:
    """TimeNs and AnalyticBytes per annotation x config with DramBytes NaN: what a job without
    DRAM byte counters gives the fusion comparison (its time ratio needs only durations)."""
    wide = wide_means(bundle, (bundle.duration_metric,))
    out = wide[keys_of(bundle, wide)].copy()
    out[F.DRAM_BYTES] = np.nan
    out[F.TIME_NS] = wide[bundle.duration_metric].astype(float).to_numpy()
    return with_labels(_with_analytic(bundle, out), bundle.parameters)


def _gap_note(ratio: float, warm: bool) -> str:
    if ratio != ratio:
        return "no analytic byte count"
    if ratio < 1 - GAP:
        return BELOW + (BELOW_WARM if warm else "")
    if ratio > 1 + GAP:
        return ABOVE
    return CLOSE


def fusion_pairs(bundle: Bundle, catalog: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(unfused, fused) annotation pairs of the job that compute the same result, as the job's
    kernels declare them (``fusion_pairs`` of the catalog entry or user kernel; issue 11, case
    8: an fp32 and an fp16 matmul are not a fusion). Only pairs whose two annotations both have
    rows in the job.

    Args:
        catalog: kernel id -> entry with a ``fusion_pairs`` attribute (the worker's Kernel, the
            app's KernelInfo); kernels it lacks declare nothing.
    """
    present = set(annotation_order(bundle))
    pairs = (tuple(p) for k in (bundle.spec.kernels if bundle.spec else ())
             for p in getattr(catalog.get(k), "fusion_pairs", ()))
    return [(u, f) for u, f in dict.fromkeys(pairs) if u in present and f in present]


_UNFUSED, _FUSED = "_u", "_f"  # merge suffixes of the two annotations' columns


def fusion_frame(bundle: Bundle, options: MemoryOptions) -> pd.DataFrame:
    """Unfused vs fused per config.

    Returns:
        Config, <params>, ConfigLabel, UnfusedBytes, FusedBytes, TrafficRatio (fused / unfused),
        BytesSaved, UnfusedTimeNs, FusedTimeNs, TimeRatio (fused / unfused), TimeSavedNs,
        AnalyticBytes (minimum of the fused computation). Empty when the job lacks either
        annotation. A job without DRAM byte counters (a CUPTI job) gets the time columns, its
        byte columns NaN.
    """
    try:
        frame = memory_frame(bundle, options)
    except MissingData:
        frame = _durations_frame(bundle)
    names = set(frame[C.ANNOTATION])
    if options.unfused not in names or options.fused not in names:
        return pd.DataFrame()
    keys = [k for k in keys_of(bundle, frame) if k != C.ANNOTATION] + [F.CONFIG_LABEL]
    cols = [F.DRAM_BYTES, F.TIME_NS, F.ANALYTIC_BYTES]
    un = frame[frame[C.ANNOTATION] == options.unfused][keys + cols]
    fu = frame[frame[C.ANNOTATION] == options.fused][keys + cols]
    both = un.merge(fu, on=keys, suffixes=(_UNFUSED, _FUSED))
    out = both[keys].copy()
    out[F.UNFUSED_BYTES] = both[F.DRAM_BYTES + _UNFUSED]
    out[F.FUSED_BYTES] = both[F.DRAM_BYTES + _FUSED]
    out[F.TRAFFIC_RATIO] = out[F.FUSED_BYTES] / out[F.UNFUSED_BYTES]
    out[F.BYTES_SAVED] = out[F.UNFUSED_BYTES] - out[F.FUSED_BYTES]
    out[F.UNFUSED_TIME_NS] = both[F.TIME_NS + _UNFUSED]
    out[F.FUSED_TIME_NS] = both[F.TIME_NS + _FUSED]
    out[F.TIME_RATIO] = out[F.FUSED_TIME_NS] / out[F.UNFUSED_TIME_NS]
    out[F.TIME_SAVED_NS] = out[F.UNFUSED_TIME_NS] - out[F.FUSED_TIME_NS]
    out[F.ANALYTIC_BYTES] = both[F.ANALYTIC_BYTES + _FUSED]
    return out.reset_index(drop=True)


