"""Clocks and thermal: the worker's NVML trace of the whole job, per-run info collector values
(sampled BEFORE each run) beside the kernel time, the SM clock each kernel ran at, and a
thermal_mode comparison of two jobs (pure pandas).

Throttle ("clocks event") reason bits are NVML's ``nvmlClocksEventReasons``
(https://docs.nvidia.com/deploy/nvml-api/group__nvmlClocksEventReasons.html), the values of
``nvmlDeviceGetCurrentClocksEventReasons`` that the worker's sampler records.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.spec import SPEC_DEFAULTS
from profiling_worker.bundle.schema.throttle_reasons import NVML_DOCS, THROTTLE_BITS

from app.core import derived
from profiling_worker.bundle.loader import Bundle
from app.core.environment import first_gpu
from app.core.metrics import (GPC_HZ, MissingData, in_job_order, keys_of, missing_metric,
                              with_labels)
from app.core import frame_columns as F
from app.core.frame_columns import (BEFORE_RUN, COLLECTOR_UNIT, COLLECTOR_VALUE, KERNEL_TIME,
                                     PEARSON, SAMPLED, THROTTLE)

NO_COLLECTORS = (
    "This job has no per-run info collector values (nsight-python 0.9.x and jobs without "
    "collectors record none).")
#: Said after :data:`NO_COLLECTORS` only where the job has an NVML trace (a cpu job has none).
NVML_INSTEAD = (
    "The NVML trace above was sampled during the whole job; it shows "
    "the clock the GPU held at each sample, which kernels shorter than the sampling period fall "
    "between (see the section 'What each clock source measures').")


def clock_sources(interval_ms: float) -> pd.DataFrame:
    """What each clock source of a job measures, when, and what it misses (issue 11, case 8:
    the NVML trace read a flat 1980 MHz while the counters showed fp16 GEMMs at 1515-1830 MHz).

    Args:
        interval_ms: the job's NVML sampling period (spec ``nvml_interval_ms``).

    Returns:
        Source, Measures, When, Misses; one row per source.
    """
    rows = [
        (f"Nsight Compute {GPC_HZ}", "the SM (GPC) clock averaged over the kernel's own cycles: "
         "the clock the kernel ran at", "during each profiled kernel (ncu backend, bound preset)",
         "nothing of the kernel; not recorded by the CUPTI or cpu backends"),
        ("NVML trace (the worker's sampler)", "the GPU's current SM and memory clock, "
         "temperature, power and throttle reasons at each sample",
         f"every {interval_ms:g} ms during the whole job, kernels and gaps alike",
         f"kernels shorter than {interval_ms:g} ms mostly fall between samples: a flat line can "
         "hide kernels that ran at a lower clock (fp16 GEMMs at 1515-1830 MHz on an H200 under "
         "a flat 1980 MHz trace)"),
        ("nsight-python info collectors (RUN scope)", "the same NVML values, once per run",
         "just before each run, not during it",
         "the run itself: the first run of an H200 job read the 345 MHz idle clock although its "
         "kernel ran near 1980 MHz"),
    ]
    return pd.DataFrame(rows, columns=[F.SOURCE, F.MEASURES, "When", F.MISSES])


def decode_throttle(mask: int) -> list[str]:
    """Names of the set bits of an NVML clocks-event reason mask (``[]`` for 0); unknown bits
    read ``bit 0x800``."""
    mask = int(mask)
    names = [name for bit, name in THROTTLE_BITS.items() if mask & bit]
    rest = mask & ~sum(THROTTLE_BITS)
    bit = 1
    while rest:
        if rest & bit:
            names.append(f"bit {bit:#x}")
            rest &= ~bit
        bit <<= 1
    return names


def trace_frame(bundle: Bundle) -> pd.DataFrame:
    """The NVML trace with the throttle reasons decoded.

    Returns:
        TimeS (s since the sampler started), SmClockMHz, MemClockMHz, TempC (°C), PowerW,
        ThrottleReasons (the bit mask), Throttle (reason names, ``, ``-joined; "" for 0).

    Raises:
        MissingData: the job has no NVML samples.
    """
    trace = bundle.table(C.TABLE_NVML)
    if trace.empty or C.TIME_S not in trace:
        raise MissingData("This job has no NVML trace.",
                          "The worker samples NVML while a GPU job runs (nvidia-ml-py installed "
                          "in the worker's environment); cpu jobs have none.")
    out = trace.sort_values(C.TIME_S).reset_index(drop=True)
    if C.THROTTLE_REASONS not in out:
        out[C.THROTTLE_REASONS] = 0
    out[C.THROTTLE_REASONS] = out[C.THROTTLE_REASONS].fillna(0).astype(int)
    out[THROTTLE] = [", ".join(decode_throttle(m)) for m in out[C.THROTTLE_REASONS]]
    return out


def throttle_frame(trace: pd.DataFrame) -> pd.DataFrame:
    """How often each reason was set in a :func:`trace_frame`.

    Returns:
        Reason, Bit (``0x4``), Samples, PctOfSamples, FirstS, LastS; one row per reason seen,
        in bit order.
    """
    rows = []
    masks = trace[C.THROTTLE_REASONS].to_numpy(int)
    times = trace[C.TIME_S].to_numpy(float)
    seen = int(np.bitwise_or.reduce(masks)) if len(masks) else 0
    bits = sorted({b for b in THROTTLE_BITS} | {1 << i for i in range(seen.bit_length())})
    for bit in bits:
        hit = (masks & bit) != 0
        if not hit.any():
            continue
        rows.append({C.REASON: THROTTLE_BITS.get(bit, f"bit {bit:#x}"), F.BIT: f"{bit:#x}",
                     F.SAMPLES: int(hit.sum()), F.PCT_OF_SAMPLES: 100.0 * hit.mean(),
                     F.FIRST_S: float(times[hit].min()), F.LAST_S: float(times[hit].max())})
    return pd.DataFrame(rows, columns=[C.REASON, F.BIT, F.SAMPLES, F.PCT_OF_SAMPLES, F.FIRST_S,
                                       F.LAST_S])


def max_sm_clock_mhz(bundle: Bundle) -> float | None:
    """The device's maximum SM clock (MHz) from the manifest environment, if recorded."""
    env = bundle.manifest.get("environment") or {}
    value = first_gpu(env, bundle.gpu_index).get("max_sm_clock_mhz")
    return float(value) if isinstance(value, (int, float)) else None


