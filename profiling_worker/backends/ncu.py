"""Run side of the ``ncu`` backend: Nsight Compute through nsight-python.

The installed nsight-python decides how it runs (bundle/schema/backends.py NCU_LAUNCH, NCU_ATTACH):
0.9.x re-runs the worker under ``ncu`` (launch mode), >= 1.0 attaches ncu >= 2026.2.1 to the
running worker (attach mode; nsight/collection/ncu.py in the 1.1.0 wheel compares against
2026.2.1.0). Either way a job's configs go in calls of about a minute (ncu_calls.py), so that a
cancel keeps the calls finished before it.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from profiling_worker.probes import gpu_select
from profiling_worker.backends import nsight_backend as nb
from profiling_worker.backends.base import (Collection, Emit, RunCounter, launches_frame,
                                            split_unattributed, unattributed_frame,
                                            unattributed_warning, user_collector_info)
from profiling_worker.catalog.user_collectors import UserCollector
from profiling_worker.backends import ncu_calls
from profiling_worker.backends.ncu_set import ncu_with_set
from profiling_worker.backends.nsight_options import accepted, ncu_options
from profiling_worker.backends.run_side import NO_GPU, BackendStatus, unavailable
from profiling_worker.probes.environment import MODULE_AT, version_tuple
from profiling_worker.bundle.errors import ProfilingFailed
from profiling_worker.bundle.schema import backends as B, columns as C, tools as T
from profiling_worker.bundle.schema.run_range import KPROF_DOMAIN
from profiling_worker.bundle.schema.spec import JobSpec

ATTACH_MIN_NCU = (2026, 2, 1)


class NcuBackend(nb.NsightBackend):
    """Nsight Compute through nsight-python, in launch or attach mode (``nsight_mode``)."""

    name = B.NCU

    def probe(self, env: dict[str, Any]) -> BackendStatus:
        """Whether Nsight Compute can run here, and in which mode (``nsight_mode``)."""
        nspy_version = T.NSIGHT_PYTHON.version(env)
        nspy = version_tuple(nspy_version)
        ncu = env.get(T.NCU.key) or {}
        if not env.get("gpus"):
            return unavailable(*NO_GPU)
        if not nspy:
            return unavailable("nsight-python is not installed",
                               "pip install nsight-python (>=1.1 needs Nsight Compute >= "
                               "2026.2.1; use nsight-python==0.9.6 with an older ncu)")
        if not ncu.get("path"):
            return unavailable("Nsight Compute CLI (ncu) not found on PATH", "install Nsight "
                               "Compute and put its ncu on PATH (e.g. /usr/local/cuda/bin)")
        if not env.get("ncu_report"):
            return unavailable("the ncu-report package is missing", "pip install ncu-report")
        if str(env["ncu_report"]).startswith(MODULE_AT):
            # Nsight Compute 2025.3.1's own copy: in the worker's job the reader died of SIGSEGV
            # after nsight-python's read (device run "gpu 1206-s18cold", not located); read
            # alone, launches and summary read, but its IAction has no sections(), which the
            # deep dive reads ("gpu 1206-s19final")
            return unavailable(f"only Nsight Compute's own ncu_report ({env['ncu_report']}) is "
                               "importable: the worker's job crashed with it, and it lacks "
                               "IAction.sections(), which the deep dive reads",
                               "pip install ncu-report")
        if nspy < (1, 0):
            return BackendStatus(True, f"nsight-python {nspy_version} launch mode (re-runs the "
                                       f"worker under ncu {ncu.get('version')})",
                                 nsight_mode=B.NCU_LAUNCH.nsight_mode)
        if version_tuple(ncu.get("version"))[:3] < ATTACH_MIN_NCU:
            return unavailable(f"nsight-python {nspy_version} needs Nsight Compute >= "
                               f"2026.2.1 (attach mode), found {ncu.get('version')}",
                               "install Nsight Compute >= 2026.2.1, or pip install "
                               "nsight-python==0.9.6 (launch mode works with this ncu)")
        return BackendStatus(True, f"nsight-python {nspy_version} attach mode, ncu "
                                   f"{ncu['version']}", nsight_mode=B.NCU_ATTACH.nsight_mode)

    def load(self, status: BackendStatus) -> Any:
        """Import nsight (1.x activates Nsight Compute at import). A launch-mode worker is never
        warm: only attach mode warms up."""
        import nsight

        return nsight

    times_warm_up = True  # collect_ncu plans its calls by each config's warm-up call

    def warm_configs(self, spec: JobSpec) -> list[int] | None:
        """The launch-mode child warms up the configs of its call only (ncu_calls.py)."""
        return ncu_calls.child_configs(spec) if nb.in_launch_child() else None

    def collect(self, nsight: Any, spec: JobSpec, bodies: Sequence[Any], out_dir: Path,
                emit: Emit, uuid: str | None, user: Sequence[UserCollector] = (),
                warm_up_s: Sequence[float] | None = None) -> Collection | None:
        """:func:`collect_ncu`."""
        return collect_ncu(nsight, spec, bodies, out_dir, emit, uuid, user, warm_up_s)


def collect_ncu(nsight: Any, spec: JobSpec, bodies: Sequence[Any], out_dir: Path,
                emit: Emit, uuid: str | None = None, user: Sequence[UserCollector] = (),
                warm_up_s: Sequence[float] | None = None) -> Collection | None:
    """Profile with Nsight Compute in the calls :func:`ncu_calls.plan` gives (one for a small
    job); returns None in the launch-mode child (which exits). A cancel, or a later call that
    fails, keeps the calls read before it (``shortfall``); ``warm_up_s``: each config's
    warm-up call (attach mode).

    Raises:
        ProfilingFailed: ncu failed in the first call, or its report is missing, or the
            reports hold no launch.
        KernelFailed: a kernel body raised in the first call.
        Cancelled: the cancel came before any call was read.
    """
    import nvtx

    counter = RunCounter(spec, emit)
    profiled = nb.profiled_function(spec, bodies, counter,
                                    lambda m: nvtx.annotate(m, domain=KPROF_DOMAIN))
    warnings: list[str] = []
    thermal = point_thermal_guard(nsight, uuid) if spec.thermal_mode != "off" else None
    recorders, collectors = None, None
    if spec.collectors and "info_collectors" in inspect.signature(nsight.analyze.kernel).parameters:
        recorders, collectors = nb.info_collectors(nsight, spec, counter, uuid, user)
    elif spec.collectors:
        warnings.append("info collectors need nsight-python >= 1.1 (attach mode or CUPTI); "
                        "the worker's NVML trace of the job is there instead")
    options, dropped = accepted(nsight, ncu_options(spec, out_dir, collectors))
    warnings += dropped
    if nb.in_launch_child():  # no section set on ncu's command line there: the parent's has it
        ncu_calls.child_call(nsight, spec, options, profiled, counter)
        return None
    plan = ncu_calls.plan(spec, warm_up_s)
    if len(plan) > 1:  # a job of one call (J1) logs as before
        emit("log", message=ncu_calls.plan_text(plan, len(spec.configs)), calls=plan)
    calls = ncu_calls.NcuCalls(nsight, spec, options, profiled, out_dir, emit, counter)
    with ncu_with_set(spec.section_set, out_dir.parent) as ncu:
        short = calls.shortfall(calls.run(plan))
    collection = _collection(spec, calls.rows, calls.device, calls.summaries,
                             warnings + calls.warnings)
    collection.shortfall = short
    if recorders is not None:
        if short is not None:  # the runs of the call a cancel cut or that failed
            recorders.clear(set(range(len(spec.configs))) - set(short.measured))
        collection.collectors = recorders.frame(spec)
        collection.warnings += recorders.warnings()
        collection.backend_info.update(user_collector_info(recorders.user))
    collection.backend_info["thermal_guard"] = thermal or nb.THERMAL_OWN
    collection.backend_info.update({"ncu_section_set": ncu} if ncu else {})
    return collection


def point_thermal_guard(nsight: Any, uuid: str | None) -> str | None:
    """nsight-python 0.9.x's thermal control reads NVML device 0 (physical GPU 0) whatever
    CUDA_VISIBLE_DEVICES says: redirect its handle lookup to the job's GPU by UUID. Returns
    the manifest note, None where nothing needed redirecting (1.1 resolves by UUID itself)."""
    import importlib

    try:
        thermo: Any = importlib.import_module(f"{nsight.__name__}.thermovision")
    except ImportError:
        return None
    if uuid is None or not hasattr(thermo, "nvmlDeviceGetHandleByIndex"):
        return None
    import pynvml

    thermo.nvmlDeviceGetHandleByIndex = lambda _index: gpu_select.nvml_handle(pynvml, uuid)
    return (f"nsight-python 0.9.x thermal control, pointed at GPU {uuid} by UUID (it reads "
            "NVML device 0 otherwise)")


def _collection(spec: JobSpec, rows: list[dict[str, Any]], device: dict[str, Any],
                summaries: Sequence[dict[str, Any]], warnings: list[str]) -> Collection:
    """The collection of the launch rows the calls' reports gave (``device``: the attributes
    of their first launch; ``summaries``: each report's summary, in call order).

    Raises:
        ProfilingFailed: no launch lies inside a config's range.
    """
    if device.get("missing_metrics"):
        warnings.append(f"metrics not in the report: {', '.join(device['missing_metrics'])}")
    rows, outside = split_unattributed(rows, len(spec.configs))
    if not rows:
        raise ProfilingFailed("the report holds no profiled launch inside a config's range",
                              "check that the kernels run on the GPU inside the annotations")
    unattributed = unattributed_frame(outside)
    note = unattributed_warning(unattributed)
    return Collection(launches_frame(rows, spec), warnings + ([note] if note else []),
                      {"measurement": "GPU kernel duration and counters (Nsight Compute)",
                       "report": ", ".join(s["report"] for s in summaries),
                       "device_attributes": device},
                      unattributed=unattributed)
