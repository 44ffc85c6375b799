"""Memory and fusion views on the H200 elementwise bundle."""

from __future__ import annotations

import pytest
from bundled import bundled

from app.core.figures.memory import build_fusion_figure, build_memory_figure
from app.core.metrics import MissingData
from app.core.views.memory import MemoryOptions, fusion_frame, memory_frame
from profiling_worker.bundle.schema import columns as C


def test_fused_moves_fewer_bytes_and_is_faster() -> None:
    fusion = fusion_frame(bundled("h200-ncu-elementwise"), MemoryOptions())
    assert len(fusion) == 4
    assert (fusion["FusedBytes"] < fusion["UnfusedBytes"]).all()
    assert (fusion["TimeRatio"] < 0.7).all()
    big = fusion[fusion["n"] == 2**26].iloc[0]
    assert big["TrafficRatio"] == pytest.approx(0.675, abs=0.01)  # 4 vs ~6 arrays of traffic
    assert big["FusedBytes"] == pytest.approx(big["AnalyticBytes"], rel=0.05)


def test_gap_notes() -> None:
    frame = memory_frame(bundled("h200-ncu-elementwise"), MemoryOptions())
    small = frame[(frame[C.ANNOTATION] == "x*2") & (frame["n"] == 2**20)].iloc[0]
    assert small["DramWriteBytes"] == 0 and "L2 residue" in small["GapNote"]  # fits the L2
    unfused = frame[(frame[C.ANNOTATION] == "unfused") & (frame["n"] == 2**26)].iloc[0]
    assert unfused["MeasuredOverAnalytic"] > 1.4 and "above" in unfused["GapNote"]
    gemm = memory_frame(bundled("h200-ncu-matmul-sweep"), MemoryOptions())
    assert "re-read" in gemm[(gemm[C.ANNOTATION] == "fp16") & (gemm["n"] == 8192)]["GapNote"].item()
    assert fusion_frame(bundled("h200-ncu-matmul-sweep"), MemoryOptions()).empty


def test_cupti_job_has_no_bytes() -> None:
    with pytest.raises(MissingData) as err:
        memory_frame(bundled("h200-cupti-elementwise"), MemoryOptions())
    assert "memory metric preset" in err.value.hint


def test_figures() -> None:
    bundle = bundled("h200-ncu-elementwise")
    frame = memory_frame(bundle, MemoryOptions())
    fig = build_memory_figure(frame[frame["n"] == 2**26])
    assert [t.name for t in fig.data] == ["DRAM read", "DRAM written", "analytic minimum"]
    assert fig.layout.barmode == "stack" and fig.layout.yaxis.title.text == "DRAM traffic (MB)"
    fusion = build_fusion_figure(fusion_frame(bundle, MemoryOptions()), "n")
    assert fusion.layout.xaxis.type == "log" and len(fusion.data) == 2


def test_fusion_is_offered_only_for_declared_pairs() -> None:
    """Issue 11, case 8: the fusion kernel declares (unfused, fused); a matmul job's fp32 and
    fp16 regions compute different things and are never offered as a fusion."""
    from app.core.kernel_catalog import catalog_from_report
    from app.core.views.memory import fusion_pairs
    from profiling_worker.catalog.builtin import CATALOG

    assert fusion_pairs(bundled("h200-ncu-elementwise"), CATALOG) == [("unfused", "fused")]
    assert fusion_pairs(bundled("h200-ncu-matmul-sweep"), CATALOG) == []
    described, _ = catalog_from_report({})  # the worker's description of the built-ins
    assert described["fusion"].fusion_pairs == (("unfused", "fused"),)
    assert fusion_pairs(bundled("h200-ncu-elementwise"), described) == [("unfused", "fused")]


def test_the_two_gb_per_s_say_their_source() -> None:
    """fp16 matmul n=8192: the sweep's analytic GB/s and the measured DRAM GB/s differ (the
    kernel re-reads its inputs), so each name says which bytes it divides by the time."""
    from app.core import derived
    from app.core.views.sweep import SweepOptions, sweep_frame

    bundle = bundled("h200-ncu-matmul-sweep")
    measured = memory_frame(bundle, MemoryOptions())
    row = measured[(measured[C.ANNOTATION] == "fp16") & (measured["n"] == 8192)]
    assert "AchievedGBps" not in measured and "GBps" not in measured
    assert "MeasuredDramGBps" in measured
    sweep = sweep_frame(bundle, SweepOptions(quantity=derived.GBPS))
    analytic = sweep[(sweep[C.ANNOTATION] == "fp16") & (sweep["n"] == 8192)][C.AVG].item()
    assert row["MeasuredDramGBps"].item() > 2 * analytic
    assert "analytic minimum bytes / time" in derived.QUANTITY_LABELS[derived.GBPS]


def test_a_job_with_one_of_the_two_counters_says_which(tmp_path) -> None:
    """A tester's find: a job that measured DRAM read bytes but not write bytes was told it had
    "no DRAM byte counters"; it is told which one it lacks (no total from half the traffic)."""
    import shutil

    import pandas as pd

    from profiling_worker.bundle.loader import load_bundle
    from app.core.metrics import DRAM_READ, DRAM_WRITE

    job = tmp_path / "read-only"
    shutil.copytree(bundled("h200-ncu-elementwise").path, job)
    for name in (C.TABLE_AGGREGATED, C.TABLE_RUNS):
        table = job / C.TABLES_DIR / f"{name}.parquet"
        frame = pd.read_parquet(table)
        frame[frame[C.METRIC] != DRAM_WRITE].to_parquet(table)
    with pytest.raises(MissingData) as err:
        memory_frame(load_bundle(job), MemoryOptions())
    assert str(err.value).startswith(f"This job measured {DRAM_READ} but not {DRAM_WRITE}")
    assert "memory metric preset" in err.value.hint
