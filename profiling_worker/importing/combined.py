"""Per-run rows nsight-python already combined across kernels (``Kernel`` = ``a|b``, the user's
``combine_kernel_metrics``, typically ``lambda x, y: x + y``).

A sum is right for durations, bytes and counts, and wrong for percentages of peak, rates and
averages (two kernels at 88 % DRAM throughput become 176 %). With CSVs only, such a value is
never kept: it is re-derived where its inputs are in the file, else left out (NaN) with the
reason. The rules of :func:`~profiling_worker.bundle.stats.combine_rules.combine_rule` decide which
metrics add. (With the ``.ncu-rep`` beside the CSVs, the assembler recomputes every metric per
launch instead.)

Re-derivations (values in the column's own unit):

* ``<counter>.per_second`` = summed ``<counter>`` (or ``.max`` / ``.sum`` of it) / summed
  ``gpu__time_duration.sum``; e.g. the SM clock ``gpc__cycles_elapsed.avg.per_second`` from
  ``gpc__cycles_elapsed.max`` cycles and the duration.
* ``dram__throughput.avg.pct_of_peak_sustained_elapsed`` = summed DRAM bytes (``dram__bytes.sum``,
  or read + write) / duration / peak, the peak being ``dram__bytes.sum.peak_sustained``
  (byte/cycle) x ``dram__cycles_elapsed.avg.per_second`` when collected (device constants, so
  their sums over k kernels are divided by k), else the GPU's datasheet DRAM bandwidth
  (:mod:`profiling_worker.bundle.schema.peaks`; the note says which).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from profiling_worker.bundle.stats.combine_rules import RULE_SUM, combine_rule
from profiling_worker.bundle.stats.units import normalise_unit
from profiling_worker.bundle.schema import columns as C, peaks
from profiling_worker.bundle.schema.metrics import (DRAM_BYTES, DRAM_HZ, DRAM_PCT,
                                                    DRAM_PEAK_PER_CYCLE, DRAM_READ, DRAM_WRITE)
from profiling_worker.bundle.number_text import counted



def _hz(value: float, unit: object) -> float:
    """A rate in its column unit -> per second (NaN when the unit is not known)."""
    if not isinstance(unit, str) or not unit:
        return np.nan
    scaled, new = normalise_unit(float(value), unit)
    return float(scaled) if new in ("Hz", "byte/s") else np.nan


def _dram_bytes(run: dict[str, tuple[float, object]]) -> tuple[float, str] | None:
    if DRAM_BYTES in run:
        return run[DRAM_BYTES][0], DRAM_BYTES
    if DRAM_READ in run and DRAM_WRITE in run:
        return run[DRAM_READ][0] + run[DRAM_WRITE][0], f"({DRAM_READ} + {DRAM_WRITE})"
    return None


def _dram_peak(run: dict[str, tuple[float, object]], k: int,
               datasheet: peaks.DevicePeaks | None) -> tuple[float, str] | None:
    """DRAM peak in byte/s and how it was had."""
    if {DRAM_PEAK_PER_CYCLE, DRAM_HZ} <= run.keys():
        clock_hz = _hz(run[DRAM_HZ][0] / k, run[DRAM_HZ][1])
        peak = run[DRAM_PEAK_PER_CYCLE][0] / k * clock_hz
        if np.isfinite(peak) and peak > 0:
            return peak, f"{DRAM_PEAK_PER_CYCLE} x {DRAM_HZ}"
    if datasheet is not None:
        return datasheet.dram_gbps * 1e9, (f"the {datasheet.name} datasheet DRAM bandwidth "
                                           f"{datasheet.dram_gbps:,.0f} GB/s")
    return None


def _rederive(metric: str, unit: object, run: dict[str, tuple[float, object]],
              k: int, datasheet: peaks.DevicePeaks | None) -> tuple[float, str] | None:
    """(value, how) of an intensive metric from the run's summed extensive ones, or None."""
    t_ns = run.get(C.GPU_TIME, (np.nan, None))[0]
    if not np.isfinite(t_ns) or t_ns <= 0:
        return None
    if metric.endswith(".per_second"):
        base = metric[:-len(".per_second")]
        for source in (base, base.replace(".avg", ".max"), base.replace(".avg", ".sum")):
            if source in run and combine_rule(source) == RULE_SUM:
                per_s = run[source][0] / (t_ns * 1e-9)
                unit_hz = _hz(1.0, unit)
                if np.isfinite(unit_hz):
                    return per_s / unit_hz, f"{source} / {C.GPU_TIME}"
    if metric == DRAM_PCT:
        dram, peak = _dram_bytes(run), _dram_peak(run, k, datasheet)
        if dram is not None and peak is not None:
            return (100.0 * dram[0] / (t_ns * 1e-9) / peak[0],
                    f"{dram[1]} / {C.GPU_TIME} / {peak[1]}")
    return None


