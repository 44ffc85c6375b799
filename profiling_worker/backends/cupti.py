"""Run side of the ``cupti`` backend: kernel durations from CUPTI activity records through
nsight-python >= 1.1 (its CUPTI tool), with a libcupti from CUDA >= 13.4 (nsight-python 1.1.1
runtime requirements) loaded before torch loads its own older copy."""

from __future__ import annotations

import bisect
import ctypes
import functools
import math
import os
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.stats import adaptive
from profiling_worker.backends import nsight_backend as nb
from profiling_worker.backends.base import (Collection, Emit, RunCounter, launch_times_frame,
                                            launches_frame, unattributed_frame,
                                            user_collector_info)
from profiling_worker.catalog.user_collectors import UserCollector
from profiling_worker.backends.cupti_times import Attribution, capture_attribution, clock_pair
from profiling_worker.backends.nsight_options import accepted, cupti_options
from profiling_worker.backends.run_side import NO_GPU, BackendStatus, unavailable
from profiling_worker.probes.environment import version_tuple
from profiling_worker.bundle.errors import BackendUnavailable, Cancelled, KernelFailed
from profiling_worker.bundle.schema import partial
from profiling_worker.bundle.schema.partial import Shortfall
from profiling_worker.bundle.schema import backends as B, columns as C, tools as T
from profiling_worker.bundle.schema.run_range import parse_run_range
from profiling_worker.bundle.schema.spec import JobSpec

CUPTI_MIN = (13, 4)


