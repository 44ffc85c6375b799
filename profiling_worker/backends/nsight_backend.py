"""What the nsight-python backends, Nsight Compute (``ncu``) and CUPTI (``cupti``), share: the
:class:`NsightBackend` run (load nsight, build the bodies, warm up, collect), the profiled
function, info collectors, failure classes. Each backend's collection is in its own module
(``ncu.collect_ncu``, ``cupti.collect_cupti``). The device check (:func:`cuda_device`) and
:func:`autograd_on_calling_thread` serve the CUDA-events backend too.

nsight is imported only through the backends of ncu.py and cupti.py (their ``load``),
before anything initialises CUDA: nsight-python 1.x loads the Nsight Compute injection at import
time, and the CUPTI backend must load a libcupti >= 13.4 before torch loads its own older copy
(docs/measurements-h200.md, "libcupti on the H200": cuda.pathfinder returns a library already
loaded, so preloading wins).

Attribution does not rely on nsight-python's extraction, which fails ("Expect same number of
kernels per run") or mixes configs when kernel counts differ between configs: on ncu every call
of the profiled body is wrapped in an NVTX range ``c<config>r<run>`` of our own domain and the
``.ncu-rep`` is read per launch (extract/ncu_report_reader.py); on CUPTI each config is its own
nsight-python call.
"""

from __future__ import annotations

import inspect
import os
import time
from abc import abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from profiling_worker.probes import gpu_select
from profiling_worker.backends.base import (Collection, Emit, RunCounter, raise_pending_cancel,
                                            user_collector_frame)
from profiling_worker.backends.run_side import BackendStatus, RunJob, RunSide
from profiling_worker.catalog.user_collectors import ONCE, CollectorRun, UserCollector
from profiling_worker.bundle.errors import (OUT_OF_MEMORY_HINT, KernelFailed, ProfilingFailed,
                                            WorkerError, is_out_of_memory)
from profiling_worker.bundle.schema import backends as B, columns as C
from profiling_worker.bundle.schema.backends import LAUNCH_CHILD_ENV
from profiling_worker.bundle.schema.run_range import run_range_name
from profiling_worker.bundle.schema.spec import COLLECTORS, JobSpec

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


class NsightBackend(RunSide):
    """A backend that runs through nsight-python
    (:class:`~profiling_worker.backends.ncu.NcuBackend`,
    :class:`~profiling_worker.backends.cupti.CuptiBackend`): :meth:`run` imports nsight before
    torch and CUDA, builds the bodies, warms up and hands them to the subclass's
    :meth:`collect`; the subclass says how nsight is imported (:meth:`load`)."""

    @abstractmethod
    def load(self, status: BackendStatus) -> Any:
        """Import (and activate) nsight for this backend; returns the ``nsight`` module.

        Raises:
            BackendUnavailable: the backend's tool cannot be imported here.
        """

    @abstractmethod
    def collect(self, nsight: Any, spec: JobSpec, bodies: Sequence[Any], out_dir: Path,
                emit: Emit, uuid: str | None, user: Sequence[UserCollector] = ()
                ) -> Collection | None:
        """Profile the bodies (already warmed up, except in the launch-mode parent);
        ``user``: the job's user info collectors."""

    #: Whether :meth:`collect` takes ``warm_up_s``, each config's warm-up call timed
    #: (:func:`warm_up_bodies`): the CUPTI backend plans its nsight-python calls with it.
    times_warm_up = False

    def warm_configs(self, spec: JobSpec) -> Sequence[int] | None:
        """The configs this process warms up (None: every config of the job)."""
        return None

    def warm_up(self, status: BackendStatus) -> None:
        """Import nsight first (:meth:`load`), then torch, and start CUDA."""
        warm_up_process(self.name, lambda: self.load(status))

    def run(self, job: RunJob) -> Collection | None:
        """Import nsight-python (before torch and CUDA), build the bodies and :meth:`collect` on
        the job's GPU; in launch mode the parent only starts ncu (its child runs the kernels)
        and the child returns None."""
        spec = job.spec
        try:  # the preflight (started before, running meanwhile) names the deeper cause first
            nsight = import_nsight(spec.backend, lambda: self.load(job.status))
        except Exception:
            job.ready()
            raise
        job.ready()  # the preflight ran while nsight-python was imported
        bodies = [job.body(k, "cuda", nsight.annotate) for k in spec.kernels]
        out_dir = job.job_dir / C.NSIGHT_DIR
        out_dir.mkdir(exist_ok=True)
        if B.resolve(spec.backend, job.status.nsight_mode).mode == B.LAUNCH \
                and not in_launch_child():
            return self.collect(nsight, spec, bodies, out_dir, job.channel.emit, job.uuid)
        user = job.registry.user_collectors(spec.collectors)
        times: list[float] | None = [] if self.times_warm_up else None
        extra: dict[str, Any] = {**({"user": user} if user else {}),
                                 **({"warm_up_s": times} if times is not None else {})}
        only = self.warm_configs(spec)
        warming = RunCounter(spec, job.channel.emit)
        if only:  # a later call's process: the job's progress counts the configs before it
            warming.resume_at(min(only) * spec.runs)
        with autograd_on_calling_thread():
            device = warm_up_bodies(spec, bodies, job.uuid, warming.warming, times, only)
            result = self.collect(nsight, spec, bodies, out_dir, job.channel.emit, job.uuid,
                                  **extra)
        if result is not None:
            result.backend_info["cuda_device"] = device
        return result


