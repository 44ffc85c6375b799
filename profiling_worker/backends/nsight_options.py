"""The keyword arguments the worker passes to ``nsight.analyze.kernel``, per backend, cut to
what the installed nsight-python accepts.

nsight-python's signature differs between releases (``nsight/analyze.py`` at tag v0.9.6 and in
the 1.1.0 wheel): 1.x renamed ``output`` to ``verbosity`` and added ``thermal_device`` and
``info_collectors``; 0.9.5 had one ``thermal_control`` where 0.9.6 has ``thermal_mode``,
``thermal_wait``, ``thermal_cont`` and ``thermal_timeout``. An option the installed version
does not take is left out, and when it carries a job setting the job gets a warning naming it
(shown with the job's warnings), so a setting is never dropped unsaid.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from profiling_worker.bundle.schema.kernel_filter import exact_names
from profiling_worker.bundle.schema.spec import JobSpec

#: nsight.analyze.kernel keyword -> the spec field it carries, where the names differ.
SPEC_FIELD = {"info_collectors": "collectors", "ignore_kernel_list": "ignore_kernels"}
#: The worker's own settings that a version may lack, with what serves instead (no warning).
FALLBACK = {
    "output": ("nsight-python 1.x calls it verbosity; its default, INFO, is the same progress "
               "output"),
    "thermal_device": "nsight-python 0.9.x reads NVML device 0; point_thermal_guard redirects it",
}


def base_options(spec: JobSpec, out_dir: Path) -> dict[str, Any]:
    """The options every nsight-python backend passes (``out_dir``: where the CSV and
    report go, as nsight-python's ``output_prefix``)."""
    return {
        "runs": spec.runs, "metrics": list(spec.metrics), "clock_control": spec.clock_control,
        "cache_control": spec.cache_control, "replay_mode": spec.replay_mode,
        "thermal_mode": spec.thermal_mode, "thermal_wait": spec.thermal_wait,
        "thermal_cont": spec.thermal_cont, "thermal_timeout": spec.thermal_timeout,
        "thermal_device": 0,  # CUDA_VISIBLE_DEVICES is pinned to the job's GPU (gpu_select)
        "output_prefix": f"{out_dir}/", "output_csv": True, "output": "progress",
    }


def ncu_options(spec: JobSpec, out_dir: Path, collectors: list[Any] | None) -> dict[str, Any]:
    """Nsight Compute's options: ``ignore_kernel_list`` gets the exact names of
    ``ignore_kernels`` (the worker's own reading leaves out the ``re:`` entries as well)."""
    return {**base_options(spec, out_dir), "info_collectors": collectors,
            "ignore_kernel_list": exact_names(spec.ignore_kernels) or None}


def cupti_options(spec: JobSpec, out_dir: Path, collectors: list[Any] | None) -> dict[str, Any]:
    """CUPTI's options: a region's kernel durations add up (``combine_kernel_metrics``); no
    ``ignore_kernel_list``, which would hide launches before the worker can list them."""
    return {**base_options(spec, out_dir), "info_collectors": collectors,
            "combine_kernel_metrics": _add}


def _add(x: float, y: float) -> float:
    return x + y


def accepted(nsight: Any, options: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``options`` cut to the keywords ``nsight.analyze.kernel`` takes, and one warning per
    setting left out (None values and :data:`FALLBACK` options are left out unsaid).

    Returns:
        (keyword arguments to pass, warnings for the job's events).
    """
    takes = inspect.signature(nsight.analyze.kernel).parameters
    version = getattr(nsight, "__version__", "(version unknown)")
    warnings = [f"nsight-python {version} does not accept {name}; the job's "
                f"{SPEC_FIELD.get(name, name)} {value!r} was not applied"
                for name, value in options.items()
                if name not in takes and value is not None and name not in FALLBACK]
    return {k: v for k, v in options.items() if k in takes}, warnings