class CuptiBackend(nb.NsightBackend):
    """Kernel durations from CUPTI activity records (nsight-python's CUPTI tool)."""

    name = B.CUPTI

    def probe(self, env: dict[str, Any]) -> BackendStatus:
        """Whether CUPTI can run here; ``libcupti``: the newest libcupti found (preloaded)."""
        if not env.get("gpus"):
            return unavailable(*NO_GPU)
        nspy, cupti_python = T.NSIGHT_PYTHON.version(env), T.CUPTI_PYTHON.version(env)
        if version_tuple(nspy) < (1, 1):
            return unavailable(f"the CUPTI backend needs nsight-python >= 1.1 (found "
                               f"{nspy or 'none'})", "pip install 'nsight-python[cupti]>=1.1'")
        if version_tuple(cupti_python) < CUPTI_MIN:
            return unavailable(f"cupti-python >= 13.4 is required (found "
                               f"{cupti_python or 'none'})", "pip install 'cupti-python>=13.4'")
        libs = env.get("libcupti") or []
        if not libs or version_tuple(libs[0]["version"])[:2] < CUPTI_MIN:
            newest = (f"{libs[0]['version'] or 'unknown version'} at {libs[0]['path']}" if libs
                      else "none")
            return unavailable(f"libcupti from CUDA >= 13.4 is required (newest found: "
                               f"{newest})", "pip install 'nvidia-cuda-cupti>=13.4' (the "
                               "worker preloads the newest copy)")
        return BackendStatus(True, f"nsight-python {nspy} CUPTI, libcupti {libs[0]['version']}",
                             nsight_mode=B.CUPTI_BACKEND.nsight_mode, libcupti=libs[0]["path"])

    def load(self, status: BackendStatus) -> Any:
        """With Nsight Compute's import-time activation switched off
        (``NSPY_NCU_INIT_AT_IMPORT=0``) and the status's ``libcupti`` loaded RTLD_GLOBAL first,
        import nsight and activate its CUPTI tool.

        Raises:
            BackendUnavailable: cupti-python cannot be imported.
        """
        os.environ["NSPY_NCU_INIT_AT_IMPORT"] = "0"
        if status.libcupti:
            ctypes.CDLL(status.libcupti, mode=ctypes.RTLD_GLOBAL)
        try:  # nsight-python hides this error behind "cupti-python is required"
            from cupti import cupti  # noqa: F401
        except ImportError as exc:
            raise BackendUnavailable(
                f"cupti-python cannot be imported: {exc}",
                "pip install 'cupti-python>=13.4' with its dependencies "
                "(pyelftools, cuda-pathfinder>=1.4.1, nvidia-cuda-cupti>=13.4)") from exc
        import nsight

        nsight.activate(nsight.Tool.CUPTI)
        return nsight

    times_warm_up = True  # collect_cupti plans its calls by each config's warm-up call

    def collect(self, nsight: Any, spec: JobSpec, bodies: Sequence[Any], out_dir: Path,
                emit: Emit, uuid: str | None, user: Sequence[UserCollector] = (),
                warm_up_s: Sequence[float] | None = None) -> Collection:
        """:func:`collect_cupti`."""
        return collect_cupti(nsight, spec, bodies, out_dir, emit, uuid, user, warm_up_s)


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
                  emit: Emit, uuid: str | None = None, user: Sequence[UserCollector] = (),
                  warm_up_s: Sequence[float] | None = None) -> Collection:
    """Profile kernel durations with CUPTI; with ``cache_control="all"`` the L2 is flushed
    before every annotated region (l2_flush.py).

    A job of fixed runs with warm-up puts several configs in one nsight-python call, as a bare
    script does (:func:`_several`), at most about :data:`CHUNK_BUDGET_S` of runs a call
    (:func:`plan_calls` from ``warm_up_s``, each config's warm-up call in seconds): a cancel
    loses the call under way only. A call is kept when every run of every config launched the
    same number of kernels in each annotation, which nsight-python's positional attribution
    assumes. Otherwise, and for runs "auto" (one call per batch the stopping rule asks for,
    profiling_worker/bundle/stats/adaptive.py) or without warm-up, each config gets calls of its
    own.

    A config whose kernel raises (:class:`KernelFailed`, out of memory included) is skipped and
    the others run on; a cancel (:class:`Cancelled`) stops the job, the call under way lost.
    Either way the whole configs measured before are returned with a ``shortfall``, as the
    backends that time regions return them (region_timer.py).

    Raises:
        KernelFailed: every config's kernel raised (the first config's error).
        Cancelled: the cancel came before any config was measured.
        ProfilingFailed: CUPTI or nsight-python failed.
    """
    from profiling_worker.backends.l2_flush import L2Flush, no_flush

    counter = RunCounter(spec, emit)
    flush = L2Flush() if spec.cache_control == "all" else None
    recorders, collectors = nb.info_collectors(nsight, spec, counter, uuid, user)
    job = _Job(nsight, spec, bodies, out_dir, emit, counter,
               flush.before_each(nsight.annotate) if flush else None, collectors, recorders)
    auto: dict[str, Any] = {}
    cancel: Cancelled | None = None
    try:
        auto = _measure(job, warm_up_s)
    except Cancelled as exc:
        cancel = exc
    short = _shortfall(job, cancel)
    found = job.found
    return Collection(launches_frame(found.rows, spec), found.warnings + recorders.warnings(),
                      {"measurement": "GPU kernel duration (CUPTI activity records)",
                       "cache_flush": flush.describe() if flush else no_flush(spec.cache_control),
                       "thermal_guard": nb.THERMAL_OWN, "clock_pair": clock_pair(), **auto,
                       **user_collector_info(recorders.user)},
                      recorders.frame(spec), unattributed_frame(found.outside),
                      # made after the result-ready write (the rows hold their parameters now)
                      functools.partial(launch_times_frame, found.rows, spec), short)


@dataclass
class _Flight:
    """The nsight-python call under way: its configs, its folder, and the progress count
    (:attr:`RunCounter.done`) when it began."""

    configs: list[int]
    out: Path
    done_before: int