def profiled_function(spec: JobSpec, bodies: Sequence[Callable[..., None]],
                       counter: RunCounter, nvtx_range: Callable[[str], Any],
                       annotate: Callable[[str], Any] | None = None) -> Callable[..., None]:
    """The function nsight-python profiles: named parameters = the config's, one NVTX range
    ``c<config>r<run>`` around the bodies so each launch can be attributed; ``annotate``
    replaces the bodies' own annotate function (the CUPTI L2 flush before each region)."""

    def profiled(*values: Any) -> None:
        raise_pending_cancel()  # a cancel an info collector's call swallowed (base.py)
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


def warm_up_bodies(spec: JobSpec, bodies: Sequence[Any], uuid: str | None,
                   warming: Callable[[int], None] = lambda _config: None,
                   times: list[float] | None = None,
                   only: Sequence[int] | None = None) -> dict[str, Any]:
    """Run each config's bodies ``spec.warmup`` times with no annotation (so nothing is profiled
    and CUPTI's one-use annotation names stay free), synchronise, and check that CUDA runs on
    the GPU ``uuid`` (NVML's UUID that sampling, collectors and the manifest use). ``warming``
    is told each config's index before its warm-up calls (:meth:`RunCounter.warming`: the job
    panel names the config; a long warm-up read "starting" with nothing named). ``times``, when
    given, gets the seconds of each config's last warm-up call, synchronised before and after
    (CUDA's start synchronised before the first), one entry per config when ``spec.warmup``.
    ``only``: the configs to warm up (None: every config; a launch-mode child of Nsight Compute
    runs one call's configs).

    Returns:
        ``{"name", "uuid"}`` of the CUDA device the kernels run on (the manifest's
        ``backend.cuda_device``).

    Raises:
        WorkerError: CUDA's device is not the GPU ``uuid``.
    """
    import torch

    if times is not None:
        torch.cuda.synchronize()  # CUDA's start (a cold worker's) is no config's call
    for index, config in enumerate(spec.configs):
        if only is not None and index not in only:
            continue
        if spec.warmup:
            warming(index)
        for call in range(spec.warmup):
            last = times is not None and call == spec.warmup - 1
            seconds = warm_up_call(bodies, tuple(config.values()),
                                   torch.cuda.synchronize if last else None)
            if last and times is not None:
                times.append(seconds)
    torch.cuda.synchronize()
    return cuda_device(uuid)


def warm_up_call(bodies: Sequence[Any], values: tuple[Any, ...],
                 sync: Callable[[], None] | None = None) -> float:
    """One untimed-region call of ``bodies`` at ``values``; with ``sync``, synchronised before
    and after, its wall-clock seconds (0.0 without)."""
    if sync is not None:
        sync()
    start = time.perf_counter()
    for body in bodies:
        body(*values, annotate=lambda _n: nullcontext())
    if sync is None:
        return 0.0
    sync()
    return time.perf_counter() - start


def cuda_device(uuid: str | None) -> dict[str, Any]:
    """``{"name", "uuid"}`` of the current CUDA device (the manifest's ``backend.cuda_device``),
    checked to be the GPU ``uuid`` (NVML's UUID that sampling, collectors and the manifest use).

    Raises:
        WorkerError: CUDA's device is not the GPU ``uuid``.
    """
    import torch

    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    device = {"name": props.name, "uuid": str(props.uuid)}
    if uuid and not gpu_select.same_device(uuid, props.uuid):
        raise WorkerError(f"CUDA runs on GPU {props.uuid}, not on the job's GPU {uuid}",
                          "report this: CUDA_VISIBLE_DEVICES was changed after the worker "
                          "pinned it", kind="internal")
    return device


