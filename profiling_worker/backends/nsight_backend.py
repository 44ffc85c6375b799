"""What the nsight-python backends, Nsight Compute (``ncu``) and CUPTI (``cupti``), share.

nsight is imported only through the run-side modules ncu.py and cupti.py (their ``load``),
before anything initialises CUDA: nsight-python 1.x loads the Nsight Compute injection at import
time, and the CUPTI backend must load a libcupti >= 13.4 before torch loads its own older copy
(facts/device-h200.md: cuda.pathfinder returns a library already loaded, so preloading wins).

Attribution does not rely on nsight-python's extraction, which fails ("Expect same number of
kernels per run") or mixes configs when kernel counts differ between configs: on ncu every call
of the profiled body is wrapped in an NVTX range ``c<config>r<run>`` of our own domain and the
``.ncu-rep`` is read per launch (extract/ncu_report_reader.py); on CUPTI each config is its own
nsight-python call.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from profiling_worker import gpu_select
from profiling_worker.backends.base import (Collection, Emit, RunCounter, launch_times_frame,
                                            launches_frame, split_unattributed,
                                            unattributed_frame, unattributed_warning)
from profiling_worker.backends.cupti_times import Attribution, capture_attribution, clock_pair
from profiling_worker.backends.ncu_set import ncu_with_set
from profiling_worker.backends.nsight_options import accepted, cupti_options, ncu_options
from profiling_worker.backends.registry import RunJob
from profiling_worker.errors import (OUT_OF_MEMORY_HINT, KernelFailed,
                                     ProfilingFailed, WorkerError, is_out_of_memory,
                                     last_error_event)
from profiling_worker.schema import backends as B, columns as C
from profiling_worker.schema.run_range import KPROF_DOMAIN, run_range_name
from profiling_worker.schema.spec import JobSpec

#: Set by nsight-python 0.9.x in the copy of the worker it re-runs under ncu (launch mode).
LAUNCH_CHILD_ENV = "NSPY_NCU_PROFILE"
_LOADED: dict[str, Any] = {}  # backend -> the nsight module, once imported in this process


def in_launch_child() -> bool:
    """True inside the worker copy that nsight-python 0.9.x re-runs under ncu."""
    return LAUNCH_CHILD_ENV in os.environ


def import_nsight(backend: str, load: Callable[[], Any]) -> Any:
    """The nsight module for ``backend``: ``load()`` imports (and activates) it the first time,
    later calls (a warm worker's next job) get the same module."""
    if _LOADED.get(backend) is None:
        _LOADED[backend] = load()
    return _LOADED[backend]


def warm_up_process(backend: str, load: Callable[[], Any]) -> None:
    """A warm worker's start: import nsight first (``load``), then torch, and start CUDA."""
    import_nsight(backend, load)
    import torch

    torch.cuda.init()
    torch.zeros(1, device="cuda")


#: collect_ncu or collect_cupti: (nsight, spec, bodies, out_dir, emit, uuid) -> Collection
Profile = Callable[[Any, JobSpec, Sequence[Any], Path, Emit, "str | None"], "Collection | None"]


def profile_job(job: RunJob, load: Callable[[], Any], profile: Profile) -> Collection | None:
    """Import nsight-python (before torch and CUDA), build the bodies and run ``profile`` on
    the job's GPU; in launch mode the parent only starts ncu (its child runs the kernels) and
    the child returns None."""
    spec = job.spec
    nsight = import_nsight(spec.backend, load)
    bodies = [job.body(k, "cuda", nsight.annotate) for k in spec.kernels]
    out_dir = job.job_dir / C.NSIGHT_DIR
    out_dir.mkdir(exist_ok=True)
    if B.resolve(spec.backend, job.entry.get("nsight_mode")).mode == B.LAUNCH \
            and not in_launch_child():
        return profile(nsight, spec, bodies, out_dir, job.channel.emit, job.uuid)
    with autograd_on_calling_thread():
        device = warm_up(spec, bodies, job.uuid)
        result = profile(nsight, spec, bodies, out_dir, job.channel.emit, job.uuid)
    if result is not None:
        result.backend_info["cuda_device"] = device
    return result


def _profiled_function(spec: JobSpec, bodies: Sequence[Callable[..., None]],
                       counter: RunCounter, nvtx_range: Callable[[str], Any],
                       annotate: Callable[[str], Any] | None = None) -> Callable[..., None]:
    """The function nsight-python profiles: named parameters = the config's, one NVTX range
    ``c<config>r<run>`` around the bodies so each launch can be attributed; ``annotate``
    replaces the bodies' own annotate function (the CUPTI L2 flush before each region)."""

    def profiled(*values: Any) -> None:
        config, run = counter.next(values)
        with nvtx_range(run_range_name(config, run)):
            for body in bodies:
                body(*values, annotate=annotate)  # None: the body's own (nsight.annotate)

    params = [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD)
              for p in spec.parameter_names]
    profiled.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    return profiled


