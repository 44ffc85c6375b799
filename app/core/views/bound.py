"""Bound view: SM % vs DRAM % of peak per annotation x config with a "limited by" label, and
achieved DRAM bandwidth against the device peak (datasheet and, when collected, counters)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from profiling_worker.bundle.schema import peaks
from profiling_worker.bundle.schema.view_metrics import BOUND

from app.core import frame_columns as F
from profiling_worker.bundle.loader import Bundle
from app.core.environment import gpu_name
from app.core.views.run_audit import with_outcome
from app.core.metrics import (DRAM_PCT, DRAM_READ, DRAM_WRITE, GPC_HZ, SM_PCT, keys_of,
                              missing_metric, wide_means, with_labels)

#: Both SM and DRAM below this % of peak: neither unit is busy, so latency, launch overhead or
#: too little parallelism limits the kernel (NCU's own guidance: below ~60 % of peak, look at
#: latency, not throughput).
LATENCY_THRESHOLD_PCT = 60.0


@dataclass(frozen=True)
class BoundOptions:
    """Attributes:
        latency_threshold_pct: both SM and DRAM % below this -> "latency / launch bound".
    """

    latency_threshold_pct: float = LATENCY_THRESHOLD_PCT


def limited_by(sm_pct: float, dram_pct: float, threshold: float = LATENCY_THRESHOLD_PCT) -> str:
    """``compute (SM)``, ``memory (DRAM)`` or ``latency / launch`` (both below ``threshold``)."""
    if max(sm_pct, dram_pct) < threshold:
        return "latency / launch (SM and DRAM < {:g} %)".format(threshold)
    return "compute (SM)" if sm_pct >= dram_pct else "memory (DRAM)"


def bound_frame(bundle: Bundle, options: BoundOptions) -> pd.DataFrame:
    """SM and DRAM throughput (% of peak) per annotation x config, with bandwidth cross-checks.

    Returns:
        Annotation, Config, <params>, ConfigLabel, SmPct, DramPct, LimitedBy, TimeNs,
        SmClockMHz (gpc__cycles_elapsed.avg.per_second / 1e6; NaN if not collected), DramBytes
        (read + write; NaN if not collected), MeasuredDramGBps (measured DramBytes / TimeNs),
        DatasheetGBps and
        PctOfDatasheetGBps (NaN for an unknown GPU), CounterGBps and PctOfCounterGBps
        (dram__bytes.sum.peak_sustained x dram__cycles_elapsed.avg.per_second, NaN unless the job
        collected both), PeakSource, then one column per entry of ``view_metrics.BOUND.shown``
        (the metric's mean as it is; NaN if not collected), and ``Run audit``, each pair's run
        audit badge as on the Size sweep (:func:`app.core.views.run_audit.with_outcome`;
        absent for a job without an audit).

    Raises:
        MissingData: the job has no SM % / DRAM % metrics.
    """
    metrics = tuple(dict.fromkeys((*BOUND.metrics, bundle.duration_metric, *peaks.DRAM_PEAK)))
    wide = wide_means(bundle, metrics)
    if wide.empty or wide[list(BOUND.needs)].isna().all().any():
        raise missing_metric(bundle, BOUND.needs, "SM / DRAM throughput metrics")
    out = wide[keys_of(bundle, wide)].copy()
    out[F.SM_PCT] = wide[SM_PCT].astype(float)
    out[F.DRAM_PCT] = wide[DRAM_PCT].astype(float)
    out[F.LIMITED_BY] = [limited_by(s, d, options.latency_threshold_pct)
                    for s, d in zip(out[F.SM_PCT], out[F.DRAM_PCT])]
    out[F.TIME_NS] = wide[bundle.duration_metric].astype(float)
    out[F.SM_CLOCK_MHZ] = wide[GPC_HZ].astype(float) / 1e6
    out[F.DRAM_BYTES] = wide[DRAM_READ].astype(float) + wide[DRAM_WRITE].astype(float)
    out[F.ACHIEVED_GBPS] = out[F.DRAM_BYTES] / out[F.TIME_NS]  # bytes/ns = GB/s
    sheet = peaks.datasheet_dram(peaks.match_device(gpu_name(bundle.manifest.get("environment")
                                                             or {}, bundle.gpu_index)))
    out[F.DATASHEET_GBPS] = sheet.value if sheet else np.nan
    out[F.PCT_OF_DATASHEET_GBPS] = 100.0 * out[F.ACHIEVED_GBPS] / out[F.DATASHEET_GBPS]
    counter = [peaks.counter_dram_peak({m: r[m] for m in peaks.DRAM_PEAK})
               for _, r in wide.iterrows()]
    out[F.COUNTER_GBPS] = [p.value if p else np.nan for p in counter]
    out[F.PCT_OF_COUNTER_GBPS] = 100.0 * out[F.ACHIEVED_GBPS] / out[F.COUNTER_GBPS]
    out[F.PEAK_SOURCE] = [
        "; ".join(s for s in ((sheet.source if sheet else "GPU not in the datasheet table"),
                              (p.source if p else "")) if s) for p in counter]
    for column, metric in BOUND.shown.items():
        out[column] = wide[metric].astype(float)
    return with_outcome(with_labels(out, bundle.parameters), bundle)
