"""Run side of the ``cupti`` backend: kernel durations from CUPTI activity records through
nsight-python >= 1.1 (its CUPTI tool), with a libcupti from CUDA >= 13.4 (nsight-python 1.1.1
runtime requirements) loaded before torch loads its own older copy."""

from __future__ import annotations

import bisect
import ctypes
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
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
from profiling_worker.bundle.errors import BackendUnavailable
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

    def collect(self, nsight: Any, spec: JobSpec, bodies: Sequence[Any], out_dir: Path,
                emit: Emit, uuid: str | None, user: Sequence[UserCollector] = ()
                ) -> Collection:
        """:func:`collect_cupti`."""
        return collect_cupti(nsight, spec, bodies, out_dir, emit, uuid, user)


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
                  emit: Emit, uuid: str | None = None, user: Sequence[UserCollector] = ()
                  ) -> Collection:
    """Profile kernel durations with CUPTI; with ``cache_control="all"`` the L2 is flushed
    before every annotated region (l2_flush.py).

    A job of fixed runs with warm-up makes one nsight-python call of all its configs, as a bare
    script does (:func:`_one_call`); it is kept when every run of every config launched the
    same number of kernels in each annotation, which nsight-python's positional attribution
    assumes. Otherwise, and for runs "auto" (one call per batch the stopping rule asks for,
    profiling_worker/bundle/stats/adaptive.py) or without warm-up, each config gets calls of its
    own.

    Raises:
        KernelFailed: a kernel body raised (CUDA out of memory included).
        ProfilingFailed: CUPTI or nsight-python failed.
    """
    from profiling_worker.backends.l2_flush import L2Flush, no_flush

    counter = RunCounter(spec, emit)
    flush = L2Flush() if spec.cache_control == "all" else None
    annotate = flush.before_each(nsight.annotate) if flush else None
    recorders, collectors = nb.info_collectors(nsight, spec, counter, uuid, user)
    found = _Found()
    auto: dict[str, Any] = {}
    if not _one_call(nsight, spec, bodies, out_dir, counter, annotate, collectors, found, emit):
        counter.restart()  # the runs of a call that was not kept are measured again
        recorders.clear()
        measure = _per_config(nsight, spec, nb.profiled_function(
            spec, bodies, counter, lambda _m: nullcontext(), annotate), out_dir, counter,
            collectors, found)
        if spec.run_target is not None:
            states = adaptive.run_adaptive(spec.run_target, len(spec.configs), measure)
            auto = {"auto_runs": adaptive.summary(states, spec.run_target)}
        else:
            for idx in range(len(spec.configs)):
                measure(idx, spec.runs)
    return Collection(launches_frame(found.rows, spec), found.warnings + recorders.warnings(),
                      {"measurement": "GPU kernel duration (CUPTI activity records)",
                       "cache_flush": flush.describe() if flush else no_flush(spec.cache_control),
                       "thermal_guard": nb.THERMAL_OWN, "clock_pair": clock_pair(), **auto,
                       **user_collector_info(recorders.user)},
                      recorders.frame(spec), unattributed_frame(found.outside),
                      launch_times_frame(found.rows, spec))


@dataclass
class _Found:
    """What the calls of one job measured: launch rows, kernels outside every annotation
    (unattributed rows), warnings."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    outside: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def add_outside(self, config: int, kernels: Sequence[tuple[str, int]]) -> None:
        self.outside.extend({C.ANNOTATION: "", C.CONFIG: config, C.KERNEL: name, C.GRID: None,
                             C.BLOCK: None, C.METRIC: C.GPU_TIME, C.VALUE: float(ns),
                             C.UNIT: "ns", C.REASON: OUTSIDE_EVERY_ANNOTATION}
                            for name, ns in kernels)


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


def _failure(exc: Exception) -> Exception:
    return nb.profiling_error(exc, "CUPTI", "see worker.log; check that libcupti >= 13.4 was "
                                            "loaded")


def _per_config(nsight: Any, spec: JobSpec, profiled: Callable[..., None], out_dir: Path,
                counter: RunCounter, collectors: list[Any] | None,
                found: _Found) -> Callable[[int, int], dict[str, list[float]]]:
    """``measure(idx, runs)``: one nsight-python call of ``runs`` runs of config ``idx`` (its
    files under ``c<idx>/``, ``c<idx>-<call>/`` for a later call of the same config); its
    per-run durations by annotation."""
    calls: dict[int, int] = {}  # config -> nsight-python calls so far (runs "auto": several)

    def measure(idx: int, runs: int) -> dict[str, list[float]]:
        """Without warm-up the first run gets a call of its own: nsight-python hands over one
        launch list per call, and a cold first call may launch other kernels (autotuning),
        which would shift every later run's launches (the pre-flight compares exactly that)."""
        if not spec.warmup and runs > 1 and counter.next_run(idx) == 0:
            cold, rest = measure(idx, 1), measure(idx, runs - 1)
            return {a: cold.get(a, []) + rest.get(a, []) for a in {**cold, **rest}}
        call = calls.get(idx, 0)
        calls[idx] = call + 1
        out = out_dir / (f"c{idx}" if not call else f"c{idx}-{call}")
        options, dropped = accepted(nsight, {**cupti_options(spec, out, collectors), "runs": runs})
        found.warnings.extend([] if idx or call else dropped)  # the same for every config
        first = counter.next_run(idx)
        captured, seen, exc = _call(nsight, profiled, options,
                                    [tuple(spec.configs[idx].values())])
        if exc is not None:
            raise _failure(exc) from exc
        actions = captured[0] if captured else {}
        new = _cupti_rows(actions, {a: seen.for_annotation(a) for a in actions}, idx, runs,
                          found.warnings, first)
        found.rows.extend(new)
        found.add_outside(idx, seen.outside)
        return adaptive.region_values(new)

    return measure