def kernel_clock_frame(bundle: Bundle) -> pd.DataFrame:
    """The SM clock each annotation x config ran at (``gpc__cycles_elapsed.avg.per_second``).

    Returns:
        Annotation, Config, <params>, ConfigLabel, NumRuns, SmClockMHz (mean), MinMHz, MaxMHz,
        MaxSmClockMHz (device maximum, NaN if unknown), PctOfMax.

    Raises:
        MissingData: the job did not collect that metric.
    """
    agg = bundle.table(C.TABLE_AGGREGATED)
    if agg.empty or C.METRIC not in agg or not (agg[C.METRIC] == GPC_HZ).any():
        raise missing_metric(bundle, (GPC_HZ,), "SM clock the kernels ran at")
    rows = agg[agg[C.METRIC] == GPC_HZ]
    out = rows[keys_of(bundle, rows) + [C.NUM_RUNS]].copy()
    out[F.SM_CLOCK_MHZ] = rows[C.AVG].astype(float) / 1e6
    out[F.MIN_MHZ] = rows[C.MIN].astype(float) / 1e6
    out[F.MAX_MHZ] = rows[C.MAX].astype(float) / 1e6
    top = max_sm_clock_mhz(bundle)
    out[F.MAX_SM_CLOCK_MHZ] = np.nan if top is None else top
    out[F.PCT_OF_MAX] = 100.0 * out[F.SM_CLOCK_MHZ] / out[F.MAX_SM_CLOCK_MHZ]
    return with_labels(out.reset_index(drop=True), bundle.parameters)


@dataclass(frozen=True)
class ClocksOptions:
    """Attributes:
        time_unit: unit of the kernel time (``ns``, ``µs``, ``ms``).
        config: Config index for the drift chart (None = every config).
    """

    time_unit: str = "µs"
    config: int | None = None


