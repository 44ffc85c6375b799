"""Roofline view: achieved FLOP/s against arithmetic intensity per annotation x config, with the
memory and compute ceilings of the region's dtype (dense tensor peaks) and the source of each.

FLOPs come from the job's counters when it collected them (tensor ``sm__ops_path_tensor_src_*``
counts FLOPs, an FMA counting 2; FP32 is ``2 x ffma + fadd + fmul``), else from the kernel
catalog's analytic count (``work`` table). Bytes are measured DRAM bytes (read + write) when
collected, else the analytic minimum. Each row says which it used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from profiling_worker.bundle.schema import metrics as M
from profiling_worker.bundle.schema import columns as C, peaks

from app.core import derived, frame_columns as F
from profiling_worker.bundle.loader import Bundle
from app.core.environment import gpu_name
from app.core.views.run_audit import with_outcome
from profiling_worker.bundle.schema.manifest import JobStatus
from app.core.metrics import (DURATIONS, DRAM_READ, DRAM_WRITE, GPC_HZ, MissingData, SM_HZ,
                              no_values_text, missing_metric,
                              available_metrics, keys_of, wide_means, with_labels)

TENSOR_FLOP_COUNTERS = (M.TENSOR_FP16,
                        M.TENSOR_BF16,
                        M.TENSOR_TF32,
                        M.TENSOR_FP8)
FP32_COUNTERS = {  # metric -> FLOP per counted instruction (thread level)
    f"{unit}__sass_thread_inst_executed_op_{op}_pred_on.sum": weight
    for unit in ("smsp", "sm") for op, weight in (("ffma", 2.0), ("fadd", 1.0), ("fmul", 1.0))}
AUTO, ANALYTIC, COUNTER, MEASURED = "auto", "analytic", "counter", "measured"


@dataclass(frozen=True)
class RooflineOptions:
    """Attributes:
        flops_source: ``auto`` (counters when collected, else analytic), ``analytic``, ``counter``.
        bytes_source: ``auto`` (measured DRAM when collected, else analytic), ``analytic``,
            ``measured``.
    """

    flops_source: str = AUTO
    bytes_source: str = AUTO


def counter_flops(values: dict[str, float]) -> tuple[float, str]:
    """FLOPs from collected counters and the formula used; (NaN, "") when none were collected."""
    terms, total = [], 0.0
    collected = False
    for name in TENSOR_FLOP_COUNTERS:
        if _num(values.get(name)):
            collected = True
            total += values[name]
            terms += [name] if values[name] else []
    fp32 = [(n, w) for n, w in FP32_COUNTERS.items() if _num(values.get(n))]
    if any(n.startswith("smsp__") for n, _ in fp32):  # same counts at sm and smsp level
        fp32 = [(n, w) for n, w in fp32 if n.startswith("smsp__")]
    for name, weight in fp32:
        collected = True
        total += weight * values[name]
        terms += [f"{weight:g}×{name}" if weight != 1 else name] if values[name] else []
    if not collected:
        return np.nan, ""
    return total, "counters: " + (" + ".join(terms) if terms else "all zero")


def _num(value: float | None) -> bool:
    return value is not None and value == value


def _tflops(flops: float, time_ns: float) -> float:
    """``flops`` over ``time_ns`` in TFLOP/s; NaN for a duration of 0 or less (no rate: the
    run audit's timer check names such a duration)."""
    return flops / time_ns / 1e3 if time_ns > 0 else float("nan")


def roofline_frame(bundle: Bundle, options: RooflineOptions,
                   status: JobStatus | None = None) -> pd.DataFrame:
    """One roofline point per annotation x config. ``status``: the job's state as the page
    names it (:func:`app.ui.job_status.shown_status`: the job manager's, ahead of the
    manifest), which the sentence of a job without durations says; None: the manifest's.

    Returns:
        Annotation, Config, <params>, ConfigLabel, Dtype, Flops, FlopsSource, Bytes,
        BytesSource, TimeNs, AchievedTFLOPs (Flops over the mean time, as every page's
        throughput: app.core.derived), UsefulFlops (the kernel's formula, NaN without a work
        row), UsefulTFLOPs, CountedOverUseful (counted FLOPs / useful: > 1 where the library
        does padded work, NaN without counters), ArithmeticIntensity (FLOP/byte), SmClockMHz,
        Roof (the dtype's compute roof), DatasheetTFLOPs, PctOfDatasheet, ClockPeakTFLOPs,
        PctOfClockPeak, ClockPeakSource, DatasheetGBps, RidgeAI (datasheet compute / DRAM roof,
        FLOP/byte), Side (``memory`` below the ridge, ``compute`` above), DatasheetSource,
        and ``Run audit``, each point's run audit badge as on the Size sweep
        (:func:`app.core.views.run_audit.with_outcome`; absent for a job without an audit).

    Raises:
        MissingData: no durations, or no FLOP count (no work table and no FLOP counters).
    """
    metrics = tuple(dict.fromkeys((bundle.duration_metric, DRAM_READ, DRAM_WRITE, GPC_HZ, SM_HZ,
                                   *TENSOR_FLOP_COUNTERS, *FP32_COUNTERS,
                                   *(m for names, _ in peaks.COUNTER_PEAKS.values()
                                     for m in names))))
    present = set(available_metrics(bundle))
    wide = wide_means(bundle, tuple(m for m in metrics if m in present))
    if wide.empty or bundle.duration_metric not in wide:
        status = status or bundle.status
        if status is not JobStatus.DONE:  # when they come, if they come
            raise MissingData(no_values_text(DURATIONS, status, "the roofline", bundle.error))
        raise MissingData("This job has no durations to put on a roofline.",
                          "Pick a job that finished.")
    work = bundle.table(C.TABLE_WORK)
    if not work.empty:
        wide = wide.merge(work[[C.ANNOTATION, C.CONFIG, C.FLOPS, C.BYTES, C.DTYPE]],
                          on=[C.ANNOTATION, C.CONFIG], how="left")
    # the duration column found once and the rows read as dicts: a Series per row and a
    # string search of its index per row were most of a 1,000-config sweep's frame (issue 37)
    duration = wide.columns[wide.columns.str.contains("time_duration")][0]
    rows = [_point(r, options, duration) for r in wide.to_dict("records")]
    out = pd.concat([wide[keys_of(bundle, wide)].reset_index(drop=True),
                     pd.DataFrame(rows)], axis=1)
    _chosen_source_measured(out, bundle, options)
    if out[C.FLOPS].isna().all():
        raise MissingData("This job has no FLOP counts: its kernels declare none and it "
                          "collected no FLOP counters.",
                          "Run a catalog kernel with FLOP formulas, or add the roofline "
                          f"counters ({M.TENSOR_FP16}, {M.FFMA} ...).")
    _add_peaks(out, bundle)
    return with_outcome(with_labels(out, bundle.parameters), bundle)



def _chosen_source_measured(out: pd.DataFrame, bundle: Bundle, options: RooflineOptions) -> None:
    """Raise :class:`MissingData` when the user chose measured bytes or counted FLOPs and the
    job measured none: every point would lack its intensity or TFLOP/s without a word."""
    if options.bytes_source == MEASURED and out[C.BYTES].isna().all():
        error = missing_metric(bundle, (DRAM_READ, DRAM_WRITE), "measured DRAM bytes")
        raise MissingData(str(error), f"{error.hint} Or choose Bytes: auto or analytic.")
    if options.flops_source == COUNTER and out[C.FLOPS].isna().all():
        error = missing_metric(bundle, (*TENSOR_FLOP_COUNTERS, *FP32_COUNTERS), "FLOP counters")
        raise MissingData(str(error), f"{error.hint} Or choose FLOPs: auto or analytic.")

def _point(row: dict[Any, Any], options: RooflineOptions, duration: str) -> dict[str, object]:
    values = {str(k): float(v) for k, v in row.items() if isinstance(v, (int, float, np.number))}
    counted, formula = counter_flops(values)
    analytic = values.get(C.FLOPS, np.nan)
    use_counter = options.flops_source == COUNTER or (options.flops_source == AUTO
                                                      and _num(counted))
    flops, fsrc = (counted, formula) if use_counter else (analytic, "analytic (kernel catalog)")
    measured = values.get(DRAM_READ, np.nan) + values.get(DRAM_WRITE, np.nan)
    use_measured = options.bytes_source == MEASURED or (options.bytes_source == AUTO
                                                        and _num(measured))
    nbytes, bsrc = ((measured, "measured DRAM bytes (read + write)") if use_measured
                    else (values.get(C.BYTES, np.nan), "analytic minimum bytes"))
    time_ns = values.get(duration, np.nan)
    clock = values[SM_HZ] if _num(values.get(SM_HZ)) else values.get(GPC_HZ, np.nan)
    return {C.DTYPE: row.get(C.DTYPE, ""), C.FLOPS: flops, F.FLOPS_SOURCE: fsrc,
            C.BYTES: nbytes, F.BYTES_SOURCE: bsrc, F.TIME_NS: time_ns,
            F.ACHIEVED_TFLOPS: _tflops(flops, time_ns),
            F.USEFUL_FLOPS: analytic, F.USEFUL_TFLOPS: _tflops(analytic, time_ns),
            F.COUNTED_OVER_USEFUL: counted / analytic if _num(counted) and analytic else np.nan,
            F.ARITHMETIC_INTENSITY: flops / nbytes if nbytes else np.nan,
            F.SM_CLOCK_MHZ: clock / 1e6, "_values": values}


def _add_peaks(out: pd.DataFrame, bundle: Bundle) -> None:
    device = peaks.match_device(gpu_name(bundle.manifest.get("environment") or {},
                                         bundle.gpu_index))
    dram = peaks.datasheet_dram(device)
    roof, sheet_v, sheet_src, clock_v, clock_src = [], [], [], [], []
    for dtype_cell, values, mhz in zip(out[C.DTYPE], out["_values"], out[F.SM_CLOCK_MHZ]):
        dtype = str(dtype_cell or "")
        sheet = peaks.datasheet_compute(device, dtype)
        clock = (peaks.counter_peak(dtype, values)
                 or peaks.clock_scaled_peak(device, dtype, mhz * 1e6))
        roof.append(peaks.DTYPE_ROOFS.get(dtype, ("", f"unknown dtype {dtype!r}", False))[1])
        sheet_v.append(sheet.value if sheet else np.nan)
        sheet_src.append(sheet.source if sheet else "GPU or dtype not in the datasheet table")
        clock_v.append(clock.value if clock else np.nan)
        clock_src.append(clock.source if clock else "no clock collected")
    del out["_values"]
    out[F.ROOF] = roof
    out[F.DATASHEET_TFLOPS] = sheet_v
    out[F.PCT_OF_DATASHEET] = 100.0 * out[F.ACHIEVED_TFLOPS] / out[F.DATASHEET_TFLOPS]
    out[F.CLOCK_PEAK_TFLOPS] = clock_v
    out[F.PCT_OF_CLOCK_PEAK] = 100.0 * out[F.ACHIEVED_TFLOPS] / out[F.CLOCK_PEAK_TFLOPS]
    out[F.CLOCK_PEAK_SOURCE] = clock_src
    out[F.DATASHEET_GBPS] = dram.value if dram else np.nan
    out[F.RIDGE_AI] = out[F.DATASHEET_TFLOPS] * 1e3 / out[F.DATASHEET_GBPS]
    out[F.SIDE] = np.where(out[F.ARITHMETIC_INTENSITY] < out[F.RIDGE_AI], "memory", "compute")
    out.loc[out[F.RIDGE_AI].isna(), F.SIDE] = ""
    out[F.DATASHEET_SOURCE] = sheet_src


#: A roofline frame's achieved throughputs, written in its chart's FLOP/s unit in its table.
RATE_COLUMNS = (F.ACHIEVED_TFLOPS, F.USEFUL_TFLOPS)


def rate_column(column: str, unit: str) -> str:
    """The name of a column of :data:`RATE_COLUMNS` in ``unit`` (a FLOP/s unit of
    :func:`app.core.numbers.rate_step`), the unit in the name as every such column has it:
    ``AchievedTFLOPs`` in TFLOP/s, ``AchievedMFLOPs`` in MFLOP/s."""
    return column.removesuffix("TFLOPs") + unit.replace("/s", "s")


def roofline_table(points: pd.DataFrame, ceilings: pd.DataFrame) -> pd.DataFrame:
    """The roofline's table and CSV: :func:`roofline_frame` with its achieved throughputs
    (:data:`RATE_COLUMNS`) in the unit of its chart's axis
    (:func:`app.core.derived.roofline_rate_step`, ``ceilings`` from :func:`roofline_ceilings`),
    each column named in it (:func:`rate_column`): a GPU job's stay ``AchievedTFLOPs`` and
    ``UsefulTFLOPs`` as they are; a cpu job's 4.2e-5 TFLOP/s is 42 in ``AchievedMFLOPs``, as
    One kernel's tile and the chart read it. The datasheet and clock peaks (TFLOP/s, the
    roofs' unit) and the % of them are unchanged."""
    factor, unit = derived.roofline_rate_step(points, with_roofs=not ceilings.empty)
    if unit == "TFLOP/s":
        return points
    present = [c for c in RATE_COLUMNS if c in points]
    out = points.copy()
    out[present] = out[present].astype(float) * factor
    return out.rename(columns={c: rate_column(c, unit) for c in present})


def roofline_ceilings(frame: pd.DataFrame) -> pd.DataFrame:
    """The ceilings to draw: one DRAM roof and one compute roof per dtype in ``frame``.

    Returns:
        Ceiling, Kind (``memory`` GB/s or ``compute`` TFLOP/s), Value, Unit, Source; datasheet
        roofs only (the clock-adjusted peaks vary per point and are columns of the frame).
    """
    rows = []
    if frame[F.DATASHEET_GBPS].notna().any():
        rows.append({F.CEILING: "DRAM bandwidth (datasheet)", F.KIND: "memory",
                     C.VALUE: float(frame[F.DATASHEET_GBPS].iloc[0]), C.UNIT: "GB/s",
                     F.SOURCE: str(frame[F.DATASHEET_SOURCE].iloc[0])})
    known = frame[frame[F.DATASHEET_TFLOPS].notna()]
    for _, group in known.groupby(F.DATASHEET_TFLOPS, sort=False):  # FP16 and BF16 share one
        roofs = list(dict.fromkeys(group[F.ROOF]))
        rows.append({F.CEILING: " / ".join(roofs) + " (datasheet)", F.KIND: "compute",
                     C.VALUE: float(group[F.DATASHEET_TFLOPS].iloc[0]), C.UNIT: "TFLOP/s",
                     F.SOURCE: str(group[F.DATASHEET_SOURCE].iloc[0])})
    return pd.DataFrame(rows, columns=[F.CEILING, F.KIND, C.VALUE, C.UNIT, F.SOURCE])
