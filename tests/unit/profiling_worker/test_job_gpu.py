"""One answer to "which GPU did the job run on" for the worker, the gate, the timeline and the
plausibility checks: the manifest's gpu.nvml_index, not the spec's visible-device index."""

from __future__ import annotations

import copy
import json

from profiling_worker.bundle.gate.context import measurement_context
from profiling_worker.bundle.schema.manifest import job_gpu, job_gpu_index
from tests.scenarios import SCENARIOS

BUNDLE = SCENARIOS / "h200-cupti-gate-base"


def _on_second_gpu() -> dict:
    """The bundled manifest as a job under CUDA_VISIBLE_DEVICES=1 with ``"gpu": 0`` records it:
    visible index 0, NVML index 1 (issue 11 case 3), beside another GPU model at NVML index 0."""
    manifest = json.loads((BUNDLE / "manifest.json").read_text())
    h200 = manifest["environment"]["gpus"][0]
    other = {**copy.deepcopy(h200), "index": 0, "name": "NVIDIA L4", "max_sm_clock_mhz": 2040}
    manifest["environment"]["gpus"] = [other, {**h200, "index": 1}]
    manifest["gpu"] = {**manifest["gpu"], "index": 0, "nvml_index": 1}
    manifest["spec"] = {**manifest["spec"], "gpu": 0}
    return manifest


def test_the_job_gpu_is_found_by_its_nvml_index() -> None:
    manifest = _on_second_gpu()
    assert job_gpu_index(manifest) == 1
    assert job_gpu(manifest)["name"] == "NVIDIA H200"
    context = measurement_context(manifest)  # the gate read the visible index: the L4
    assert context["gpu"] == "NVIDIA H200" and context["max_sm_clock_mhz"] == "1980"


def test_a_manifest_without_gpu_fields_falls_back_to_the_first_entry_or_nothing() -> None:
    assert job_gpu({"environment": {"gpus": [{"index": 3, "name": "X"}]}})["name"] == "X"
    assert job_gpu({}) == {} and job_gpu_index({}) == 0