def collector_runs_frame(bundle: Bundle, options: ClocksOptions) -> pd.DataFrame:
    """Each run's collector values beside that run's kernel time (long: one row per collector).

    Collectors are per config and run (every annotation of a run shares the sample taken
    before it), so each annotation's time is joined on Config and Run.

    Returns:
        Annotation, Config, <params>, ConfigLabel, Run, KernelTime (in ``time_unit``), Unit,
        Collector, CollectorValue, CollectorUnit, Sampled (``before the run``).

    Raises:
        MissingData: the job has no collector rows, or no per-run durations.
    """
    coll = bundle.table(C.TABLE_COLLECTORS)
    if coll.empty or C.COLLECTOR not in coll:
        nvml = bundle.table(C.TABLE_NVML)
        raise MissingData(NO_COLLECTORS + ("" if nvml.empty else " " + NVML_INSTEAD),
                          "Run a job with info collectors (sidebar: collectors; "
                          "nsight-python >= 1.1) to get per-run values.")
    runs = bundle.table(C.TABLE_RUNS)
    if runs.empty or C.METRIC not in runs:
        raise MissingData("This job has no per-run durations to set beside the collectors.")
    runs = runs[runs[C.METRIC] == bundle.duration_metric]
    if options.config is not None:
        runs = runs[runs[C.CONFIG] == options.config]
    keys = keys_of(bundle, runs)
    times = runs[keys + [C.RUN]].copy()
    times[KERNEL_TIME] = runs[C.VALUE].astype(float) / derived.TIME_UNITS[options.time_unit]
    times[C.UNIT] = options.time_unit
    coll = coll[[C.CONFIG, C.RUN, C.COLLECTOR, C.VALUE, C.UNIT]].rename(
        columns={C.VALUE: COLLECTOR_VALUE, C.UNIT: COLLECTOR_UNIT})
    out = times.merge(coll, on=[C.CONFIG, C.RUN], how="inner")
    out[COLLECTOR_VALUE] = out[COLLECTOR_VALUE].astype(float)
    out[SAMPLED] = BEFORE_RUN
    out = in_job_order(out, bundle, (C.ANNOTATION, C.CONFIG, C.COLLECTOR, C.RUN))
    return with_labels(out, bundle.parameters)


def correlation_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Pearson correlation between each collector and the kernel time, per annotation x config.

    Args:
        frame: :func:`collector_runs_frame`.

    Returns:
        Annotation, Config, <params>, ConfigLabel, Collector, CollectorUnit, Sampled, Runs,
        PearsonR, PValue (two-sided), CollectorMin, CollectorMax, Note. PearsonR is NaN (and the
        Note says why) when the collector or the time did not change over the runs, or when
        fewer than 3 runs pair up.
    """
    group_keys = [c for c in frame.columns if c not in (
        C.RUN, KERNEL_TIME, C.UNIT, COLLECTOR_VALUE, SAMPLED)]
    rows = []
    for key, group in frame.groupby(group_keys, sort=False, dropna=False):
        x, y = group[COLLECTOR_VALUE].to_numpy(float), group[KERNEL_TIME].to_numpy(float)
        ok = ~(np.isnan(x) | np.isnan(y))
        x, y = x[ok], y[ok]
        r = p = np.nan
        if len(x) < 3:
            note = "fewer than 3 runs: no correlation"
        elif np.ptp(x) == 0:
            note = "collector constant over the runs: no correlation"
        elif np.ptp(y) == 0:
            note = "kernel time constant over the runs: no correlation"
        else:
            r, p = pearson(x, y)
            note = ""
        lo, hi = (float(np.min(x)), float(np.max(x))) if len(x) else (np.nan, np.nan)
        rows.append({**dict(zip(group_keys, key)), SAMPLED: BEFORE_RUN, F.RUNS: len(x),
                     PEARSON: r, F.P_VALUE: p, F.COLLECTOR_MIN: lo, F.COLLECTOR_MAX: hi,
                     F.NOTE: note})
    lead = [c for c in group_keys if c not in (C.COLLECTOR, COLLECTOR_UNIT)]
    cols = [*lead, C.COLLECTOR, COLLECTOR_UNIT, SAMPLED, F.RUNS, PEARSON, F.P_VALUE,
            F.COLLECTOR_MIN, F.COLLECTOR_MAX, F.NOTE]
    return pd.DataFrame(rows, columns=cols)


def pearson(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Pearson's r and its two-sided p-value (t = r sqrt((n-2) / (1-r^2)), Student's t with n-2
    degrees of freedom; what ``scipy.stats.pearsonr`` returns, without importing scipy.stats,
    which costs about a second on the first page load; ``scipy.special`` is imported here, on
    first use, for the same reason). Needs n >= 3 and non-constant x, y."""
    from scipy.special import stdtr

    r = float(np.clip(np.corrcoef(x, y)[0, 1], -1.0, 1.0))
    df = len(x) - 2
    t = np.inf if abs(r) == 1.0 else r * np.sqrt(df / (1.0 - r * r))
    return r, float(2.0 * stdtr(df, -abs(t)))


