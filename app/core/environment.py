"""A short, readable summary of a worker environment report or a manifest's environment."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from profiling_worker.bundle.schema import columns as C, tools as T
from profiling_worker.bundle.schema.manifest import gpu_entry
from profiling_worker.bundle.schema.manifest import job_gpu_index as job_gpu_index

from app.core import frame_columns as F


def first_gpu(env: dict[str, Any], index: int) -> dict[str, Any]:
    """GPU ``index`` (NVML index) of ``env``, the worker's entry or an import's
    (:func:`~profiling_worker.bundle.schema.manifest.gpu_entry`, which the regression gate reads
    too).
    No default: a job's GPU is :func:`job_gpu_index` of its manifest, not always 0."""
    return gpu_entry(env, index)


def gpu_name(env: dict[str, Any], index: int) -> str:
    """``NVIDIA H200``-style name of GPU ``index`` (NVML index; a job's is :func:`job_gpu_index`
    of its manifest), or "" when there was none."""
    return str(first_gpu(env, index).get("name") or "")


def _version(value: Any) -> str:
    if isinstance(value, dict):
        return " ".join(str(v) for v in (value.get("version"), value.get("path")) if v)
    if isinstance(value, list):
        return "; ".join(_version(v) for v in value)
    return "" if value is None else str(value)


def environment_rows(env: dict[str, Any], backend: dict[str, Any] | None,
                     gpu_index: int, can_run: Sequence[str] | None = None
                     ) -> list[dict[str, str]]:
    """Rows ``{"Item", "Value"}``: GPU, driver, compute capability, memory, ncu, nsight-python,
    a job's backend (nsight mode, name, what it measures) where ``backend`` is given, the
    backends a machine can run where ``can_run`` is, CUPTI, torch, host, and the host CPU where
    recorded. Other missing items read "none". A machine has no backend of its own: "Backend
    none" read as if nothing could run on a machine without a GPU, where the cpu backend
    does."""
    gpu = first_gpu(env, gpu_index)
    memory = gpu.get("memory_mib")
    job = [("nsight mode", backend.get("nsight_mode")), ("Backend", backend.get("name")),
           ("Measures", backend.get("measurement"))] if backend is not None else []
    machine = [("Backends it can run", ", ".join(can_run))] if can_run is not None else []
    items = [
        ("GPU", gpu.get("name") or "none"),
        ("GPU UUID", gpu.get("uuid")),
        ("Driver", gpu.get("driver") or env.get("driver")),
        ("Compute capability", gpu.get("compute_capability")),
        ("Memory", f"{memory:,} MiB" if isinstance(memory, (int, float)) else None),
        ("Max SM / memory clock", _clocks(gpu)),
        (f"{T.NCU.words} (ncu)", _version(env.get(T.NCU.key))),
        (T.NSIGHT_PYTHON.words, env.get(T.NSIGHT_PYTHON.key)),
        *job,
        *machine,
        (T.CUPTI_PYTHON.words, env.get(T.CUPTI_PYTHON.key)),
        ("libcupti", _version(env.get("libcupti"))),
        ("torch", " / ".join(str(v) for v in (env.get("torch"), env.get("torch_cuda")) if v)),
        ("Python", env.get("python")),
        ("Host", " ".join(str(v) for v in (env.get("host"), env.get("platform")) if v)),
    ]
    cpu = _host_cpu(env.get("cpu"))  # a row where recorded: older bundles hold none
    items += [("Host CPU", cpu)] if cpu else []
    return [{F.ITEM: k, C.VALUE: str(v) if v not in (None, "", []) else "none"} for k, v in items]


def _host_cpu(cpu: object) -> str | None:
    """``"Intel(R) Xeon(R) Processor × 2 (x86_64)"``: the model, logical CPUs and architecture
    the worker recorded (``environment.cpu``, what the gate compares for a cpu job); None for
    a bundle recorded before it."""
    if not isinstance(cpu, dict) or not any(cpu.get(k) for k in ("model", "count", "machine")):
        return None
    count, machine = cpu.get("count"), cpu.get("machine")
    return (f"{cpu.get('model') or 'model not recorded'}"
            + (f" × {count}" if count else "") + (f" ({machine})" if machine else ""))


def _clocks(gpu: dict[str, Any]) -> str | None:
    sm, mem = gpu.get("max_sm_clock_mhz"), gpu.get("max_mem_clock_mhz")
    return f"{sm} / {mem} MHz" if sm or mem else None
