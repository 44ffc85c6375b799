"""load_bundle on a real cpu bundle, a bundle with tables missing, and a non-bundle."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from profiling_worker.bundle.loader import load_bundle
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import (ManifestError, manifest_stamp, read_manifest,
                                                     write_manifest)
from profiling_worker.bundle.table_problems import Fault
from profiling_worker.bundle.writer import table_csv
from tests.scenarios import SCENARIOS


def test_a_cpu_bundle_recorded_before_the_worker_set_its_threads_says_no_count(
        cpu_bundle: Path) -> None:
    """A cpu job recorded before ``cpu_threads`` ran with torch's default threads, which its
    files do not tell: no count is said for it (the spec's default of 1 is not assumed), while
    a queued job's spec says the count it will get."""
    from app.core.provenance import host_timer_warning
    from profiling_worker.bundle.schema.manifest import JobStatus

    manifest = json.loads((cpu_bundle / "manifest.json").read_text())
    manifest["backend"] = {k: v for k, v in manifest["backend"].items()
                           if k not in ("cpu_threads", "measurement")}
    manifest["spec"].pop("cpu_threads")
    (cpu_bundle / "manifest.json").write_text(json.dumps(manifest))
    older = load_bundle(cpu_bundle)
    assert older.cpu_threads is None and older.measurement == "host wall-clock, not GPU"
    assert host_timer_warning(JobStatus.DONE, older.cpu_threads) == (
        "Every time here is host wall-clock, not GPU (cpu backend).")
    assert host_timer_warning(JobStatus.QUEUED, 2) == (
        "Every time this job records will be host wall-clock, not GPU, 2 torch threads "
        "(cpu backend).")


def test_real_cpu_bundle(cpu_bundle: Path) -> None:
    bundle = load_bundle(cpu_bundle)
    assert bundle.job_id == cpu_bundle.name and bundle.status == "done"
    assert bundle.backend == "cpu" and bundle.host_timer
    assert bundle.duration_metric == C.HOST_TIME
    assert bundle.measurement == "host wall-clock, not GPU, 1 torch thread"
    assert bundle.cpu_threads == 1
    assert bundle.parameters == ("n",)
    runs = bundle.table(C.TABLE_RUNS)
    assert len(runs) == 3 * 2 * 3  # annotations x configs x runs
    assert set(runs[C.METRIC]) == {C.HOST_TIME}
    assert not bundle.table(C.TABLE_WORK).empty
    paths = {f.relpath for f in bundle.files}
    assert {"manifest.json", "spec.json", "tables/runs.parquet"} <= paths
    assert "tables/runs.csv" not in paths  # made on download (issue 40)
    assert all(f.size >= 0 for f in bundle.files)
    assert manifest_stamp(cpu_bundle).count(":") == 2


def test_two_manifest_writes_in_one_clock_tick_have_two_stamps(cpu_bundle: Path) -> None:
    """The app's cache key tells the result-ready write from the final one even where the
    filesystem's clock is coarse (both writes' mtimes equal)."""
    before = manifest_stamp(cpu_bundle)
    mtime_ns = (cpu_bundle / "manifest.json").stat().st_mtime_ns
    write_manifest(cpu_bundle, read_manifest(cpu_bundle))
    os.utime(cpu_bundle / "manifest.json", ns=(mtime_ns, mtime_ns))
    assert manifest_stamp(cpu_bundle) != before


def test_missing_tables_load_empty(cpu_bundle: Path) -> None:
    shutil.rmtree(cpu_bundle / C.TABLES_DIR)
    bundle = load_bundle(cpu_bundle)
    assert all(bundle.table(name).empty for name in C.TABLES)
    assert bundle.table("nonexistent").empty


def test_csv_used_when_parquet_missing(cpu_bundle: Path) -> None:
    # a bundle written before issue 40 holds each table's CSV beside its Parquet file
    csv = table_csv(cpu_bundle, C.TABLE_RUNS)
    assert csv is not None
    (cpu_bundle / C.TABLES_DIR / "runs.csv").write_bytes(csv)
    (cpu_bundle / C.TABLES_DIR / "runs.parquet").unlink()
    bundle = load_bundle(cpu_bundle)
    assert len(bundle.table(C.TABLE_RUNS)) == 18
    assert bundle.sources[C.TABLE_RUNS] == "tables/runs.csv"  # which file, for the gate
    assert bundle.sources[C.TABLE_AGGREGATED] == "tables/aggregated.parquet"
    assert C.TABLE_LAUNCH_TIMES not in bundle.sources  # a cpu job has no CUPTI launch times
    assert bundle.table_problems == ()


def test_not_a_bundle(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="no manifest.json"):
        load_bundle(tmp_path)


def test_spec_is_typed_for_worker_jobs_and_imports(cpu_bundle: Path, tmp_path: Path) -> None:
    # A worker bundle opens with the JobSpec it ran; an import whose files do not tell the
    # backend (nsight-python 1.1 CUPTI CSVs: durations only) keeps what they tell, no options.
    from profiling_worker.bundle.schema.bundle_spec import PartialSpec, read_spec
    from profiling_worker.importing import import_nsight_output
    from profiling_worker.bundle.schema.spec import JobSpec

    worker = load_bundle(cpu_bundle)
    assert isinstance(worker.spec, JobSpec) and worker.job_spec is worker.spec
    assert worker.spec.backend == "cpu" and worker.parameters == worker.spec.parameter_names == ("n",)
    csvs = sorted((SCENARIOS / "h200-cupti-stability" / "nsight" / "c0").glob("*.csv"))
    imported = load_bundle(import_nsight_output(csvs, tmp_path, "cupti-csvs"))
    assert isinstance(imported.spec, PartialSpec) and imported.job_spec is None
    assert imported.backend == "unknown" and imported.spec.backend == "unknown"
    assert imported.parameters == imported.spec.parameter_names and imported.parameters
    assert imported.spec.metrics == (C.GPU_TIME,) and imported.spec.runs
    assert imported.gpu_index == 0
    assert read_spec(None) is None and read_spec(["not", "an", "object"]) is None
    assert read_spec({"configs": 3}) == PartialSpec((), (), None, (), None, "")
    # a cpu job recorded while the form still took a GPU index keeps its JobSpec (options)
    old_cpu = read_spec({**json.loads((cpu_bundle / "spec.json").read_text()), "gpu": 3})
    assert isinstance(old_cpu, JobSpec) and (old_cpu.backend, old_cpu.gpu) == ("cpu", 0)


def test_numbers_stored_as_text_are_read_as_numbers_and_named(tmp_path: Path) -> None:
    """A new user's trial: a bundle whose AvgValue was stored as text took every page down
    (TypeError in the plausibility checks), the Files page included."""
    import pandas as pd

    job = tmp_path / "edited"
    shutil.copytree(SCENARIOS / "h200-ncu-matmul-sweep", job)
    table = job / C.TABLES_DIR / f"{C.TABLE_AGGREGATED}.parquet"
    original = pd.read_parquet(table)
    edited = original.assign(**{C.AVG: original[C.AVG].astype(str)})
    edited.loc[0, C.AVG] = "n/a"
    edited.to_parquet(table)
    bundle = load_bundle(job)
    avg = bundle.table(C.TABLE_AGGREGATED)[C.AVG]
    assert avg.dtype.kind == "f" and avg.iloc[1:].tolist() == original[C.AVG].iloc[1:].tolist()
    assert pd.isna(avg.iloc[0])
    assert any("column AvgValue holds text, read as numbers (1 cell with no number left "
               "empty)" in p for p in bundle.problems), bundle.problems
    (record,) = [p for p in bundle.table_problems if p.table == C.TABLE_AGGREGATED]
    assert (record.fault, record.file, record.columns, record.cells) == (
        Fault.TEXT_IN_NUMBERS, "tables/aggregated.parquet", (C.AVG,), 1)


def test_a_cpu_job_is_not_called_damaged(cpu_bundle: Path) -> None:
    """A new tester's find: every cpu job showed five "damaged bundle" warnings, its empty NVML
    trace having been stored with untyped (object) columns that the text check then flagged."""
    import pandas as pd

    bundle = load_bundle(cpu_bundle)
    assert bundle.problems == ()
    stored = pd.read_parquet(cpu_bundle / C.TABLES_DIR / f"{C.TABLE_NVML}.parquet")
    assert stored.empty and all(dtype.kind in "fi" for dtype in stored.dtypes), stored.dtypes


def test_an_empty_untyped_column_is_read_as_numbers_without_a_problem(tmp_path: Path) -> None:
    """Bundles written before the trace was typed keep their object columns: no problem named."""
    import pandas as pd

    job = tmp_path / "old-cpu"
    shutil.copytree(SCENARIOS / "h200-ncu-matmul-sweep", job)
    empty = pd.DataFrame({C.TIME_S: pd.Series([], dtype=object),
                          C.SM_CLOCK_MHZ: pd.Series([], dtype=object)})
    empty.to_parquet(job / C.TABLES_DIR / f"{C.TABLE_NVML}.parquet")
    bundle = load_bundle(job)
    assert not any(C.TABLE_NVML in p for p in bundle.problems), bundle.problems
    assert bundle.table(C.TABLE_NVML)[C.TIME_S].dtype.kind in "fi"