def thermal_compare_frame(*bundles: Bundle) -> pd.DataFrame:
    """Spread of the duration per annotation x config in each job, with its thermal_mode.

    Returns:
        Job, ThermalMode, WallS (manifest wall_s), Annotation, <params>, ConfigLabel, NumRuns,
        AvgUs, RelativeStdDevPct, StableMeasurement; rows of every job, job by job.

    Raises:
        MissingData: a job has no duration rows.
    """
    parts = []
    for bundle in bundles:
        agg = bundle.table(C.TABLE_AGGREGATED)
        if agg.empty or C.METRIC not in agg:
            raise MissingData(f"Job {bundle.job_id} has no aggregated results.")
        rows = agg[agg[C.METRIC] == bundle.duration_metric]
        # Config names the label of a job without parameters ("config 0"); not shown itself
        part = with_labels(rows[keys_of(bundle, rows) + [C.NUM_RUNS, C.RSD, C.STABLE,
                                                         C.CI95_HALF_PCT]],
                           bundle.parameters).drop(columns=C.CONFIG)
        part.insert(0, F.WALL_S, bundle.manifest.get("wall_s"))
        mode = bundle.job_spec.thermal_mode if bundle.job_spec else SPEC_DEFAULTS["thermal_mode"]
        part.insert(0, F.THERMAL_MODE, str(mode))
        part.insert(0, F.JOB, bundle.job_id)
        part[F.AVG_US] = rows[C.AVG].astype(float).to_numpy() / 1e3
        parts.append(part)
    out = pd.concat(parts, ignore_index=True)
    first = [F.JOB, F.THERMAL_MODE, F.WALL_S, C.ANNOTATION]
    last = [C.NUM_RUNS, F.AVG_US, C.RSD, C.STABLE, C.CI95_HALF_PCT]
    rest = [c for c in out if c not in first and c not in last]
    return out[first + rest + last]


def thermal_mean_difference_pct(frame: pd.DataFrame) -> float | None:
    """Largest |mean of one job / mean of the other - 1| in % over the annotation x configs
    both jobs of a :func:`thermal_compare_frame` have (None when they share none)."""
    jobs = list(dict.fromkeys(frame[F.JOB]))
    if len(jobs) < 2:
        return None
    key = [C.ANNOTATION, F.CONFIG_LABEL]
    a = frame[frame[F.JOB] == jobs[0]].set_index(key)[F.AVG_US]
    b = frame[frame[F.JOB] == jobs[1]].set_index(key)[F.AVG_US]
    both = a.to_frame("a").join(b.to_frame("b"), how="inner")
    if both.empty:
        return None
    return float((100.0 * (both["a"] / both["b"] - 1.0)).abs().max())


def user_collectors_frame(bundle: Bundle) -> pd.DataFrame:
    """The job's user info collectors (manifest ``backend.user_collectors``): Collector, Scope
    (ONCE, RUN), Unit, File, Value (a ONCE collector's; a RUN collector's values are in the
    per-run table), Problem (why values are missing: raised, timed out, not a number; empty
    when every call gave one). Empty when the job named none."""
    entries = (bundle.manifest.get("backend") or {}).get("user_collectors") or []
    rows = [{C.COLLECTOR: e.get("name"), "Scope": str(e.get("scope", "")).upper(),
             C.UNIT: e.get("unit") or "", "File": e.get("source") or "",
             C.VALUE: "" if e.get("scope") != "once" else str(e.get("value")),
             "Problem": e.get("error") or ""} for e in entries if isinstance(e, dict)]
    return pd.DataFrame(rows, columns=[C.COLLECTOR, "Scope", C.UNIT, "File", C.VALUE, "Problem"])
