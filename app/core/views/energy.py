"""Energy per kernel (issue 36), from NVML's total energy counter read before each run (the
``energy`` info collector, mJ, with the host time of each reading, ``energy_read_s``; see
profiling_worker/probes/collectors.py).

Method, per config: of its runs ``r0 .. rN`` (N >= 1 run-to-run intervals), the mean power is
``P = (E[rN] - E[r0]) / (t[rN] - t[r0])`` (W): the GPU's whole draw over N runs, gaps between
runs included, read by the host. The kernel's share of a run is estimated as ``P x`` its mean
duration (the duration metric): it assumes the GPU drew the window's mean power while the kernel
ran, so where the kernels fill less of the window (``BusyPct`` < 100 %: the rest is launch and
idle time, which draws less) the figure is low. NVML updates the counter every
:data:`COUNTER_UPDATE_MS` (measured on the H200: docs/energy-h200.md); a window shorter than
:data:`MIN_WINDOW_UPDATES` updates holds too few steps for its mean power to mean anything, and
the row says so (``Holds`` False). Where the job has no readings (the cpu backend, nsight-python
0.9.x, a GPU without the counter, a job without the ``energy`` collector) nothing is estimated:
the view raises :class:`~app.core.metrics.MissingData` saying "not recorded".

Power-capped runs: a run whose ``throttle_reasons`` collector (same job) had the SW power cap
(0x4) or HW power brake (0x80) bit set (NVML clocks-event reasons) is counted in ``CappedRuns``;
without that collector the column is empty (unknown, not "no").
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from profiling_worker.bundle.schema import columns as C

from profiling_worker.bundle.loader import Bundle
from profiling_worker.bundle.schema.spec import JobSpec
from app.core import numbers
from app.core.metrics import MissingData

ENERGY, ENERGY_READ, THROTTLE = "energy", "energy_read_s", "throttle_reasons"
#: NVML clocks-event reasons that mean the power limit held the clocks back.
POWER_CAP_BITS = 0x4 | 0x80
#: The counter's update period (ms), which NVML does not document: measured on the H200 in
#: device run h200 1205-s7run1 (benchmarks/energy_counter.py; median 99.9 ms idle, 100.0 ms
#: busy, 96-101 ms; benchmarks/h200/1205-s7run1/energy_counter.json, docs/energy-h200.md).
COUNTER_UPDATE_MS = 100.0
#: A window needs this many counter updates for its mean power to hold (~10 % quantisation).
MIN_WINDOW_UPDATES = 10

POWER_W = "MeanPowerW"
WINDOW_S = "WindowS"
BUSY_PCT = "BusyPct"
ENERGY_J = "EnergyJPerRun"
J_PER_TFLOP = "JPerTFLOP"
J_PER_GB = "JPerGB"
TFLOPS_PER_W = "TFLOPsPerW"
CAPPED = "CappedRuns"
HOLDS = "Holds"

NOT_RECORDED = ("Energy: not recorded. It needs NVML's total energy counter read before each "
                "run: a GPU job (CUPTI, or Nsight Compute attach mode) with the 'energy' info "
                "collector, on a GPU that has the counter (Volta and later).")


def asked(bundle: Bundle) -> bool:
    """Whether the job asked for energy readings (the 'energy' info collector in its spec) or
    holds some: where it did neither (every cpu or events job, a GPU job without the
    collector), the pages say nothing of energy rather than "not recorded" on every job."""
    if isinstance(bundle.spec, JobSpec) and ENERGY in bundle.spec.collectors:  # an import: no
        return True
    coll = bundle.table(C.TABLE_COLLECTORS)
    return not coll.empty and C.COLLECTOR in coll and bool((coll[C.COLLECTOR] == ENERGY).any())


def _per_config(coll: pd.DataFrame) -> pd.DataFrame:
    """Config, Runs, WindowS, MeanPowerW, CappedRuns from the collectors table."""
    wide = coll[coll[C.COLLECTOR].isin([ENERGY, ENERGY_READ, THROTTLE])].pivot_table(
        index=[C.CONFIG, C.RUN], columns=C.COLLECTOR, values=C.VALUE, aggfunc="first")
    wide = wide.dropna(subset=[ENERGY, ENERGY_READ]).reset_index().sort_values([C.CONFIG, C.RUN])
    rows = []
    for config, g in wide.groupby(C.CONFIG):
        if len(g) < 2:
            continue
        window = float(g[ENERGY_READ].iloc[-1] - g[ENERGY_READ].iloc[0])
        joules = float(g[ENERGY].iloc[-1] - g[ENERGY].iloc[0]) / 1e3
        capped = (int(((g[THROTTLE].astype("int64") & POWER_CAP_BITS) > 0).sum())
                  if THROTTLE in g and g[THROTTLE].notna().all() else None)
        rows.append({C.CONFIG: config, C.RUNS: len(g) - 1, WINDOW_S: window,
                     POWER_W: joules / window if window > 0 else np.nan, CAPPED: capped})
    return pd.DataFrame(rows, columns=[C.CONFIG, C.RUNS, WINDOW_S, POWER_W, CAPPED])


def energy_frame(bundle: Bundle) -> pd.DataFrame:
    """Per annotation x config: Annotation, Config, <params>, Runs (run-to-run intervals),
    WindowS (s), MeanPowerW (W), BusyPct (the region's time / a run's share of the window, %),
    EnergyJPerRun (J), JPerTFLOP, JPerGB (J per 1e12 FLOPs / per 1e9 bytes of the kernel's
    declared work; NaN without a formula), TFLOPsPerW, CappedRuns (None: unknown), Holds.

    Raises:
        MissingData: the job recorded no energy readings ("not recorded").
    """
    coll = bundle.table(C.TABLE_COLLECTORS)
    if coll.empty or C.COLLECTOR not in coll or not (coll[C.COLLECTOR] == ENERGY).any():
        raise MissingData(NOT_RECORDED, "run a GPU job with the 'energy' collector (sidebar: "
                                        "Options, Info collectors)")
    per = _per_config(coll)
    if per.empty:
        raise MissingData(NOT_RECORDED + " This job has fewer than 2 readings per config.")
    agg = bundle.table(C.TABLE_AGGREGATED)
    params = list(bundle.spec.parameter_names) if bundle.spec is not None else []
    times = agg[agg[C.METRIC] == bundle.duration_metric][[C.ANNOTATION, C.CONFIG, *params,
                                                         C.AVG]]
    out = times.merge(per, on=C.CONFIG, how="inner")
    work = bundle.table(C.TABLE_WORK)
    if not work.empty and {C.FLOPS, C.BYTES} <= set(work.columns):
        out = out.merge(work[[C.ANNOTATION, C.CONFIG, C.FLOPS, C.BYTES]],
                        on=[C.ANNOTATION, C.CONFIG], how="left")
    else:
        out[C.FLOPS] = out[C.BYTES] = np.nan
    seconds = out[C.AVG].astype(float) * 1e-9  # the duration metric is in ns
    run_s = out[WINDOW_S] / out[C.RUNS]
    out[BUSY_PCT] = 100.0 * out.groupby(C.CONFIG)[C.AVG].transform("sum") * 1e-9 / run_s
    out[ENERGY_J] = out[POWER_W] * seconds
    flops, nbytes = out[C.FLOPS].astype(float), out[C.BYTES].astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out[J_PER_TFLOP] = out[ENERGY_J] / (flops / 1e12).where(flops > 0)
        out[J_PER_GB] = out[ENERGY_J] / (nbytes / 1e9).where(nbytes > 0)
        out[TFLOPS_PER_W] = (flops / seconds / 1e12).where(flops > 0) / out[POWER_W]
    out[HOLDS] = out[WINDOW_S] >= MIN_WINDOW_UPDATES * COUNTER_UPDATE_MS / 1e3
    return out.drop(columns=[C.FLOPS, C.BYTES]).reset_index(drop=True)


def method_note(frame: pd.DataFrame) -> str:
    """One sentence under the table: the method and, when some rows do not hold, why."""
    short = int((~frame[HOLDS]).sum())
    said = ("Mean power over each config's runs (NVML total energy counter, read before each "
            "run) x the region's mean time; the GPU's draw between runs is in the mean, so "
            "with BusyPct under 100 % the kernel's own share is under-stated.")
    if short:
        said += (f" {numbers.counted(short, 'row')} "
                 f"{'does' if short == 1 else 'do'} not hold: their window is shorter than "
                 f"{MIN_WINDOW_UPDATES} counter updates ({MIN_WINDOW_UPDATES * COUNTER_UPDATE_MS:g}"
                 " ms); give the job more runs.")
    capped = frame[CAPPED].dropna()
    if (capped > 0).any():
        said += (" Power-capped runs are counted in CappedRuns: their energy is that of capped "
                 "clocks.")
    return said
