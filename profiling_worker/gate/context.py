"""What a bundle's durations depend on besides the kernel under test, and where two bundles
differ in it: backend, cache and clock control, GPU model and maximum clocks, driver and the
versions of the profiling tools its backend uses (``Backend.tools``, schema/tools.py:
nsight-python; ncu for ``ncu``, cupti-python for ``cupti``). Two bundles that differ in any of these are **not comparable**: a changed duration
could come from the measurement, not from the kernel (e.g. ncu's serialised replay vs CUPTI's
activity records measure the same matmul up to several % apart).

The kernel's own software (torch, Triton, the kernel file) is deliberately not compared: that is
what a CI candidate changes.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from profiling_worker.schema import backends as B, tools as T
from profiling_worker.schema.manifest import JobStatus, job_gpu

#: Context field -> what it is, in words (the reason names it); the tool versions are those of
#: :mod:`~profiling_worker.schema.tools`, keyed as in the manifest's ``environment``.
FIELDS: dict[str, str] = {
    "status": "job status",
    "backend": "backend",
    "cache_control": "cache control",
    "clock_control": "clock control",
    "gpu": "GPU model",
    "max_sm_clock_mhz": "max SM clock (MHz)",
    "max_mem_clock_mhz": "max memory clock (MHz)",
    "driver": "driver",
    **{tool.key: f"{tool.words} version" for tool in T.ALL},
}


def measurement_context(manifest: dict[str, Any]) -> dict[str, str | None]:
    """The fields of :data:`FIELDS` for one bundle, as strings (None: the bundle does not say).

    Args:
        manifest: the bundle's ``manifest.json`` (its ``spec``, ``backend``, ``environment``).
    """
    spec = manifest.get("spec") or {}
    env = manifest.get("environment") or {}
    backend = str((manifest.get("backend") or {}).get("name") or spec.get("backend") or "")
    gpu = job_gpu(manifest) if B.on_gpu(backend) else {}
    gpu_name = (manifest.get("gpu") or {}).get("name") or gpu.get("name")
    used = B.tools(backend)
    raw = {
        "status": manifest.get("status"),
        "backend": backend,
        "cache_control": spec.get("cache_control"),
        "clock_control": spec.get("clock_control"),
        "gpu": gpu_name if B.on_gpu(backend) else "host CPU",
        "max_sm_clock_mhz": gpu.get("max_sm_clock_mhz"),
        "max_mem_clock_mhz": gpu.get("max_mem_clock_mhz"),
        "driver": gpu.get("driver"),
        **{tool.key: tool.version(env) if tool in used else None for tool in T.ALL},
    }
    return {k: None if v in (None, "") else str(v) for k, v in raw.items()}


def context_differences(base: dict[str, Any], candidate: dict[str, Any],
                        ignore: Collection[str] = ()) -> list[str]:
    """Why two bundles' durations cannot be judged against each other (empty: they can).

    A field both bundles leave unsaid is not held against them; one side saying and the other
    not is a difference (a CI gate cannot assume the unsaid value). A bundle not ``done`` holds
    incomplete tables and is never comparable.

    Args:
        base, candidate: the two bundles' manifests.
        ignore: keys of :data:`FIELDS` left out (the backends page compares two backends on
            purpose, so it ignores ``backend`` and the tools only one of them uses).

    Returns:
        One sentence per differing field, e.g. ``"backend: ncu vs cupti"`` (baseline first).
    """
    ctx_b, ctx_c = measurement_context(base), measurement_context(candidate)
    out = [f"{FIELDS[k]}: {ctx_b[k] or 'not recorded'} vs {ctx_c[k] or 'not recorded'}"
           for k in FIELDS if k not in ignore and ctx_b[k] != ctx_c[k]]
    for name, ctx in (("baseline", ctx_b), ("candidate", ctx_c)):
        if ctx["status"] != JobStatus.DONE.value and ctx_b["status"] == ctx_c["status"]:
            out.append(f"{name} job is {ctx['status'] or 'of unknown status'}, not done")
    return out
