"""One kernel: everything the job measured for one annotation x config, on one page (pure pandas).

The aggregated row of every metric, the kernel name(s) the region launched (launches table), the
GPU (manifest environment), the SM clock the kernels actually ran at (Nsight Compute's
``gpc__cycles_elapsed.avg.per_second``, not the rated clock of the device properties) and
throughput derived in the app from the analytic work table.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from profiling_worker.bundle.number_text import shown_unit
from profiling_worker.bundle.schema import columns as C, intervals

from app.core import derived
from profiling_worker.bundle.loader import Bundle
from app.core.environment import gpu_name
from profiling_worker.bundle.schema.manifest import JobStatus
from app.core.metrics import (GPC_HZ, MissingData, config_label, keys_of, no_values_text,
                              with_labels)
from app.core import frame_columns as F

SOURCE = F.SOURCE
MEASURED = "measured"
SM_CLOCK_ROW = "SM clock the kernel ran at"
TFLOPS_ROW = "Throughput (Flops / duration)"
GBPS_ROW = "Bandwidth (analytic bytes / duration)"
#: The GPU column of a job timed on the host (cpu backend): it ran on no GPU, so not "unknown".
HOST_GPU = "none: ran on the host (cpu backend)"
ROW_COLUMNS = (C.METRIC, C.UNIT, C.NUM_RUNS, C.AVG, C.STD, C.MIN, C.MAX, C.MEDIAN, C.CI95_LOWER,
               C.CI95_UPPER, C.RSD, C.STABLE, C.CI95_HALF_PCT)


@dataclass(frozen=True)
class OneKernelOptions:
    """Attributes:
        annotation: the annotation (None = the job's first).
        config: Config index (None = the annotation's first config).
        time_unit: ``ns``, ``µs`` or ``ms`` for durations.
    """

    annotation: str | None = None
    config: int | None = None
    time_unit: str = derived.DEFAULT_TIME_UNIT


@dataclass(frozen=True)
class KernelSummary:
    """Headline values of one annotation x config (None where the job lacks them).

    Attributes:
        duration, duration_lo, duration_hi: mean and CI95 of the duration in ``time_unit``.
        sm_clock_mhz: mean of ``gpc__cycles_elapsed.avg.per_second`` in MHz.
        throughput, throughput_unit: analytic FLOPs over the mean duration, in the FLOP/s unit
            in which it is at least 1 (``TFLOP/s`` on a GPU, ``MFLOP/s`` for a cpu job's).
    """

    annotation: str
    config_label: str
    kernels: tuple[str, ...]
    gpu: str
    time_unit: str
    duration: float | None
    duration_lo: float | None
    duration_hi: float | None
    num_runs: int | None
    stable: bool | None
    rsd_pct: float | None
    sm_clock_mhz: float | None
    throughput: float | None
    throughput_unit: str


def annotation_configs(bundle: Bundle, status: JobStatus | None = None
                       ) -> dict[str, dict[int, str]]:
    """Annotation -> {Config index: ``n=512`` label}, in table order. ``status``: the job's
    state as the page names it (the job manager's for this server's jobs, which runs ahead of
    the manifest: :func:`app.ui.job_status.shown_status`), which the no-results sentence says;
    None: the manifest's.

    Raises:
        MissingData: the job has no aggregated rows.
    """
    agg = bundle.table(C.TABLE_AGGREGATED)
    if agg.empty or C.ANNOTATION not in agg:
        status = status or bundle.status
        if status is not JobStatus.DONE:  # when they come, if they come
            raise MissingData(no_values_text("results", status, "the table", bundle.error))
        raise MissingData("This job has no aggregated results.",
                          "Pick a job that finished (status done).")
    out: dict[str, dict[int, str]] = {}
    for _, row in agg.drop_duplicates([C.ANNOTATION, C.CONFIG]).iterrows():
        out.setdefault(str(row[C.ANNOTATION]), {})[int(row[C.CONFIG])] = config_label(
            row, bundle.parameters)
    return out


def opening_options(bundle: Bundle) -> OneKernelOptions:
    """The options the page opens with: the first annotation of :func:`annotation_configs`, its
    first config and the default time unit.

    Raises:
        MissingData: the job has no aggregated rows.
    """
    choices = annotation_configs(bundle)
    annotation = next(iter(choices))
    return OneKernelOptions(annotation=annotation, config=next(iter(choices[annotation])))


def resolve(bundle: Bundle, options: OneKernelOptions) -> tuple[str, int]:
    """The (annotation, config) the options name, defaults filled in.

    Raises:
        MissingData: the job has no such annotation x config.
    """
    choices = annotation_configs(bundle)
    annotation = options.annotation if options.annotation is not None else next(iter(choices))
    if annotation not in choices:
        raise MissingData(f"This job has no annotation {annotation!r}.",
                          f"Pick one of {', '.join(choices)}.")
    configs = choices[annotation]
    config = options.config if options.config is not None else next(iter(configs))
    if config not in configs:
        raise MissingData(f"Annotation {annotation!r} has no config {config}.",
                          "Pick one of its configs.")
    return annotation, config


def kernel_names(bundle: Bundle, annotation: str, config: int) -> tuple[str, ...]:
    """Distinct kernel names the region launched (first-seen order; empty without launches)."""
    launches = bundle.table(C.TABLE_LAUNCHES)
    if launches.empty or C.KERNEL not in launches:
        return ()
    mine = launches[(launches[C.ANNOTATION] == annotation) & (launches[C.CONFIG] == config)]
    return tuple(dict.fromkeys(str(k) for k in mine[C.KERNEL].dropna()))


def one_kernel_frame(bundle: Bundle, options: OneKernelOptions) -> pd.DataFrame:
    """Every value of one annotation x config, measured and derived, one row each.

    Returns:
        Metric, Unit, NumRuns, AvgValue, StdDev, MinValue, MaxValue, MedianValue, CI95_Lower,
        CI95_Upper, RelativeStdDevPct, StableMeasurement, CI95HalfWidthPct, Source
        (``measured``, or how a derived row was computed), Annotation, Config, <params>,
        ConfigLabel, Kernels (names,
        `` + ``-joined), GPU. Durations are in ``time_unit``; derived rows are the SM clock the
        kernel ran at (MHz, from ``gpc__cycles_elapsed.avg.per_second`` when collected), TFLOP/s
        and GB/s from the work table (when it has the annotation).

    Raises:
        MissingData: the job has no such annotation x config.
    """
    annotation, config = resolve(bundle, options)
    agg = bundle.table(C.TABLE_AGGREGATED)
    mine = agg[(agg[C.ANNOTATION] == annotation) & (agg[C.CONFIG] == config)].copy()
    keys = keys_of(bundle, mine)
    mine[SOURCE] = MEASURED
    rows = [_scaled(mine, options.time_unit)]
    if (mine[C.METRIC] == GPC_HZ).any():
        clock = mine[mine[C.METRIC] == GPC_HZ].copy()
        mhz, hz_per_mhz = shown_unit("Hz")  # the run audit's unit: MHz
        clock = _rescale(clock, hz_per_mhz, mhz)
        clock[C.METRIC] = SM_CLOCK_ROW
        clock[SOURCE] = f"{GPC_HZ} / 1e6"
        rows.append(clock)
    rows += _throughput_rows(bundle, annotation, config, mine[keys].iloc[:1])
    frame = pd.concat(rows, ignore_index=True)
    frame[F.KERNEL_NAMES] = " + ".join(kernel_names(bundle, annotation, config))
    env = bundle.manifest.get("environment") or {}
    frame[F.GPU] = (HOST_GPU if bundle.host_timer
                    else gpu_name(env, bundle.gpu_index) or "unknown")
    order = [*ROW_COLUMNS, SOURCE, *keys, F.KERNEL_NAMES, F.GPU]
    out = with_labels(frame[[c for c in order if c in frame]], bundle.parameters)
    return out[[*ROW_COLUMNS, SOURCE, *keys, F.CONFIG_LABEL, F.KERNEL_NAMES, F.GPU]]


def _rescale(frame: pd.DataFrame, divisor: float, unit: str) -> pd.DataFrame:
    out = frame.copy()
    for col in (C.AVG, C.STD, C.MIN, C.MAX, C.MEDIAN, C.CI95_LOWER, C.CI95_UPPER):
        if col in out:
            out[col] = out[col].astype(float) / divisor
    out[C.UNIT] = unit
    return out


def _scaled(mine: pd.DataFrame, time_unit: str) -> pd.DataFrame:
    """Duration rows in ``time_unit``; other rows unchanged."""
    is_time = mine[C.METRIC].isin(C.DURATION_METRICS)
    if not is_time.any():
        return mine
    timed = _rescale(mine[is_time], derived.TIME_UNITS[time_unit], time_unit)
    return pd.concat([timed, mine[~is_time]]).loc[mine.index]


def _throughput_rows(bundle: Bundle, annotation: str, config: int,
                     key_row: pd.DataFrame) -> list[pd.DataFrame]:
    """TFLOP/s and GB/s per run, aggregated (empty when the work table lacks the region)."""
    runs, work = bundle.table(C.TABLE_RUNS), bundle.table(C.TABLE_WORK)
    if runs.empty or work.empty or C.ANNOTATION not in work:
        return []
    runs = runs[(runs[C.ANNOTATION] == annotation) & (runs[C.CONFIG] == config)]
    work = work[(work[C.ANNOTATION] == annotation) & (work[C.CONFIG] == config)]
    if work.empty or runs.empty:
        return []
    out = []
    for quantity, metric, column in ((derived.TFLOPS, TFLOPS_ROW, C.FLOPS),
                                     (derived.GBPS, GBPS_ROW, C.BYTES)):
        if column not in work or not (work[column].astype(float) > 0).all():
            continue
        stats = derived.aggregate_quantity(runs, work, bundle.duration_metric, quantity,
                                           [C.ANNOTATION, C.CONFIG])
        if stats.empty:
            continue
        stats = stats.drop(columns=[C.ANNOTATION, C.CONFIG])
        row = pd.concat([key_row.reset_index(drop=True), stats], axis=1)
        row[C.METRIC] = metric
        row[SOURCE] = f"{column} (work table) / mean {bundle.duration_metric}"
        out.append(row)
    return out


def one_kernel_summary(bundle: Bundle, frame: pd.DataFrame) -> KernelSummary:
    """The headline values of a :func:`one_kernel_frame`."""
    def row(metric: str) -> pd.Series | None:
        hit = frame[frame[C.METRIC] == metric]
        return hit.iloc[0] if len(hit) else None

    first = frame.iloc[0]
    duration, clock, tflops = row(bundle.duration_metric), row(SM_CLOCK_ROW), row(TFLOPS_ROW)
    kernels = str(first[F.KERNEL_NAMES])
    return KernelSummary(
        annotation=str(first[C.ANNOTATION]), config_label=str(first[F.CONFIG_LABEL]),
        kernels=tuple(kernels.split(" + ")) if kernels else (), gpu=str(first[F.GPU]),
        time_unit=str(duration[C.UNIT]) if duration is not None else "",
        duration=_num(duration, C.AVG), duration_lo=_num(duration, C.CI95_LOWER),
        duration_hi=_num(duration, C.CI95_UPPER),
        num_runs=None if (runs := _num(duration, C.NUM_RUNS)) is None else int(runs),
        # fewer than 2 runs: not assessed (nsight-python's StableMeasurement reads False there,
        # NaN RSD < 2.0 in nsight/transformation.py; "no" was read as measured and unstable)
        stable=None if duration is None or runs is None or runs < intervals.MIN_RUNS
        else bool(duration[C.STABLE]),
        rsd_pct=_num(duration, C.RSD), sm_clock_mhz=_num(clock, C.AVG),
        throughput=_num(tflops, C.AVG),
        throughput_unit=str(tflops[C.UNIT]) if tflops is not None else "TFLOP/s")


def _num(row: pd.Series | None, column: str) -> float | None:
    if row is None or column not in row.index or pd.isna(row[column]):
        return None
    return float(row[column])


def one_kernel_launches_frame(bundle: Bundle, options: OneKernelOptions) -> pd.DataFrame:
    """Duration of every launch of the annotation x config, and of the region per run.

    Returns:
        Run, Launch, Kernel, Value, Unit: one row per kernel launch (Kernel = its name) plus one
        row per run with Kernel ``region total`` (Launch NaN) from the runs table; ``Value`` in
        ``time_unit``. Empty when the job has neither table.
    """
    annotation, config = resolve(bundle, options)
    scale = derived.TIME_UNITS[options.time_unit]
    parts = []
    launches = bundle.table(C.TABLE_LAUNCHES)
    if not launches.empty and C.KERNEL in launches:
        mine = launches[(launches[C.ANNOTATION] == annotation) & (launches[C.CONFIG] == config)
                        & (launches[C.METRIC] == bundle.duration_metric)]
        parts.append(mine[[C.RUN, C.LAUNCH, C.KERNEL, C.VALUE]])
    runs = bundle.table(C.TABLE_RUNS)
    if not runs.empty and C.METRIC in runs:
        mine = runs[(runs[C.ANNOTATION] == annotation) & (runs[C.CONFIG] == config)
                    & (runs[C.METRIC] == bundle.duration_metric)]
        parts.append(mine[[C.RUN, C.VALUE]].assign(**{C.KERNEL: "region total"}))
    cols = [C.RUN, C.LAUNCH, C.KERNEL, C.VALUE, C.UNIT]
    if not parts:
        return pd.DataFrame(columns=cols)
    frame = pd.concat(parts, ignore_index=True)
    frame[C.VALUE] = frame[C.VALUE].astype(float) / scale
    frame[C.UNIT] = options.time_unit
    return frame.reindex(columns=cols).reset_index(drop=True)