@dataclass
class _Found:
    """What the calls of one job measured: launch rows, kernels outside every annotation
    (unattributed rows), warnings, the configs measured whole, the configs whose kernel raised,
    and the call under way (None between calls)."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    outside: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    measured: set[int] = field(default_factory=set)
    failed: dict[int, KernelFailed] = field(default_factory=dict)
    flight: _Flight | None = None
    options_noted: bool = False
    folders: dict[int, list[Path]] = field(default_factory=dict)  # config -> its calls' folders

    def add_outside(self, config: int, kernels: Sequence[tuple[str, int]]) -> None:
        self.outside.extend({C.ANNOTATION: "", C.CONFIG: config, C.KERNEL: name, C.GRID: None,
                             C.BLOCK: None, C.METRIC: C.GPU_TIME, C.VALUE: float(ns),
                             C.UNIT: "ns", C.REASON: OUTSIDE_EVERY_ANNOTATION}
                            for name, ns in kernels)

    def note_options(self, dropped: Sequence[str]) -> None:
        """The options this nsight-python does not take (the same for every call), said once."""
        if not self.options_noted:
            self.warnings.extend(dropped)
            self.options_noted = True

    def keep_only_measured(self) -> None:
        """Drop the rows of configs not measured whole (a call a cancel cut left some)."""
        self.rows[:] = [r for r in self.rows if r[C.CONFIG] in self.measured]
        self.outside[:] = [r for r in self.outside if r[C.CONFIG] in self.measured]


@dataclass
class _Job:
    """What every nsight-python call of one CUPTI job needs."""

    nsight: Any
    spec: JobSpec
    bodies: Sequence[Any]
    out_dir: Path
    emit: Emit
    counter: RunCounter
    annotate: Any  # the L2 flush's annotate, None: the bodies' own
    collectors: list[Any] | None
    recorders: nb.Recorders
    found: _Found = field(default_factory=_Found)


def _measure(job: _Job, warm_up_s: Sequence[float] | None) -> dict[str, Any]:
    """Measure every config (:func:`collect_cupti`); the manifest's ``auto_runs`` entry of a
    runs "auto" job, else {}."""
    spec = job.spec
    measure = _per_config(job, nb.profiled_function(
        spec, job.bodies, job.counter, lambda _m: nullcontext(), job.annotate))
    if spec.run_target is not None:
        states = adaptive.run_adaptive(spec.run_target, len(spec.configs), measure)
        return {"auto_runs": adaptive.summary(states, spec.run_target)}
    clock = _several_allowed(spec, job.emit)
    calls = [[i] for i in range(len(spec.configs))]
    if clock is not None:
        estimates = _estimates(job, warm_up_s)
        calls = plan_calls(estimates, len(spec.configs), spec.runs)
        job.emit("log", message=plan_text(calls, len(spec.configs), estimates is not None),
                 calls=calls)
    for configs in calls:
        if clock is not None and len(configs) > 1:
            why = _several(job, configs, clock)
            if why is None:
                continue
            job.counter.restart(configs)  # the runs of a call not kept are measured again
            job.recorders.clear(configs)
            if why != KERNEL_RAISED:
                clock = None  # the later calls too: paying twice for each would double them
                _NOT_KEPT.add(_shape(spec))
            job.emit("log", message=not_kept_text(configs, len(spec.configs), why))
        for idx in configs:
            measure(idx, spec.runs)
    return {}


def _shortfall(job: _Job, cancel: Cancelled | None) -> Shortfall | None:
    """What a cancel or failing kernels left unmeasured (None: every config measured): the
    call a cancel cut is removed with its folder, the config it was running ``cut``, the
    configs it had finished ``lost``; the rows kept are those of whole configs.

    Raises:
        Cancelled, KernelFailed: nothing was measured (the first config's error).
    """
    found, spec = job.found, job.spec
    flight, cut, lost = found.flight, None, ""
    if cancel is not None and flight is not None:
        shutil.rmtree(flight.out, ignore_errors=True)
        ran = job.counter.last if job.counter.done > flight.done_before else None
        if ran is not None and ran[0] in flight.configs:
            cut = ran[0]
            lost = lost_text(flight.configs[:flight.configs.index(cut)], spec.configs)
    if cancel is None and not found.failed:
        return None
    found.keep_only_measured()
    job.recorders.clear(set(range(len(spec.configs))) - found.measured)
    for idx, folders in found.folders.items():  # a first run's call of a config cut later
        for folder in folders if idx not in found.measured else ():
            shutil.rmtree(folder, ignore_errors=True)
    if not found.measured:  # nothing to keep: the job ends as it did before any partial result
        raise cancel or next(iter(found.failed.values()))
    return Shortfall(sorted(found.measured), {i: e.message for i, e in found.failed.items()},
                     cancel.how if cancel else None, cut, lost)


def lost_text(finished: Sequence[int], configs: Sequence[Mapping[str, Any]]) -> str:
    """The ``lost`` words of a cancel that cut a call of several configs after ``finished``
    had run all their runs in it ("" when none): a call is kept whole or not at all."""
    if not finished:
        return ""
    labels = ", ".join(partial.config_label(configs[i]) for i in finished)
    return (f"{counted(len(finished), 'config')} ({labels}) had run in the same nsight-python "
            "call as the config cut, and were dropped with it")


def _failure(exc: Exception) -> Exception:
    return nb.profiling_error(exc, "CUPTI", "see worker.log; check that libcupti >= 13.4 was "
                                            "loaded")


def _call(nsight: Any, profiled: Callable[..., None], options: dict[str, Any],
          configs: list[tuple[Any, ...]]) -> tuple[list[dict[str, list[Any]]], Attribution,
                                                   Exception | None]:
    """One nsight-python call of ``configs``: the launch lists its extraction was handed, the
    attribution, and the exception it raised (None)."""
    decorated = nsight.analyze.kernel(**options)(profiled)
    with _capture_cupti_launches(nsight) as captured, capture_attribution(nsight) as seen:
        try:
            decorated(configs=configs)
        except Exception as exc:  # the caller decides: refused split, or a failure
            return captured, seen, exc
    return captured, seen, None


def _per_config(job: _Job, profiled: Callable[..., None]
                ) -> Callable[[int, int], dict[str, list[float]]]:
    """``measure(idx, runs)``: one nsight-python call of ``runs`` runs of config ``idx`` (its
    files under ``c<idx>/``, ``c<idx>-<call>/`` for a later call of the same config); its
    per-run durations by annotation. A config whose kernel raised is skipped (a warning says
    so) and gives no durations, then and on any later call (runs "auto")."""
    calls: dict[int, int] = {}  # config -> nsight-python calls so far (runs "auto": several)
    spec, found, counter = job.spec, job.found, job.counter

    def one_call(idx: int, runs: int) -> dict[str, list[float]]:
        call = calls.get(idx, 0)
        calls[idx] = call + 1
        out = job.out_dir / (f"c{idx}" if not call else f"c{idx}-{call}")
        options, dropped = accepted(job.nsight, {**cupti_options(spec, out, job.collectors),
                                                 "runs": runs})
        found.note_options(dropped)
        first = counter.next_run(idx)
        found.flight = _Flight([idx], out, counter.done)
        found.folders.setdefault(idx, []).append(out)
        captured, seen, exc = _call(job.nsight, profiled, options,
                                    [tuple(spec.configs[idx].values())])
        if exc is not None:
            raise _failure(exc) from exc
        actions = captured[0] if captured else {}
        new = _cupti_rows(actions, {a: seen.for_annotation(a) for a in actions}, idx, runs,
                          found.warnings, first)
        found.rows.extend(new)
        found.add_outside(idx, seen.outside)
        found.flight = None
        return adaptive.region_values(new)

    def runs_of(idx: int, runs: int) -> dict[str, list[float]]:
        """Without warm-up the first run gets a call of its own: nsight-python hands over one
        launch list per call, and a cold first call may launch other kernels (autotuning),
        which would shift every later run's launches (the pre-flight compares exactly that)."""
        if not spec.warmup and runs > 1 and counter.next_run(idx) == 0:
            cold, rest = one_call(idx, 1), one_call(idx, runs - 1)
            return {a: cold.get(a, []) + rest.get(a, []) for a in {**cold, **rest}}
        return one_call(idx, runs)

    def measure(idx: int, runs: int) -> dict[str, list[float]]:
        if idx in found.failed:  # runs "auto" may come back to it: it raised once, skipped
            return {}
        try:
            values = runs_of(idx, runs)
        except KernelFailed as exc:
            found.failed[idx] = exc
            found.flight = None
            job.emit("warning", message=f"{exc.message}; config skipped, the others run on")
            return {}
        found.measured.add(idx)  # every run it was asked for (a batch of runs "auto")
        return values

    return measure


#: Subfolder of ``nsight/`` with the files of a job's one call of all its configs.
ONE_CALL_DIR = "all"
#: Jobs (kernels, annotations, configs) whose one call this process did not keep: a warm
#: worker measures their repeats per config at once instead of paying for both again.
_NOT_KEPT: set[tuple[Any, ...]] = set()
#: Why a call of several configs was not kept when a kernel raised in it: its configs are
#: measured in calls of their own (the one that raised skipped), the later calls go on.
KERNEL_RAISED = "a kernel raised"

#: Estimated seconds of profiled runs one nsight-python call of several configs holds: a
#: cancel loses the call under way, so about this much measuring at most. Each more call costs
#: a CUPTI session and an ``aggregate_data`` (about 25 ms each for a warm J1 on the H200,
#: docs/performance.md), under 2 % of a full call.
CHUNK_BUDGET_S = 2.0
#: Seconds a profiled run costs besides the kernels' own call: nsight-python's thermal guard,
#: annotations and info collectors (a warm J1 on the H200: 48.8 ms of runs for its 40 runs of
#: 16.6 ms of kernels, docs/performance.md).
RUN_OVERHEAD_S = 0.001
#: Runs one call holds where no config's time is known (no timed warm-up): 20 configs of 10
#: runs (J1's 40 runs stay one call).
CHUNK_RUNS = 200


def plan_calls(estimates: Sequence[float] | None, configs: int, runs: int,
               budget_s: float = CHUNK_BUDGET_S, run_overhead_s: float = RUN_OVERHEAD_S
               ) -> list[list[int]]:
    """The configs of each nsight-python call, in config order: consecutive configs while their
    estimated runs, ``(estimate + run_overhead_s) x runs`` seconds each, fit ``budget_s``
    together (a config over it alone). ``estimates``: each config's seconds per call (its
    warm-up call); without them (None, or not one finite number >= 0 per config)
    :data:`CHUNK_RUNS` runs a call, at least one config. ``run_overhead_s``: what the profiler
    adds to a run (CUPTI's :data:`RUN_OVERHEAD_S`; Nsight Compute's replay, ncu_calls.py)."""
    if estimates is None or len(estimates) != configs or not all(
            math.isfinite(e) and e >= 0 for e in estimates):
        size = max(1, CHUNK_RUNS // max(runs, 1))
        return [list(range(i, min(i + size, configs))) for i in range(0, configs, size)]
    calls: list[list[int]] = []
    total = 0.0
    for idx, call_s in enumerate(estimates):
        cost = (call_s + run_overhead_s) * runs
        if calls and total + cost <= budget_s:
            calls[-1].append(idx)
            total += cost
        else:
            calls.append([idx])
            total = cost
    return calls


def call_dir(configs: Sequence[int], total: int) -> str:
    """Subfolder of ``nsight/`` of one call of several ``configs`` of a job of ``total``:
    :data:`ONE_CALL_DIR` when it holds every config, else ``configs<first>-<last>``."""
    if len(configs) == total:
        return ONE_CALL_DIR
    return f"configs{configs[0]}-{configs[-1]}"


def plan_text(calls: Sequence[Sequence[int]], total: int, timed: bool) -> str:
    """The log line of a job's plan of calls (``timed``: from its warm-up's times)."""
    if len(calls) == 1:
        return f"CUPTI: the {counted(total, 'config')} in one nsight-python call"
    basis = (f"at most about {CHUNK_BUDGET_S:g} s of runs each by the warm-up's times" if timed
             else f"at most {CHUNK_RUNS} runs each (no warm-up time known)")
    return (f"CUPTI: the {counted(total, 'config')} in {len(calls)} nsight-python calls, "
            f"{basis}: a cancel keeps the calls finished before it")


def not_kept_text(configs: Sequence[int], total: int, why: str) -> str:
    """The log line of a call of several configs not kept, ``why`` (the split's reason, or
    :data:`KERNEL_RAISED`)."""
    if why == KERNEL_RAISED:
        return (f"CUPTI: the call of configs {configs[0]}-{configs[-1]} stopped where {why}; "
                "its configs are measured in calls of their own")
    if len(configs) == total:
        return (f"CUPTI: one call of all configs not kept ({why}); each config is measured in "
                "calls of its own")
    return (f"CUPTI: the call of configs {configs[0]}-{configs[-1]} not kept ({why}); these and "
            "the later configs are measured in calls of their own")


def _shape(spec: JobSpec) -> tuple[Any, ...]:
    """What :data:`_NOT_KEPT` knows a job by: kernels, annotations, configs."""
    return spec.kernels, spec.annotations, tuple(tuple(c.items()) for c in spec.configs)


def _several_allowed(spec: JobSpec, emit: Emit) -> Callable[[], int] | None:
    """CUPTI's clock when configs may share nsight-python calls, else None: not for runs
    "auto", without warm-up, for one config, where CUPTI's clock cannot be read, nor for a job
    whose kernels and configs this process already saw refused (a log event says so)."""
    if spec.run_target is not None or not spec.warmup or len(spec.configs) < 2:
        return None
    clock = _cupti_clock()
    if clock is not None and _shape(spec) in _NOT_KEPT:
        emit("log", message="CUPTI: each config in calls of its own, as in this worker's earlier "
                            "job of these kernels and configs (its one call was not kept)")
        return None
    return clock


def _estimates(job: _Job, warm_up_s: Sequence[float] | None,
               sync: Callable[[], None] | None = None) -> list[float] | None:
    """Each config's seconds per call for :func:`plan_calls`: its warm-up call (None when not
    one per config). With one warm-up call, the first config's also paid the process's first
    use of its libraries (cuBLAS, the first ``randn``, lazy kernel loading: about 0.25-0.38 s
    of a cold J1's warm-up on the H100/H200, docs/performance.md), which alone would split a
    16 ms job; so where it would fill :data:`CHUNK_BUDGET_S`, config 0 is called once more
    (one call, at most 1/runs of its measuring) and the faster call counts."""
    spec = job.spec
    if warm_up_s is None or len(warm_up_s) != len(spec.configs):
        return None
    estimates = list(warm_up_s)
    if spec.warmup == 1 and (estimates[0] + RUN_OVERHEAD_S) * spec.runs > CHUNK_BUDGET_S:
        # no second warm-up event: the job panel's warm-up named each config once, in order
        # (tests/gpu/test_h200_bundles.py), and this one call is brief
        again = nb.warm_up_call(job.bodies, tuple(spec.configs[0].values()),
                                sync or _cuda_sync)
        estimates[0] = min(estimates[0], again)
    return estimates


def _cuda_sync() -> None:
    """``torch.cuda.synchronize()``."""
    import torch

    torch.cuda.synchronize()


def _several(job: _Job, configs: list[int], clock: Callable[[], int]) -> str | None:
    """``configs`` (two or more) in one nsight-python call (its files under
    :func:`call_dir`): one CUPTI session and one aggregation instead of one per config (on the
    H200 a warm J1's four calls took 249 ms against 98 ms for one: docs/performance.md). None
    when kept: every kernel's launch (CUPTI's CPU timestamp) falls in the run nsight-python's
    positional split gives it (:func:`split_one_call`). Otherwise its files are removed and
    why is returned (the split's reason, or :data:`KERNEL_RAISED`): the caller measures its
    configs in calls of their own.

    Raises:
        Cancelled: a cancel came (the call is lost).
        ProfilingFailed: the call failed for another reason than the split or a kernel.
    """
    spec, found = job.spec, job.found
    starts = RunStarts(clock)
    profiled = nb.profiled_function(spec, job.bodies, job.counter, starts, job.annotate)
    out = job.out_dir / call_dir(configs, len(spec.configs))
    options, dropped = accepted(job.nsight, {**cupti_options(spec, out, job.collectors),
                                             "runs": spec.runs})
    found.flight = _Flight(configs, out, job.counter.done)
    captured, seen, exc = _call(job.nsight, profiled, options,
                                [tuple(spec.configs[i].values()) for i in configs])
    err = _failure(exc) if exc is not None else None
    if isinstance(err, Cancelled):  # never taken for a refused split: the job must stop
        raise err from exc
    split = split_one_call(captured[0] if captured else {}, seen, starts, configs, spec.runs)
    if isinstance(err, KernelFailed) or isinstance(split, str):
        if err is not None and not captured and not isinstance(err, KernelFailed):
            raise err from exc  # failed before its extraction: not the split
        shutil.rmtree(out, ignore_errors=True)
        found.flight = None
        return KERNEL_RAISED if isinstance(err, KernelFailed) else str(split)
    if err is not None:
        raise err from exc
    found.note_options(dropped)
    for idx, (actions, times, outside) in zip(configs, split, strict=True):
        found.rows.extend(_cupti_rows(actions, times, idx, spec.runs, found.warnings))
        found.add_outside(idx, outside)
    found.measured.update(configs)
    found.flight = None
    return None


def _cupti_clock() -> Callable[[], int] | None:
    """``cupti.get_timestamp`` (ns, the clock of CUPTI's activity records), None where it
    cannot be read."""
    try:
        from cupti import cupti

        cupti.get_timestamp()
        return cast(Callable[[], int], cupti.get_timestamp)
    except Exception:  # no cupti-python, or CUPTI refused: the per-config calls need no clock
        return None


class RunStarts:
    """Stands in for the run range of nb.profiled_function in a CUPTI call: notes the run
    (config, run) and when it began on CUPTI's clock, and opens no range."""

    def __init__(self, clock: Callable[[], int]):
        self._clock = clock
        self.runs: list[tuple[int, int]] = []
        self.at: list[int] = []

    def __call__(self, name: str) -> Any:
        run = parse_run_range(name)
        assert run is not None, name
        self.runs.append(run)
        self.at.append(int(self._clock()))
        return nullcontext()

    def run_of(self, launched: int | None) -> tuple[int, int] | None:
        """The run during which a kernel launched at ``launched`` (ns) was; None before the
        first run or without a timestamp."""
        i = bisect.bisect_right(self.at, launched) - 1 if launched is not None else -1
        return self.runs[i] if i >= 0 else None


#: One config's share of a call: launch lists and (kernel, start, end) by annotation, and the
#: kernels outside every annotation (name, ns).
ConfigShare = tuple[dict[str, list[Any]], dict[str, list[tuple[str, int | None, int | None]]],
                    list[tuple[str, int]]]


def split_one_call(actions: dict[str, list[Any]], seen: Attribution, starts: RunStarts,
                   configs: int | Sequence[int], runs: int) -> list[ConfigShare] | str:
    """Each config's share of one call of ``configs`` (their indices in the job, in call order;
    a number n: configs 0..n-1) x ``runs`` runs, in that order, or why the call cannot be split
    as nsight-python splits it.

    nsight-python gives the i-th of an annotation's ``configs * runs * k`` launches to run
    ``i // k`` in call order (config-major). The split is kept only if each launch's CPU
    timestamp lies in that very run (``starts``), the attribution lists name the same kernels,
    and every kernel outside the annotations was launched during a run.
    """
    if not actions:
        return "no kernel was attributed"
    indices = list(range(configs) if isinstance(configs, int) else configs)
    order = [(c, r) for c in indices for r in range(runs)]
    if starts.runs != order:
        return "the runs were not called in config order"
    shares: list[ConfigShare] = [({}, {}, []) for _ in indices]
    for annotation, launches in actions.items():
        k, extra = divmod(len(launches), len(order))
        times = seen.for_annotation(annotation)
        if extra or not k:
            return (f"{annotation}: {counted(len(launches), 'launch', 'launches')} over "
                    f"{counted(len(order), 'run')}")
        if [t[0] for t in times] != [a.name for a in launches]:
            return f"{annotation}: CUPTI's kernel records and nsight-python's lists differ"
        if [starts.run_of(t) for t in seen.launches_of(annotation)] != \
                [order[i // k] for i in range(len(launches))]:
            return f"{annotation}: the number of launches differs between runs"
        per_config = runs * k
        for c, (share, share_times, _) in enumerate(shares):
            share[annotation] = launches[c * per_config:(c + 1) * per_config]
            share_times[annotation] = times[c * per_config:(c + 1) * per_config]
    for kernel, launched in zip(seen.outside, seen.outside_launched, strict=True):
        run = starts.run_of(launched)
        if run is None:
            return (f"{kernel[0]}, outside every annotation, has no launch record (launched by a "
                    "CUDA graph?)" if launched is None else
                    f"{kernel[0]}, outside every annotation, was launched before the first run")
        shares[indices.index(run[0])][2].append(kernel)
    return shares


#: Reason of a CUPTI launch outside every annotation (set-up code, the L2 flush).
OUTSIDE_EVERY_ANNOTATION = ("outside every annotation (set-up code of the kernel, the L2 flush "
                            "before each region): not measured")


def _cupti_rows(actions: dict[str, list[Any]],
                times: dict[str, list[tuple[str, int | None, int | None]]], config: int,
                runs: int, warnings: list[str], first_run: int = 0) -> list[dict[str, Any]]:
    """Launch rows of ``runs`` runs of a config (its launch lists and (kernel, start, end) by
    annotation), numbered from ``first_run``; StartNs/EndNs (CUPTI clock) where the kernel's
    record was seen and the attribution lists agree."""
    rows = []
    for annotation, launches in actions.items():
        per_run, extra = divmod(len(launches), runs)
        if extra:
            warnings.append(f"{annotation}, config {config}: "
                            f"{counted(len(launches), 'launch', 'launches')} over "
                            f"{counted(runs, 'run')} (the count differs between runs); "
                            "attributed in launch order")
            per_run = max(per_run, 1)
        mine = times.get(annotation, [])
        if [t[0] for t in mine] != [a.name for a in launches]:
            mine = [(a.name, None, None) for a in launches]  # lists differ: no timestamps
        for i, (action, (_k, start, end)) in enumerate(zip(launches, mine, strict=True)):
            if action.values is None:
                continue
            rows.append({C.ANNOTATION: annotation, C.CONFIG: config,
                         C.RUN: first_run + min(i // per_run, runs - 1), C.LAUNCH: i % per_run,
                         C.KERNEL: action.name, C.GRID: None, C.BLOCK: None,
                         C.METRIC: C.GPU_TIME, C.VALUE: float(action.values[0]), C.UNIT: "ns",
                         C.START_NS: start, C.END_NS: end})
    return rows
