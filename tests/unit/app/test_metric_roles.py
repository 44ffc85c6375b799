"""Derived and normalised imported metrics are labelled from the bundle's manifest."""

from __future__ import annotations

from pathlib import Path

from app.core import metric_roles
from profiling_worker.importing import import_nsight_output
from profiling_worker.bundle.schema.manifest import read_manifest

CASES = Path(__file__).resolve().parents[2] / "fixtures" / "import_cases"


def test_imported_derived_and_normalised_metrics_are_labelled(tmp_path: Path) -> None:
    derived = read_manifest(import_nsight_output([CASES / "03-derived-0.9.5"], tmp_path, "d"))
    assert metric_roles.label(derived, "compute_tflops") == "compute_tflops (derived)"
    assert metric_roles.label(derived, "gpu__time_duration.sum") == "gpu__time_duration.sum"
    normal = read_manifest(import_nsight_output([CASES / "04-normalized"], tmp_path, "n"))
    name = "gpu__time_duration.sum relative to torch"
    assert metric_roles.label(normal, name) == f"{name} (normalised)"
    assert "AvgValue of torch" in metric_roles.describe(normal)[0]
    assert metric_roles.roles({"metric_roles": "not a dict"}) == {}
