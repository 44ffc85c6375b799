"""The worker's post-processing (tables + finish_bundle, issue 24's warm path) rebuilt from
recorded H200 bundles gives the same files: every table's Parquet schema and values and CSV
text (the CSV made from the rebuilt Parquet file, issue 40), the notes and the file list
(benchmarks/post_processing.py; where main's writer of 2026-12-02 differs from the recorder's,
tests/fixtures/post_processing/ holds its output).
This guards "nothing traded for speed"."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from profiling_worker.bundle import writer as bundle_writer
from profiling_worker.bundle.schema import columns as C, plausibility

REPO = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("post_processing",
                                               REPO / "benchmarks" / "post_processing.py")
assert _spec and _spec.loader
bench = importlib.util.module_from_spec(_spec)
sys.modules["post_processing"] = bench  # its dataclass looks its module up
_spec.loader.exec_module(bench)

BUNDLES = sorted(p.name for p in bench.EXPECTED.iterdir() if p.is_dir())


def _rebuilt(name: str, tmp_path: Path) -> tuple[object, Path]:
    rec = bench.load_recorded(REPO / "app" / "bundled" / name)
    job = bench._fresh_copy(rec, tmp_path)
    bench.post_process(rec, job)
    return rec, job


def test_the_fixtures_cover_the_job_and_the_kinds() -> None:
    # J1 itself, launch times, unattributed launches, notes (above_roof), ncu's weighted means
    assert {"h200-cupti-j1-fp16", "h200-cupti-timeline", "h200-cupti-elementwise-cache-none",
            "h200-ncu-matmul-rules"} <= set(BUNDLES)
    notes = json.loads((bench.EXPECTED / "h200-cupti-elementwise-cache-none" /
                        "finished.json").read_text())["notes"]
    assert [n["check"] for n in notes] == [plausibility.ABOVE_ROOF] * 2


@pytest.mark.parametrize("name", BUNDLES)
def test_rebuilt_bundle_has_the_same_files(name: str, tmp_path: Path) -> None:
    rec, job = _rebuilt(name, tmp_path)
    assert bench.differences(rec, job, bench.EXPECTED / name) == []


@pytest.mark.parametrize("name", BUNDLES)
def test_checks_of_the_written_frames_equal_those_of_the_files(name: str,
                                                               tmp_path: Path) -> None:
    """finish_bundle checks the frames write_result_tables hands it; read back from the
    files they give the same notes, also where the tables are made implausible (a run
    missing, negative times, kernel counts that vary, intervals below zero, points above the
    roofs)."""
    rec = bench.load_recorded(REPO / "app" / "bundled" / name)
    written = bench.results.write_result_tables(tmp_path, rec.spec, rec.registry,
                                                rec.annotations, **rec.inputs)
    runs, agg = written[C.TABLE_RUNS], written[C.TABLE_AGGREGATED]
    broken = {**written,
              C.TABLE_RUNS: runs.iloc[1:].assign(**{C.VALUE: -runs[C.VALUE]}),
              C.TABLE_AGGREGATED: agg.assign(**{C.KERNELS_VARY: True, C.CI95_LOWER: -1.0})}
    too_fast = {**written, C.TABLE_AGGREGATED: agg.assign(**{C.AVG: agg[C.AVG] / 1e4})}
    for tables in (written, too_fast, broken):
        for table, frame in tables.items():
            bundle_writer.write_table(tmp_path, table, frame)
        from_files = plausibility.check_bundle(bundle_writer.bundle_tables(tmp_path),
                                               rec.manifest)
        assert plausibility.check_bundle(tables, rec.manifest) == from_files
        if tables is too_fast:
            assert plausibility.ABOVE_ROOF in {n["check"] for n in from_files}
    assert {n["check"] for n in from_files} >= {plausibility.NEGATIVE_VALUE,
                                                plausibility.RUNS_MISSING,
                                                plausibility.KERNELS_VARY,
                                                plausibility.INTERVAL_BELOW_ZERO}


def test_write_result_tables_returns_what_it_wrote(tmp_path: Path) -> None:
    rec = bench.load_recorded(REPO / "app" / "bundled" / "h200-cupti-j1-fp16")
    written = bench.results.write_result_tables(tmp_path, rec.spec, rec.registry,
                                                rec.annotations, **rec.inputs)
    on_disk = bundle_writer.bundle_tables(tmp_path)
    assert sorted(written) == sorted(on_disk)
    for table, frame in written.items():
        pd.testing.assert_frame_equal(frame.reset_index(drop=True), on_disk[table],
                                      check_dtype=False)


def test_the_tables_before_the_mark_are_the_frames_and_the_trace_comes_after_it(
        tmp_path: Path) -> None:
    """Issue 40 (session 27): runs and aggregated, written from their columns, are handed to
    the checks as exactly the frames launches_to_runs and aggregate_runs make (values and
    dtypes); the NVML trace and the launch times, given as what makes them (the sampler's
    ``frame``, the CUPTI backend's), are made after the result-ready call and written as
    given (a live CUPTI job's recorded inputs: both tables)."""
    from profiling_worker.bundle.stats.aggregate import aggregate_runs, launches_to_runs

    rec = bench.load_recorded(REPO / "app" / "bundled" / "h200-cupti-gate-base")
    order: list[str] = []
    given = {name: rec.inputs[name] for name in ("nvml", "launch_times")}
    assert all(frame is not None and not frame.empty for frame in given.values())

    def maker(name: str) -> Any:
        return lambda: order.append(name) or given[name]

    written = bench.results.write_result_tables(
        tmp_path, rec.spec, rec.registry, rec.annotations,
        **{**rec.inputs, **{name: maker(name) for name in given}},
        ready=lambda: order.append("ready"))
    assert order == ["ready", "nvml", "launch_times"]
    params = list(rec.spec.parameter_names)
    runs = launches_to_runs(rec.inputs["launches"], params)
    pd.testing.assert_frame_equal(written[C.TABLE_RUNS], runs)
    pd.testing.assert_frame_equal(written[C.TABLE_AGGREGATED], aggregate_runs(runs, params))
    assert written[C.TABLE_NVML] is given["nvml"]
    assert written[C.TABLE_LAUNCH_TIMES] is given["launch_times"]


def test_each_file_is_written_once_the_runs_first_the_manifest_last(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 40: no table written twice; what the dashboard draws first (runs, aggregated) is
    on disk before the other tables, the manifest that says so (``result_ready``, the job still
    running) right after them, and the final manifest, which makes the bundle a result, last."""
    import os

    rec = bench.load_recorded(REPO / "app" / "bundled" / "h200-cupti-j1-fp16")
    job = bench._fresh_copy(rec, tmp_path)
    placed: list[str] = []
    replace = os.replace

    def recording(src: str, dst: str) -> None:
        placed.append(Path(dst).relative_to(job).as_posix())
        replace(src, dst)

    monkeypatch.setattr(os, "replace", recording)
    bench.post_process(rec, job)
    tables = [p for p in placed if p != C.MANIFEST_FILE]
    assert len(tables) == len(set(tables)), placed
    assert placed[:3] == ["tables/runs.parquet", "tables/aggregated.parquet", C.MANIFEST_FILE]
    assert not [p for p in placed if p.endswith(".csv")]  # Parquet only (issue 40)
    assert placed[-1] == C.MANIFEST_FILE and placed.count(C.MANIFEST_FILE) == 2
    assert {f"tables/{p.name}" for p in (job / C.TABLES_DIR).iterdir()} == set(tables)