#: Subfolder of ``nsight/`` with the files of a job's one call of all its configs.
ONE_CALL_DIR = "all"
#: Jobs (kernels, annotations, configs) whose one call this process did not keep: a warm
#: worker measures their repeats per config at once instead of paying for both again.
_NOT_KEPT: set[tuple[Any, ...]] = set()


def _one_call(nsight: Any, spec: JobSpec, bodies: Sequence[Any], out_dir: Path,
              counter: RunCounter, annotate: Any, collectors: list[Any] | None, found: _Found,
              emit: Emit) -> bool:
    """All configs in one nsight-python call (its files under ``all/``): one CUPTI session
    and one aggregation instead of one per config (on the H200 a warm J1's four calls took
    249 ms against 98 ms for one: docs/performance.md). True when kept: every kernel's launch
    (CUPTI's CPU timestamp) falls in the run nsight-python's positional split gives it
    (:func:`split_one_call`). Otherwise its files are removed, a log event says why and
    False is returned (the caller measures each config in calls of its own); so too without
    warm-up, for runs "auto", for one config, where CUPTI's clock cannot be read, and for a
    job whose kernels and configs this process already saw refused.

    Raises:
        KernelFailed, ProfilingFailed: the call failed for another reason than the split.
    """
    if spec.run_target is not None or not spec.warmup or len(spec.configs) < 2:
        return False
    clock = _cupti_clock()
    if clock is None:
        return False
    shape = (spec.kernels, spec.annotations, tuple(tuple(c.items()) for c in spec.configs))
    if shape in _NOT_KEPT:
        emit("log", message="CUPTI: each config in calls of its own, as in this worker's earlier "
                            "job of these kernels and configs (its one call was not kept)")
        return False
    starts = RunStarts(clock)
    profiled = nb.profiled_function(spec, bodies, counter, starts, annotate)
    out = out_dir / ONE_CALL_DIR
    options, dropped = accepted(nsight, {**cupti_options(spec, out, collectors),
                                         "runs": spec.runs})
    configs = [tuple(c.values()) for c in spec.configs]
    captured, seen, exc = _call(nsight, profiled, options, configs)
    split = split_one_call(captured[0] if captured else {}, seen, starts, len(configs),
                           spec.runs)
    if isinstance(split, str):
        if exc is not None and not captured:  # failed before its extraction: not the split
            raise _failure(exc) from exc
        shutil.rmtree(out, ignore_errors=True)
        _NOT_KEPT.add(shape)
        emit("log", message=f"CUPTI: one call of all configs not kept ({split}); each config "
                            "is measured in calls of its own")
        return False
    if exc is not None:
        raise _failure(exc) from exc
    found.warnings.extend(dropped)
    for idx, (actions, times, outside) in enumerate(split):
        found.rows.extend(_cupti_rows(actions, times, idx, spec.runs, found.warnings))
        found.add_outside(idx, outside)
    return True


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
                   configs: int, runs: int) -> list[ConfigShare] | str:
    """Each config's share of one call of ``configs`` configs x ``runs`` runs, or why the call
    cannot be split as nsight-python splits it.

    nsight-python gives the i-th of an annotation's ``configs * runs * k`` launches to run
    ``i // k`` in call order (config-major). The split is kept only if each launch's CPU
    timestamp lies in that very run (``starts``), the attribution lists name the same kernels,
    and every kernel outside the annotations was launched during a run.
    """
    if not actions:
        return "no kernel was attributed"
    order = [(c, r) for c in range(configs) for r in range(runs)]
    if starts.runs != order:
        return "the runs were not called in config order"
    shares: list[ConfigShare] = [({}, {}, []) for _ in range(configs)]
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
        shares[run[0]][2].append(kernel)
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
