"""A call's time from recorded evidence (app/services/call_time.py, issue 37): the rate is the
best FLOP/s a finished job measured (this host's for cpu, the bundled H200 jobs' for a GPU),
never assumed; ``kernel-sweep`` asks as the sidebar does."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from profiling_worker.bundle import loader
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.spec import validate_spec

from app import settings, sweep_cli
from app.services import call_time, result_store

HUGE = {"kernels": ["matmul"], "annotations": ["fp16"], "configs": [{"n": 40000}], "runs": 2,
        "backend": "cpu"}


def test_the_rate_is_the_best_of_the_jobs_configs(cpu_bundle: Path) -> None:
    """The job's rate of fp16: its work table's Flops over its mean host time, the best config."""
    agg = loader.read_table(cpu_bundle, C.TABLE_AGGREGATED)
    work = loader.read_table(cpu_bundle, C.TABLE_WORK)
    both = agg[(agg[C.ANNOTATION] == "fp16")].merge(work, on=[C.ANNOTATION, C.CONFIG])
    expected = max(pd.to_numeric(both[C.FLOPS]) / pd.to_numeric(both[C.AVG]) * 1e9)
    rate = call_time.best_rate("matmul", "fp16", "cpu", cpu_bundle.parent)
    assert rate is not None and rate.job_id == cpu_bundle.name
    assert abs(rate.flop_per_s - expected) <= 1e-9 * expected
    assert call_time.best_rate("matmul", "fp16", "cupti", cpu_bundle.parent) is None


def test_a_gpu_backend_takes_the_bundled_jobs_rate_and_names_it(tmp_path: Path) -> None:
    rate = call_time.best_rate("matmul", "fp16", "cupti", tmp_path, settings.bundled_dir())
    assert rate is not None and "the bundled H200 job" in rate.text()
    assert (settings.bundled_dir() / rate.job_id).is_dir()


def test_kernel_sweep_asks_before_an_hour_long_call(cpu_bundle: Path, tmp_path: Path,
                                                    capsys) -> None:
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(HUGE), encoding="utf-8")
    before = sorted(p.name for p in cpu_bundle.parent.iterdir())
    assert sweep_cli.main([str(spec_file), "--results", str(cpu_bundle.parent), "--local"]) == 5
    err = capsys.readouterr().err
    question, _ = call_time.call_check(validate_spec(HUGE), cpu_bundle.parent)
    assert question is not None and question in err and cpu_bundle.name in err
    assert sorted(p.name for p in cpu_bundle.parent.iterdir()) == before, "nothing queued"


def test_a_callers_listing_and_rates_are_read_not_the_store_again(cpu_bundle: Path) -> None:
    """A caller's listing of the store (the page's) is the one looked through, and its
    reader of rates (the app's cache) the one asked; the folders are not listed again."""
    where = call_time.Witnesses(cpu_bundle.parent, None, listed=[])
    assert call_time.best_rate("matmul", "fp16", "cpu", cpu_bundle.parent, where=where) is None
    read: list[Path] = []
    listed = [b for b in result_store.list_bundles(cpu_bundle.parent)[0]]
    where = call_time.Witnesses(cpu_bundle.parent, None, listed,
                                lambda path: read.append(path) or {"fp16": 2e9})
    rate = call_time.best_rate("matmul", "fp16", "cpu", cpu_bundle.parent, where=where)
    assert rate is not None and rate.flop_per_s == 2e9 and read == [cpu_bundle]
