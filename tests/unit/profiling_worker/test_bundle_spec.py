"""A bundle's spec read typed (bundle/schema/bundle_spec.py), and the import's explicit "unknown
backend" entry (bundle/schema/backends.py), on real files: the H200 deep-dive bundle's spec and
nsight-python 1.1 CUPTI CSVs that hold durations only."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from profiling_worker.importing import import_nsight_output
from profiling_worker.bundle.schema import backends as B, tools as T
from profiling_worker.bundle.schema.bundle_spec import (PartialSpec, backend_of, manifest_spec,
                                                        read_spec)
from profiling_worker.bundle.schema.manifest import read_manifest
from profiling_worker.bundle.schema.spec import JobSpec, SpecInvalid, validate_spec
from profiling_worker.job.serve import refusal
from tests.scenarios import scenario_dir

FIX = Path(__file__).resolve().parents[2] / "fixtures"
DEEP = scenario_dir("h200-ncu-deepdive-fp16-4096")
CUPTI_11 = FIX / "h200_import" / "nspy110_cupti"


def test_an_import_of_unknown_backend_is_a_partial_spec_with_its_written_options(
        tmp_path: Path) -> None:
    manifest = read_manifest(import_nsight_output(sorted(CUPTI_11.glob("*.csv")), tmp_path, "c"))
    spec = manifest_spec(manifest)
    assert isinstance(spec, PartialSpec)
    assert spec.backend == B.UNKNOWN and backend_of(manifest, spec) == B.UNKNOWN
    assert spec.runs == 30 and spec.configs and spec.metrics == ("gpu__time_duration.sum",)
    # the importer writes nsight-python's defaults for what the files cannot tell
    assert spec.cache_control == "all" and spec.thermal_mode == "auto"
    assert "cache_control" in manifest["provenance"]["spec_fields_defaulted"]


def test_a_run_bundle_reads_back_as_its_job_spec() -> None:
    raw = json.loads((DEEP / "spec.json").read_text(encoding="utf-8"))
    spec = read_spec(raw)
    assert isinstance(spec, JobSpec) and spec.section_set == "full" and spec.runs == 3
    assert backend_of(read_manifest(DEEP), spec) == B.NCU
    written = PartialSpec.as_written(raw)  # the unvalidated reading the result store uses
    assert (written.kernels, written.backend, written.label) == (
        spec.kernels, spec.backend, spec.label)
    assert read_spec(None) is None and read_spec(["not", "an", "object"]) is None


def test_the_unknown_entry_stays_nsight_output_when_a_backend_is_added(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A GPU backend that uses no nsight-python (say, a bare CUPTI tracer) emptied the old
    # intersection rule's tools of "unknown"; the explicit entry does not follow the others.
    bare = replace(B.CUPTI_BACKEND, tools=())
    monkeypatch.setattr(B, "ALL", (*B.ALL, bare))
    assert B.tools(B.UNKNOWN) == (T.NSIGHT_PYTHON,) == B.IMPORTED_UNKNOWN.tools
    assert B.on_gpu(B.UNKNOWN) and B.duration_metric(B.UNKNOWN) == "gpu__time_duration.sum"
    assert B.UNKNOWN not in B.NAMES and B.IMPORTED_UNKNOWN not in B.ALL


def test_unknown_is_no_spec_choice() -> None:
    raw = json.loads((DEEP / "spec.json").read_text(encoding="utf-8"))
    with pytest.raises(SpecInvalid):
        validate_spec({**raw, "backend": B.UNKNOWN})


def test_the_warm_worker_refuses_by_the_typed_spec() -> None:
    raw = json.loads((DEEP / "spec.json").read_text(encoding="utf-8"))
    assert refusal(read_spec(raw), B.NCU, 0) is None
    assert refusal(read_spec({**raw, "gpu": 1}), B.NCU, 0) == "serves GPU 0, the job asks GPU 1"
    assert refusal(read_spec(raw), B.CUPTI, 0) == "serves backend cupti, the job asks ncu"
    # an invalid spec is judged on what it says; the job itself then fails by name
    broken = read_spec({**raw, "runs": -1, "gpu": 2})
    assert isinstance(broken, PartialSpec)
    assert refusal(broken, B.NCU, 0) == "serves GPU 0, the job asks GPU 2"
    assert refusal(None, B.NCU, 0) is None
