"""The backend registry (profiling_worker/schema/backends.py): names, variants, capabilities."""

from typing import get_args

import pytest

from profiling_worker import environment
from profiling_worker.schema import backends as B, columns as C

from tests.unit.profiling_worker.test_backend_choice import env


def test_the_spec_literal_and_the_registry_name_the_same_backends():
    assert set(get_args(B.Name)) == set(B.NAMES)
    assert B.NAMES[0] == B.DEFAULT  # the sidebar offers the default first


def test_each_environment_report_entry_resolves_to_the_variant_it_describes():
    old = env(nsight_python="0.9.6", ncu={"path": "/n", "version": "2025.3.1.0"})
    for probed, ncu_mode in ((env(), B.ATTACH), (old, B.LAUNCH)):
        report = environment.choose_backends(probed)
        assert set(report) == set(B.NAMES)
        assert B.resolve(B.NCU, report[B.NCU]["nsight_mode"]).mode == ncu_mode
    cupti = environment.choose_backends(env())[B.CUPTI]
    assert B.resolve(B.CUPTI, cupti["nsight_mode"]) is B.CUPTI_BACKEND


def test_launch_mode_is_the_only_variant_a_warm_worker_cannot_serve():
    assert [(b.name, b.mode) for b in B.ALL if not b.warm] == [(B.NCU, B.LAUNCH)]
    assert set(B.WARM_NAMES) == set(B.NAMES)


def test_capabilities_answer_the_questions_callers_ask():
    assert not B.on_gpu(B.CPU) and B.on_gpu(B.NCU) and B.on_gpu("unknown")
    assert B.duration_metric(B.CPU) == C.HOST_TIME and B.duration_metric("unknown") == C.GPU_TIME
    assert B.find("unknown") is None and B.find(B.CUPTI) is B.CUPTI_BACKEND
    assert [b.name for b in B.ALL if b.section_sets] == [B.NCU, B.NCU]
    assert B.CUPTI_BACKEND.l2_flush == B.FLUSH_REGION
    with pytest.raises(KeyError, match="is not one of ncu, cupti, cpu"):
        B.get("torch")
