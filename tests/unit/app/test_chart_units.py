"""A chart's table in the chart's unit (app/core/views/chart_units.py, issue 37)."""

from __future__ import annotations

import pandas as pd
import pytest

from app.core import frame_columns as F
from app.core.views.chart_units import cache_clock_table, kernels_table, memory_table


def test_memory_table_is_in_mb_and_us() -> None:
    frame = pd.DataFrame({F.DRAM_READ_BYTES: [268_452_684.8], F.DRAM_WRITE_BYTES: [2e6],
                          F.DRAM_BYTES: [270_452_684.8], F.ANALYTIC_BYTES: [float("nan")],
                          F.TIME_NS: [124_739.2], F.GAP_NOTE: ["x"]})
    out = memory_table(frame)
    assert list(out.columns) == [F.DRAM_READ_MB, F.DRAM_WRITE_MB, F.DRAM_MB, F.ANALYTIC_MB,
                                 F.TIME_US, F.GAP_NOTE]
    assert out[F.DRAM_READ_MB].iloc[0] == pytest.approx(268.4526848)
    assert out[F.TIME_US].iloc[0] == pytest.approx(124.7392)
    assert out[F.ANALYTIC_MB].isna().all()
    assert F.DRAM_READ_BYTES in frame.columns  # the view's frame itself is left as it was


def test_kernels_table_is_in_us() -> None:
    out = kernels_table(pd.DataFrame({F.MEAN_TIME_NS: [11_404.8], F.SHARE: [68.0]}))
    assert out.to_dict("list") == {F.MEAN_TIME_US: [pytest.approx(11.4048)], F.SHARE_PCT: [68.0]}


def test_cache_clock_table_follows_the_bandwidth_axis() -> None:
    gpu = cache_clock_table(pd.DataFrame({F.TIME_NS: [4_054.4], F.GBPS: [1_035.76]}))
    assert list(gpu.columns) == [F.TIME_US, F.GBPS] and gpu[F.GBPS].iloc[0] == 1_035.76
    # a cpu job's 0.1-0.45 GB/s: the chart's axis is in MB/s, and so is the table
    cpu = cache_clock_table(pd.DataFrame({F.TIME_NS: [1e6, 2e6], F.GBPS: [0.1, 0.45]}))
    assert list(cpu.columns) == [F.TIME_US, "MBps"]
    assert cpu["MBps"].tolist() == pytest.approx([100.0, 450.0])
