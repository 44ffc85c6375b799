"""A chart's table in the chart's units: the frame a page passes to
:func:`app.ui.panels.chart_with_table` (its table and CSV) and the HTML report's table show each
quantity in the unit and scale of the chart's axis, named in the column (issue 37: the Memory
page's table was in bytes beside its chart in MB, Kernels and Cache and clock in ns beside µs).
As :func:`app.core.views.roofline.roofline_table` does for the roofline's FLOP/s. The analysis
frames themselves (:data:`app.core.pages.ANALYSES`, the agent door) keep their base units."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from app.core import derived, frame_columns as F

#: Bytes in a MB, the memory chart's axis unit (decimal, as :func:`app.core.numbers.fmt_bytes`).
MB = 1e6
#: Nanoseconds in a µs.
NS_PER_US = 1e3


def scaled(frame: pd.DataFrame, columns: Mapping[str, tuple[str, float]]) -> pd.DataFrame:
    """``frame`` (a copy) with each present column of ``columns`` (name -> (new name,
    divisor)) divided by its divisor and renamed; absent ones left out."""
    present = {c: v for c, v in columns.items() if c in frame.columns}
    if not present:
        return frame
    out = frame.copy()
    for name, (_new, divisor) in present.items():
        out[name] = out[name].astype(float) / divisor
    return out.rename(columns={c: new for c, (new, _d) in present.items()})


def memory_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The memory chart's table (:func:`app.core.views.memory.memory_frame`): DRAM bytes in MB
    as the chart's axis (``DramReadMB``, ``DramWriteMB``, ``DramMB``, ``AnalyticMB``), the time
    in µs as its hover (``TimeUs``)."""
    return scaled(frame, {F.DRAM_READ_BYTES: (F.DRAM_READ_MB, MB),
                          F.DRAM_WRITE_BYTES: (F.DRAM_WRITE_MB, MB),
                          F.DRAM_BYTES: (F.DRAM_MB, MB), F.ANALYTIC_BYTES: (F.ANALYTIC_MB, MB),
                          F.TIME_NS: (F.TIME_US, NS_PER_US)})


def kernels_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The kernels chart's table (:func:`app.core.views.kernels.kernel_time_frame`): the mean
    time per run in µs as the chart's axis (``MeanTimeUs``), the share named in its unit
    (``SharePct``)."""
    return scaled(frame, {F.MEAN_TIME_NS: (F.MEAN_TIME_US, NS_PER_US), F.SHARE: (F.SHARE_PCT, 1.0)})


def cache_clock_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The cache and clock chart's table (:func:`app.core.views.cache_clock.cache_clock_frame`):
    the time in µs as the chart's axis (``TimeUs``), the bandwidth in the axis's unit
    (:func:`app.core.derived.median_rate_step`, as the axis: ``GBps``, or ``MBps`` for MB/s)."""
    columns = {F.TIME_NS: (F.TIME_US, NS_PER_US)}
    if F.GBPS in frame.columns:
        factor, unit = derived.median_rate_step(frame[F.GBPS], "GB/s")
        if factor != 1.0:
            columns[F.GBPS] = (unit.replace("/s", "ps"), 1.0 / factor)
    return scaled(frame, columns)
