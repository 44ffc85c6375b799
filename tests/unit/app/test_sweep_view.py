"""sweep_frame on the real cpu bundle."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.bundle_loader import load_bundle
from app.core.views.sweep import SweepOptions, annotations_of, sweep_frame, sweep_x
from profiling_worker.schema import columns as C


def test_time_sweep_rows_and_units(cpu_bundle: Path) -> None:
    bundle = load_bundle(cpu_bundle)
    assert sweep_x(bundle) == "n"
    assert annotations_of(bundle) == ["fp32", "fp16", "bf16"]
    frame = sweep_frame(bundle, SweepOptions(time_unit="ms"))
    assert len(frame) == 3 * 2
    assert frame[C.ANNOTATION].tolist() == ["fp32", "fp32", "fp16", "fp16", "bf16", "bf16"]
    assert frame["n"].tolist() == [32, 64] * 3
    assert set(frame[C.UNIT]) == {"ms"}
    assert (frame[C.CI95_LOWER] <= frame[C.AVG]).all() and (frame[C.AVG] <= frame[C.CI95_UPPER]).all()
    agg = bundle.table(C.TABLE_AGGREGATED).set_index([C.ANNOTATION, "n"])[C.AVG] / 1e6
    assert frame.set_index([C.ANNOTATION, "n"])[C.AVG].to_numpy() == pytest.approx(
        agg.loc[frame.set_index([C.ANNOTATION, "n"]).index].to_numpy())


def test_throughput_and_baseline(cpu_bundle: Path) -> None:
    bundle = load_bundle(cpu_bundle)
    tflops = sweep_frame(bundle, SweepOptions(quantity="tflops"))
    assert set(tflops[C.UNIT]) == {"TFLOP/s"} and (tflops[C.AVG] > 0).all()
    rel = sweep_frame(bundle, SweepOptions(quantity="gbps", baseline="fp32"))
    assert set(rel[C.UNIT]) == {"× fp32"}
    assert rel[rel[C.ANNOTATION] == "fp32"][C.AVG].tolist() == pytest.approx([1.0, 1.0])


def test_falls_back_to_aggregated_without_runs(cpu_bundle: Path) -> None:
    (cpu_bundle / "tables" / "runs.parquet").unlink()
    (cpu_bundle / "tables" / "runs.csv").unlink()
    frame = sweep_frame(load_bundle(cpu_bundle), SweepOptions(time_unit="ns"))
    assert len(frame) == 6 and set(frame[C.UNIT]) == {"ns"}


def test_empty_bundle_gives_empty_frame(cpu_bundle: Path) -> None:
    for path in (cpu_bundle / "tables").iterdir():
        path.unlink()
    assert sweep_frame(load_bundle(cpu_bundle), SweepOptions()).empty