#: The thermal guard of a job whose nsight-python resolves its GPU itself (manifest note).
THERMAL_OWN = "nsight-python's own (it resolves the CUDA device to its NVML device by UUID)"


@dataclass
class Recorders:
    """What a job's info collectors recorded: the built-in NVML ones (``builtin``, None without
    any) and the user's (``user``)."""

    builtin: Any
    user: CollectorRun

    def clear(self, configs: Iterable[int] | None = None) -> None:
        """Forget the RUN values of ``configs`` (None: of every config): the runs of a call
        whose results were not kept."""
        drop = None if configs is None else set(configs)
        for rows in ([self.builtin.rows] if self.builtin else []) + [self.user.rows]:
            rows[:] = [] if drop is None else [r for r in rows if r[C.CONFIG] not in drop]

    def warnings(self) -> list[str]:
        """A built-in collector this GPU cannot read (the energy counter before Volta), and
        each user collector that failed."""
        missing = self.builtin.unsupported if self.builtin else {}
        return [f"info collector {name} not recorded: this GPU does not give it ({why})"
                for name, why in missing.items()] + self.user.warnings()

    def frame(self, spec: JobSpec) -> pd.DataFrame | None:
        """The ``collectors`` table (built-in and user RUN values), None when neither has one."""
        frames = [f for f in (collector_frame(self.builtin, spec),
                              user_collector_frame(self.user, spec)) if f is not None]
        return pd.concat(frames, ignore_index=True) if len(frames) > 1 else (
            frames[0] if frames else None)


def info_collectors(nsight: Any, spec: JobSpec, counter: RunCounter, uuid: str | None,
                    user: Sequence[UserCollector] = ()) -> tuple[Recorders, list[Any] | None]:
    """nsight-python info collectors for ``spec.collectors``: RUN-scope NVML readings of the
    GPU ``uuid`` for the built-in names, and the ``user`` collectors in their own scope (ONCE,
    RUN), each called under its time limit (:class:`CollectorRun`), so nsight-python puts them
    in its columns and the worker in its ``collectors`` table. The list is None when there are
    none."""
    from profiling_worker.probes.collectors import CollectorRecorder

    builtin = [n for n in spec.collectors if n in COLLECTORS]
    recorder, out = None, []
    if builtin:
        if uuid is None:
            raise WorkerError("collectors need the job's GPU by its NVML UUID; none was resolved",
                              "report this: the worker pins a GPU before it runs",
                              kind="internal")
        recorder = CollectorRecorder(uuid, counter.next_run, counter.config_index)
        out = [nsight.InfoCollector(name, recorder.callback(name), nsight.CollectionScope.RUN)
               for name in builtin]
    run = CollectorRun(user)
    out += [nsight.InfoCollector(c.name, _user_callback(run, c, counter),
                                 getattr(nsight.CollectionScope, c.scope.upper())) for c in user]
    return Recorders(recorder, run), out or None


def _user_callback(run: CollectorRun, c: UserCollector, counter: RunCounter
                   ) -> Callable[..., Any]:
    """nsight-python's callback for user collector ``c``: ONCE takes nothing, RUN the config."""
    if c.scope == ONCE:
        return lambda: run.value_once(c)

    def before_run(*config: Any) -> float | None:
        idx = counter.config_index(config)
        return run.value_before_run(c, idx, counter.next_run(idx), config)

    before_run.__name__ = c.name
    return before_run


def collector_frame(recorder: Any, spec: JobSpec) -> Any:
    """The collectors table of a built-in ``recorder`` (:func:`info_collectors`), None
    without one."""
    return recorder and recorder.frame([dict(c) for c in spec.configs], list(spec.parameter_names))


def profiling_error(exc: Exception, tool: str, hint: str) -> WorkerError:
    """The WorkerError a profiling call's exception stands for: the body's own (nsight-python
    may wrap it), CUDA out of memory (KernelFailed), else ProfilingFailed ``<tool> profiling
    failed: <exception>`` with ``hint``."""
    cause: BaseException | None = exc
    while cause is not None:  # nsight-python may wrap the body's own error
        if isinstance(cause, WorkerError):
            return cause
        cause = cause.__cause__ or cause.__context__
    text = f"{type(exc).__name__}: {exc}"
    if is_out_of_memory(exc):
        return KernelFailed(f"CUDA out of memory: {exc}", OUT_OF_MEMORY_HINT)
    return ProfilingFailed(f"{tool} profiling failed: {text}", hint)
