"""Run side of the ``cupti`` backend: kernel durations from CUPTI activity records through
nsight-python >= 1.1 (its CUPTI tool), with a libcupti from CUDA >= 13.4 (nsight-python 1.1.1
runtime requirements) loaded before torch loads its own older copy."""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from profiling_worker import adaptive
from profiling_worker.backends import nsight_backend as nb
from profiling_worker.backends.base import (Collection, Emit, RunCounter, launch_times_frame,
                                            launches_frame, unattributed_frame)
from profiling_worker.backends.cupti_times import Attribution, capture_attribution, clock_pair
from profiling_worker.backends.nsight_options import accepted, cupti_options
from profiling_worker.backends.run_side import NO_GPU, BackendStatus, unavailable
from profiling_worker.environment import version_tuple
from profiling_worker.errors import BackendUnavailable
from profiling_worker.schema import backends as B, columns as C, tools as T
from profiling_worker.schema.spec import JobSpec

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
                emit: Emit, uuid: str | None) -> Collection:
        """:func:`collect_cupti`."""
        return collect_cupti(nsight, spec, bodies, out_dir, emit, uuid)


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
    """Profile kernel durations with CUPTI, one nsight-python call per config (runs "auto":
    one per batch the stopping rule asks for, profiling_worker/adaptive.py); with
    ``cache_control="all"`` the L2 is flushed before every annotated region (l2_flush.py).

    Raises:
        KernelFailed: a kernel body raised (CUDA out of memory included).
        ProfilingFailed: CUPTI or nsight-python failed.
    """
    from profiling_worker.backends.l2_flush import L2Flush, no_flush

    counter = RunCounter(spec, emit)
    flush = L2Flush() if spec.cache_control == "all" else None
    profiled = nb.profiled_function(spec, bodies, counter, lambda _m: nullcontext(),
                                    flush.before_each(nsight.annotate) if flush else None)
    rows: list[dict[str, Any]] = []
    outside: list[dict[str, Any]] = []
    warnings: list[str] = []
    recorder, collectors = nb.info_collectors(nsight, spec, counter, uuid)
    calls: dict[int, int] = {}  # config -> nsight-python calls so far (runs "auto": several)

    def measure(idx: int, runs: int) -> dict[str, list[float]]:
        """One nsight-python call of ``runs`` runs of config ``idx``; its per-run durations.
        Without warm-up the first run gets a call of its own: nsight-python hands over one
        launch list per call, and a cold first call may launch other kernels (autotuning),
        which would shift every later run's launches (the pre-flight compares exactly that)."""
        if not spec.warmup and runs > 1 and counter.next_run(idx) == 0:
            cold, rest = measure(idx, 1), measure(idx, runs - 1)
            return {a: cold.get(a, []) + rest.get(a, []) for a in {**cold, **rest}}
        call = calls.get(idx, 0)
        calls[idx] = call + 1
        out = out_dir / (f"c{idx}" if not call else f"c{idx}-{call}")
        options, dropped = accepted(nsight, {**cupti_options(spec, out, collectors), "runs": runs})
        warnings.extend([] if idx or call else dropped)  # the same for every config
        decorated = nsight.analyze.kernel(**options)(profiled)
        first = counter.next_run(idx)
        with _capture_cupti_launches(nsight) as captured, capture_attribution(nsight) as seen:
            try:
                decorated(configs=[tuple(spec.configs[idx].values())])
            except Exception as exc:
                raise nb.profiling_error(exc, "CUPTI", "see worker.log; check that libcupti "
                                         ">= 13.4 was loaded") from exc
        new = _cupti_rows(captured, idx, runs, warnings, seen, first)
        rows.extend(new)
        outside.extend({C.ANNOTATION: "", C.CONFIG: idx, C.KERNEL: name, C.GRID: None,
                        C.BLOCK: None, C.METRIC: C.GPU_TIME, C.VALUE: float(ns), C.UNIT: "ns",
                        C.REASON: OUTSIDE_EVERY_ANNOTATION} for name, ns in seen.outside)
        return adaptive.region_values(new)

    auto: dict[str, Any] = {}
    if spec.run_target is not None:
        states = adaptive.run_adaptive(spec.run_target, len(spec.configs), measure)
        auto = {"auto_runs": adaptive.summary(states, spec.run_target)}
    else:
        for idx in range(len(spec.configs)):
            measure(idx, spec.runs)
    return Collection(launches_frame(rows, spec), warnings,
                      {"measurement": "GPU kernel duration (CUPTI activity records)",
                       "cache_flush": flush.describe() if flush else no_flush(spec.cache_control),
                       "thermal_guard": nb.THERMAL_OWN, "clock_pair": clock_pair(), **auto},
                      nb.collector_frame(recorder, spec), unattributed_frame(outside),
                      launch_times_frame(rows, spec))


#: Reason of a CUPTI launch outside every annotation (set-up code, the L2 flush).
OUTSIDE_EVERY_ANNOTATION = ("outside every annotation (set-up code of the kernel, the L2 flush "
                            "before each region): not measured")


def _cupti_rows(captured: list[dict[str, list[Any]]], config: int, runs: int,
                warnings: list[str], seen: Attribution, first_run: int = 0
                ) -> list[dict[str, Any]]:
    """Launch rows of one nsight-python call of ``runs`` runs of a config, numbered from
    ``first_run``; StartNs/EndNs (CUPTI clock) where the kernel's record was seen and the
    attribution lists agree."""
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
                         C.RUN: first_run + min(i // per_run, runs - 1), C.LAUNCH: i % per_run,
                         C.KERNEL: action.name, C.GRID: None, C.BLOCK: None,
                         C.METRIC: C.GPU_TIME, C.VALUE: float(action.values[0]), C.UNIT: "ns",
                         C.START_NS: start, C.END_NS: end})
    return rows