@contextmanager
def autograd_on_calling_thread() -> Iterator[None]:
    """Run autograd's backward on the thread that calls it while profiling.

    Autograd launches a CUDA backward from its own device thread, and NVTX push/pop ranges
    (nsight-python 0.9.x annotations, the ``kprof`` config/run ranges) belong to the thread that
    opened them: under Nsight Compute a ``backward`` region then held only the main thread's
    fill kernel (1.6 µs against 383 µs of GEMMs on CUPTI, H200).
    """
    import torch

    with torch.autograd.set_multithreading_enabled(False):
        yield


def warm_up(spec: JobSpec, bodies: Sequence[Any], uuid: str | None) -> dict[str, Any]:
    """Run each config's bodies ``spec.warmup`` times with no annotation (so nothing is profiled
    and CUPTI's one-use annotation names stay free), synchronise, and check that CUDA runs on
    the GPU ``uuid`` (NVML's UUID that sampling, collectors and the manifest use).

    Returns:
        ``{"name", "uuid"}`` of the CUDA device the kernels run on (the manifest's
        ``backend.cuda_device``).

    Raises:
        WorkerError: CUDA's device is not the GPU ``uuid``.
    """
    for config in spec.configs:
        for _ in range(spec.warmup):
            for body in bodies:
                body(*config.values(), annotate=lambda _n: nullcontext())
    import torch

    torch.cuda.synchronize()
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    device = {"name": props.name, "uuid": str(props.uuid)}
    if uuid and not gpu_select.same_device(uuid, props.uuid):
        raise WorkerError(f"CUDA runs on GPU {props.uuid}, not on the job's GPU {uuid}",
                          "report this: CUDA_VISIBLE_DEVICES was changed after the worker "
                          "pinned it", kind="internal")
    return device


def collect_ncu(nsight: Any, spec: JobSpec, bodies: Sequence[Any], out_dir: Path,
                emit: Emit, uuid: str | None = None) -> Collection | None:
    """Profile with Nsight Compute; returns None in the launch-mode child (which exits).

    Raises:
        ProfilingFailed: ncu failed, or the report is missing or holds no launch.
        KernelFailed: a kernel body raised (in attach mode).
    """
    import nvtx

    counter = RunCounter(spec, emit)
    profiled = _profiled_function(spec, bodies, counter,
                                  lambda m: nvtx.annotate(m, domain=KPROF_DOMAIN))
    warnings: list[str] = []
    thermal = point_thermal_guard(nsight, uuid) if spec.thermal_mode != "off" else None
    recorder, collectors = (None, None)
    if spec.collectors and "info_collectors" in inspect.signature(nsight.analyze.kernel).parameters:
        recorder, collectors = _collectors(nsight, spec, counter, uuid)
    elif spec.collectors:
        warnings.append("info collectors need nsight-python >= 1.1 (attach mode or CUPTI); "
                        "the worker's NVML trace of the job is there instead")
    options, dropped = accepted(nsight, ncu_options(spec, out_dir, collectors))
    warnings += dropped
    decorated = nsight.analyze.kernel(**options)(profiled)
    configs = [tuple(c.values()) for c in spec.configs]
    try:  # a deep dive's section set goes on ncu's command line (not in the launch child)
        with ncu_with_set(None if in_launch_child() else spec.section_set, out_dir.parent) as ncu:
            decorated(configs=configs)
    except RuntimeError as exc:  # nsight-python's own extraction; ours reads every launch
        warnings.append(f"nsight-python's extraction failed ({exc}); tables come from the "
                        "per-launch data of the .ncu-rep")
    except Exception as exc:
        child = last_error_event(out_dir.parent)  # launch mode: the re-run worker said what failed
        if child or isinstance(_classify(exc), WorkerError):
            raise child or _classify(exc) from exc
        raise ProfilingFailed(f"Nsight Compute profiling failed: {exc}",
                              "see the ncu log in the job's files; check the metric names with "
                              "`ncu --query-metrics` and counter permissions") from exc
    collection = _read_report(spec, out_dir, warnings)
    collection.collectors = _collector_frame(recorder, spec)
    collection.backend_info["thermal_guard"] = thermal or _THERMAL_OWN
    collection.backend_info.update({"ncu_section_set": ncu} if ncu else {})
    return collection


