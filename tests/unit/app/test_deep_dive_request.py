"""From a sweep point to its deep-dive spec (issue 13), on the bundled H200 sweeps."""

from __future__ import annotations

import dataclasses

import pytest

from profiling_worker.bundle.schema import columns as C, metrics as M
from profiling_worker.bundle.schema.spec import validate_spec

from app.core.deep_dive_request import (DEEP_DIVE_SET, NoDeepDive, deep_dive_spec, kernel_of,
                                        sweep_points)
from app.core.spec_form import builtin_catalog
from tests.unit.app.bundled import bundled


def test_every_point_of_the_sweep_is_offered() -> None:
    bundle = bundled("h200-ncu-matmul-sweep")
    points = sweep_points(bundle)
    assert len(points) == 5 * 3  # sizes x regions (fp32, fp16, bf16)
    assert {"fp16 n=4096"} <= {f"{a} {c}" for a, c in zip(points[C.ANNOTATION],
                                                            points["ConfigLabel"])}


def test_deep_dive_spec_profiles_that_point_alone_with_the_full_set() -> None:
    bundle = bundled("h200-cupti-stability")  # any backend: the deep dive is an ncu job
    raw = deep_dive_spec(bundle, "fp16", {"n": 1024}, builtin_catalog())
    spec = validate_spec(raw, builtin_catalog())
    assert (spec.kernels, spec.annotations, [dict(c) for c in spec.configs]) == (
        ("matmul",), ("fp16",), [{"n": 1024}])
    assert spec.backend == "ncu" and spec.section_set == DEEP_DIVE_SET
    assert list(spec.metrics) == list(M.DEEP_DIVE_COLLECT)  # memory bytes by name too
    assert bundle.job_spec is not None and spec.cache_control == bundle.job_spec.cache_control


def test_a_region_is_run_by_the_kernel_that_declares_it() -> None:
    catalog = builtin_catalog()
    assert kernel_of("x*2", ["scale", "vector_add", "fusion"], catalog) == "scale"
    assert kernel_of("nowhere", ["scale", "vector_add"], catalog) is None
    bundle = bundled("h200-ncu-elementwise")
    with pytest.raises(NoDeepDive, match="no single kernel"):
        deep_dive_spec(bundle, "nowhere", {"n": 1024}, catalog)


def test_an_imported_job_cannot_be_profiled_again() -> None:
    bundle = bundled("h200-ncu-matmul-sweep")
    imported = dataclasses.replace(bundle, manifest={**bundle.manifest,
                                                     "provenance": {"imported_from": ["x.csv"]}})
    with pytest.raises(NoDeepDive, match="imported"):
        deep_dive_spec(imported, "fp16", {"n": 4096}, builtin_catalog())