def fix_combined_runs(runs: pd.DataFrame, gpu_name: str | None = None
                      ) -> tuple[pd.DataFrame, list[str]]:
    """Re-derive or leave out every summed intensive value of the per-run rows.

    Args:
        runs: the runs table (Annotation, Config, Run, Metric, Value, Unit, Kernels,
            CombineRule, ...).
        gpu_name: the GPU the files name (nsight-python's ``GPU`` column), for its datasheet
            DRAM bandwidth when the files hold no DRAM peak counters.

    Returns:
        (runs, notes): the table with those values replaced (CombineRule says how) or NaN,
        and one note per metric saying which and why.
    """
    combined = runs[C.KERNELS] > 1
    if not combined.any():
        return runs, []
    runs = runs.copy()
    intensive = combined & np.array([combine_rule(m, u) != RULE_SUM and
                                     not combine_rule(m, u).startswith(RULE_SUM)
                                     for m, u in zip(runs[C.METRIC], runs[C.UNIT])])
    datasheet = peaks.match_device(gpu_name) if gpu_name else None
    done: dict[str, str] = {}
    lost: dict[str, int] = {}
    keys = [C.ANNOTATION, C.CONFIG, C.RUN]
    for _, group in runs[combined].groupby(keys, sort=False):
        values = {m: (v, u) for m, v, u in zip(group[C.METRIC], group[C.VALUE], group[C.UNIT])}
        k = int(group[C.KERNELS].max())
        for idx in group.index[intensive[group.index]]:
            metric, unit = str(runs.at[idx, C.METRIC]), runs.at[idx, C.UNIT]
            got = _rederive(metric, unit, values, k, datasheet)
            if got is None:
                runs.at[idx, C.VALUE] = np.nan
                lost[metric] = lost.get(metric, 0) + 1
            else:
                runs.at[idx, C.VALUE] = got[0]
                runs.at[idx, C.COMBINE_RULE] = f"re-derived: {got[1]}"
                done[metric] = got[1]
    notes = [f"{m}: nsight-python summed it over the kernels of each run (combine_kernel_metrics);"
             f" re-derived as {how}" for m, how in done.items()]
    notes += [f"{m}: nsight-python summed it over the kernels of {counted(n, 'run')} "
              "(combine_kernel_metrics); a sum of percentages or rates is no value, and the file "
              "lacks what "
              "would re-derive it, so it is left out there (import the .ncu-rep too to have it "
              "per launch)" for m, n in lost.items()]
    return runs, notes


def blank_combined_agg(agg: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Aggregated rows written by nsight-python for combined kernels: intensive values are
    left out (the per-run inputs to re-derive them are not in a processed_data file)."""
    mask = (agg[C.KERNELS] > 1) & np.array([not combine_rule(m, u).startswith(RULE_SUM)
                                           for m, u in zip(agg[C.METRIC], agg[C.UNIT])])
    if not mask.any():
        return agg, []
    agg = agg.copy()
    agg.loc[mask, [C.AVG, C.STD, C.MIN, C.MAX, C.MEDIAN, C.CI95_LOWER, C.CI95_UPPER,
                   C.RSD]] = np.nan
    names = ", ".join(dict.fromkeys(agg.loc[mask, C.METRIC]))
    return agg, [f"{names}: nsight-python summed these over several kernels (combine_kernel_"
                 "metrics) and only the aggregated file was given, so they are left out"]


__all__ = ["fix_combined_runs", "blank_combined_agg"]