_THERMAL_OWN = "nsight-python's own (it resolves the CUDA device to its NVML device by UUID)"


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


def _read_report(spec: JobSpec, out_dir: Path, warnings: list[str]) -> Collection:
    from profiling_worker.extract.ncu_report_reader import read_launches, write_summary
    from profiling_worker.extract.ncu_sections import write_deep_dive

    reports = sorted(out_dir.glob("*.ncu-rep"))
    if not reports:
        raise ProfilingFailed("Nsight Compute wrote no report",
                              "see worker.log and the ncu log for the cause")
    rows, device = read_launches(reports[-1], spec.metrics)
    write_summary(reports[-1], out_dir / "report_summary.json")
    if spec.section_set:  # the deep-dive view's tables, read from the report once
        write_deep_dive(reports[-1], out_dir.parent / C.DEEP_DIVE_FILE)
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
                       "report": reports[-1].name, "device_attributes": device},
                      unattributed=unattributed)


@contextmanager
def _capture_cupti_launches(nsight: Any) -> Iterator[list[dict[str, list[Any]]]]:
    """Record the per-annotation launch lists nsight-python's CUPTI collector hands to its
    extraction (1.1.x internals; without them only per-run sums are known)."""
    captured: list[dict[str, list[Any]]] = []
    module = nsight.extraction
    original = module.extract_df_from_data

    def spy(profiling_data: dict[str, list[Any]], *args: Any, **kwargs: Any) -> Any:
        captured.append({k: list(v) for k, v in profiling_data.items()})
        return original(profiling_data, *args, **kwargs)

    module.extract_df_from_data = spy
    try:
        yield captured
    finally:
        module.extract_df_from_data = original


def collect_cupti(nsight: Any, spec: JobSpec, bodies: Sequence[Any], out_dir: Path,
                  emit: Emit, uuid: str | None = None) -> Collection:
    """Profile kernel durations with CUPTI, one nsight-python call per config; with
    ``cache_control="all"`` the L2 is flushed before every annotated region (l2_flush.py).

    Raises:
        KernelFailed: a kernel body raised (CUDA out of memory included).
        ProfilingFailed: CUPTI or nsight-python failed.
    """
    from profiling_worker.backends.l2_flush import L2Flush, no_flush

    counter = RunCounter(spec, emit)
    flush = L2Flush() if spec.cache_control == "all" else None
    profiled = _profiled_function(spec, bodies, counter, lambda _m: nullcontext(),
                                  flush.before_each(nsight.annotate) if flush else None)
    rows: list[dict[str, Any]] = []
    outside: list[dict[str, Any]] = []
    warnings: list[str] = []
    recorder, collectors = _collectors(nsight, spec, counter, uuid)
    for idx, config in enumerate(spec.configs):
        options, dropped = accepted(nsight, cupti_options(spec, out_dir / f"c{idx}", collectors))
        warnings += [] if idx else dropped  # the same for every config
        decorated = nsight.analyze.kernel(**options)(profiled)
        with _capture_cupti_launches(nsight) as captured, capture_attribution(nsight) as seen:
            try:
                decorated(configs=[tuple(config.values())])
            except Exception as exc:
                raise _classify(exc) from exc
        rows += _cupti_rows(captured, idx, spec.runs, warnings, seen)
        outside += [{C.ANNOTATION: "", C.CONFIG: idx, C.KERNEL: name, C.GRID: None,
                     C.BLOCK: None, C.METRIC: C.GPU_TIME, C.VALUE: float(ns), C.UNIT: "ns",
                     C.REASON: OUTSIDE_EVERY_ANNOTATION} for name, ns in seen.outside]
    return Collection(launches_frame(rows, spec), warnings,
                      {"measurement": "GPU kernel duration (CUPTI activity records)",
                       "cache_flush": flush.describe() if flush else no_flush(spec.cache_control),
                       "thermal_guard": _THERMAL_OWN, "clock_pair": clock_pair()},
                      _collector_frame(recorder, spec), unattributed_frame(outside),
                      launch_times_frame(rows, spec))


