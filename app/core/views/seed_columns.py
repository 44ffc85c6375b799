"""nsight-python's context columns beside a job's aggregated table: ``GPU``, ``ComputeClock``,
``MemoryClock`` and ``Kernel``, so a table (and its CSV) can be set against nsight-python's own
output column by column (issue 37).

Source (nsight-python, ``extraction.py``): each profiled action gives ``GPU`` =
``device__attribute_display_name``, ``ComputeClock`` = ``device__attribute_clock_rate`` and
``MemoryClock`` = ``device__attribute_memory_clock_rate`` (the device's rated clocks in kHz, as
Nsight Compute reports them, not clocks measured during the run), and ``Kernel`` = the action's
name. Here the clocks come from the device attributes the job recorded (Nsight Compute jobs),
the GPU from them or the job's environment, and Kernel from its per-launch table: the names a
region launched, first seen first, joined by " + " (nsight-python combines a region's kernels
into one row the same way it combines their metrics).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from profiling_worker.bundle.schema import columns as C, metrics as M

from profiling_worker.bundle.loader import Bundle
from app.core.environment import gpu_name

GPU, COMPUTE_CLOCK, MEMORY_CLOCK, KERNEL = "GPU", "ComputeClock", "MemoryClock", "Kernel"
SEED_COLUMNS = (GPU, COMPUTE_CLOCK, MEMORY_CLOCK, KERNEL)
_ATTRIBUTES = {GPU: M.DEVICE_NAME, COMPUTE_CLOCK: M.CLOCK_RATE,
               MEMORY_CLOCK: M.MEMORY_CLOCK_RATE}


def with_seed_columns(frame: pd.DataFrame, bundle: Bundle) -> pd.DataFrame:
    """``frame`` (rows of Annotation x Config, e.g. the aggregated table) with :data:`SEED_COLUMNS`
    appended: GPU (text), ComputeClock and MemoryClock (kHz; missing when the job recorded no
    device attributes, e.g. CUPTI or cpu jobs), Kernel (missing without a per-launch table).
    A column already in ``frame`` is left as it is. The frame is not changed in place."""
    out = frame.copy()
    attributes: dict[str, Any] = (bundle.manifest.get("backend") or {}).get(
        "device_attributes") or {}
    for column, attribute in _ATTRIBUTES.items():
        if column in out:
            continue
        value = attributes.get(attribute)
        if column == GPU and value is None:
            value = gpu_name(bundle.manifest.get("environment") or {}, bundle.gpu_index) or None
        out[column] = value if column == GPU else pd.to_numeric(
            pd.Series([value] * len(out), index=out.index, dtype=object), errors="coerce")
    if KERNEL not in out:
        out[KERNEL] = _kernel_names(bundle, out)
    return out


def _kernel_names(bundle: Bundle, frame: pd.DataFrame) -> pd.Series:
    """The kernel names of each row's Annotation x Config (" + "-joined), else missing."""
    launches = bundle.table(C.TABLE_LAUNCHES)
    keys = [C.ANNOTATION, C.CONFIG]
    if launches.empty or C.KERNEL not in launches or not set(keys) <= set(frame) \
            or not set(keys) <= set(launches):
        return pd.Series([None] * len(frame), index=frame.index, dtype=object)
    # each (annotation, config, kernel) once, first seen first, before the join: a join of
    # every launch's name per group was 5.9 of Results' 28 s at 10,000 configs (1.9M launches)
    named = launches.loc[launches[C.KERNEL].notna(), keys]
    named[C.KERNEL] = launches[C.KERNEL].dropna().astype(str)
    names = (named.drop_duplicates().groupby(keys, sort=False)[C.KERNEL].agg(" + ".join)
             .rename(KERNEL))
    return frame[keys].join(names, on=keys)[KERNEL]
