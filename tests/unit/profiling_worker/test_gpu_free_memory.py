"""The memory check of a GPU job counts the memory free on its GPU now, not the card's total
(issue 37: a job beside another process's allocations passed the check and ran out of memory
in CUDA): the worker reads NVML's ``free`` of the job's GPU by UUID just before the job
(``gpu_select.free_memory``), without a CUDA context. NVML is the fake of test_gpu_select.py,
two GPUs and a MIG instance with different free memory, so a read of the wrong device shows."""

from __future__ import annotations

import sys
import types

import pytest

from profiling_worker.bundle.errors import SpecRejected
from profiling_worker.bundle.schema import configs as cfgs
from profiling_worker.bundle.schema.spec import validate_spec
from profiling_worker.catalog.registry import load_registry
from profiling_worker.job import runner
from profiling_worker.probes import gpu_select
from tests.unit.profiling_worker.test_gpu_select import GPUS, MIG, UUID0, UUID1, nvml  # noqa: F401

GIB = 2**30
#: The environment report's GPUs: NVML's total memory (MiB), as probe_gpus records it.
ENV_GPUS = [{**g, "memory_mib": 140 * 1024} for g in GPUS]
#: fp32 matmul at n = 40,000: two inputs and a result of 6.4 GB each (17.9 GiB).
BIG = {"kernels": ["matmul"], "annotations": ["fp32"], "configs": [{"n": 40_000}],
       "backend": "cupti"}


def test_free_memory_is_read_by_uuid(nvml) -> None:  # noqa: F811
    assert gpu_select.free_memory(UUID0) == 100 * GIB
    assert gpu_select.free_memory(UUID1) == 7 * GIB
    assert gpu_select.free_memory(MIG) == 3 * GIB  # the instance's own, not its parent's


def test_no_nvml_or_an_unknown_gpu_says_nothing(nvml) -> None:  # noqa: F811
    assert gpu_select.free_memory("GPU-ffff") is None
    shut: list[bool] = []
    broken = types.SimpleNamespace(nvmlInit=lambda: (_ for _ in ()).throw(OSError("no driver")),
                                   nvmlShutdown=lambda: shut.append(True))
    assert gpu_select.free_memory(UUID0, broken) is None and not shut


def test_the_real_pynvml_says_nothing_of_a_gpu_it_cannot_read() -> None:
    """pynvml without an NVIDIA driver (CI), or with one that knows no such UUID: None, not
    an error."""
    pytest.importorskip("pynvml")
    assert gpu_select.free_memory(UUID0) is None


def test_torch_memory_this_process_reserved_counts_as_free(nvml, monkeypatch) -> None:  # noqa: F811
    """A warm worker's caching allocator holds memory NVML counts as used: its next job can
    reuse it."""
    cuda = types.SimpleNamespace(
        is_initialized=lambda: True, current_device=lambda: 0,
        get_device_properties=lambda _d: types.SimpleNamespace(uuid=UUID1[4:]),
        mem_get_info=lambda _d: (6 * GIB, 80 * GIB), memory_reserved=lambda _d: 5 * GIB)
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=cuda))
    # CUDA started on that GPU: CUDA's free memory (6 GiB here, NVML's fake says 7), no NVML
    init = nvml.nvmlInit
    monkeypatch.setattr(nvml, "nvmlInit", lambda: pytest.fail("NVML asked"))
    assert gpu_select.free_memory(UUID1) == 11 * GIB
    monkeypatch.setattr(nvml, "nvmlInit", init)
    assert gpu_select.free_memory(UUID0) == 100 * GIB  # torch's device is another GPU: NVML


def test_device_memory_counts_the_free_bytes_where_known() -> None:
    assert cfgs.device_memory("cupti", ENV_GPUS, UUID1) == (140 * GIB, "GPU NVIDIA H200")
    assert cfgs.device_memory("cupti", ENV_GPUS, UUID1, 7 * GIB) == (
        7 * GIB, f"memory free on GPU NVIDIA H200 now ({cfgs.gib(140 * GIB)} in all)")


def test_a_job_that_fits_the_total_but_not_the_free_memory_is_refused(nvml) -> None:  # noqa: F811
    registry = load_registry([])
    spec = validate_spec(BIG, registry.kernels)
    env = {"gpus": ENV_GPUS}
    runner._check_memory(spec, registry, env, gpu_select.resolve(0, GPUS, {}))  # 100 GiB free
    with pytest.raises(SpecRejected) as refused:
        runner._check_memory(spec, registry, env, gpu_select.resolve(1, GPUS, {}))  # 7 GiB
    message = str(refused.value)
    assert cfgs.gib(7 * GIB) in message and "memory free on GPU NVIDIA H200" in message
    assert cfgs.gib(140 * GIB) in message  # the total said beside it