#: Reason of a CUPTI launch outside every annotation (set-up code, the L2 flush).
OUTSIDE_EVERY_ANNOTATION = ("outside every annotation (set-up code of the kernel, the L2 flush "
                            "before each region): not measured")


def _collectors(nsight: Any, spec: JobSpec, counter: RunCounter,
                uuid: str | None) -> tuple[Any, list[Any] | None]:
    """nsight-python RUN-scope info collectors for ``spec.collectors`` reading the GPU ``uuid``
    (None when none were asked for)."""
    if not spec.collectors:
        return None, None
    from profiling_worker.collectors import CollectorRecorder

    if uuid is None:
        raise WorkerError("collectors need the job's GPU by its NVML UUID; none was resolved",
                          "report this: the worker pins a GPU before it runs", kind="internal")
    recorder = CollectorRecorder(uuid, counter.next_run, counter.config_index)
    scope = nsight.CollectionScope.RUN
    return recorder, [nsight.InfoCollector(name, recorder.callback(name), scope)
                      for name in spec.collectors]


def _collector_frame(recorder: Any, spec: JobSpec) -> Any:
    return recorder and recorder.frame([dict(c) for c in spec.configs], list(spec.parameter_names))


def _cupti_rows(captured: list[dict[str, list[Any]]], config: int, runs: int,
                warnings: list[str], seen: Attribution) -> list[dict[str, Any]]:
    """Launch rows of one config; StartNs/EndNs (CUPTI clock) where the kernel's record was
    seen and the attribution lists agree."""
    rows = []
    for annotation, actions in (captured[0] if captured else {}).items():
        per_run, extra = divmod(len(actions), runs)
        if extra:
            warnings.append(f"{annotation}, config {config}: {len(actions)} launches over {runs} "
                            "runs (the count differs between runs); attributed in launch order")
            per_run = max(per_run, 1)
        times = seen.for_annotation(annotation)
        if [t[0] for t in times] != [a.name for a in actions]:
            times = [(a.name, None, None) for a in actions]  # lists differ: no timestamps
        for i, (action, (_k, start, end)) in enumerate(zip(actions, times, strict=True)):
            if action.values is None:
                continue
            rows.append({C.ANNOTATION: annotation, C.CONFIG: config,
                         C.RUN: min(i // per_run, runs - 1), C.LAUNCH: i % per_run,
                         C.KERNEL: action.name, C.GRID: None, C.BLOCK: None,
                         C.METRIC: C.GPU_TIME, C.VALUE: float(action.values[0]), C.UNIT: "ns",
                         C.START_NS: start, C.END_NS: end})
    return rows


def _classify(exc: Exception) -> Exception:
    cause: BaseException | None = exc
    while cause is not None:  # nsight-python may wrap the body's own error
        if isinstance(cause, WorkerError):
            return cause
        cause = cause.__cause__ or cause.__context__
    text = f"{type(exc).__name__}: {exc}"
    if is_out_of_memory(exc):
        return KernelFailed(f"CUDA out of memory: {exc}", OUT_OF_MEMORY_HINT)
    return ProfilingFailed(f"CUPTI profiling failed: {text}",
                           "see worker.log; check that libcupti >= 13.4 was loaded")
