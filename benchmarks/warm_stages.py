"""Where a warm CUPTI job's time goes, by wall-clock timers (issue 24): job J1 run ``--repeats``
times through ``runner.run_job`` in one warm process (as ``profiling_worker serve`` does:
probe and warm-up once), with a timer around each stage and no sampling profiler (which
slowed pandas-heavy code 3x in ``worker_breakdown.py``).

Stages (inclusive wall ms per job; nested ones are inside their parents):

- the worker's: ``prepare`` (spec, registry, GPU pin, memory check; of it ``prepare: memory
  check`` and ``prepare: free memory``), ``collect`` (the backend),
  of it ``warm_up_bodies`` (one call per config before profiling) and the nsight-python calls,
  ``write_result_tables``, ``finish_bundle`` (plausibility, manifest, file list);
- nsight-python's, per call summed over the job's calls: ``nsight-python call`` (decorated
  call to results), of it ``CUPTI collect`` (session), of that ``run_profile_session`` (the
  runs: kernels, launches, syncs, its thermal guard) and ``extract_df_from_data``, and, outside
  the collector, ``aggregate_data``; the rest of a call is its two CSVs;
- inside the worker's two, labelled ``tables:`` and ``finish:``: ``launches_to_runs``,
  ``aggregate_runs`` (since session 27 ``runs_columns`` and ``aggregated_columns``),
  ``work_table``, every ``write_table`` and ``write_columns`` (runs and aggregated, since
  session 27; of them the Parquet writes; the rest is pyarrow's conversion and the files' creation and renames: the worker writes no CSV, a
  table's CSV is made from its Parquet file when downloaded), ``write_empty_table`` (the empty
  collectors table of a job without collectors, from bytes made once), plausibility's
  ``check_bundle``, the file list and the manifest (``finish: manifest``: every write of it,
the result-ready one too, which ``result ready (manifest)`` times alone); nsight-python's CSV writes (in its calls);
  and the NVML sampler's start and stop (``__enter__``, ``__exit__``).

Two marks of the worker's own part (issue 40), from the start of ``write_result_tables``: to the
end of the result-ready manifest's write (``mark_result_ready``: runs and aggregated on disk,
what the first chart reads) and to the end of ``finish_bundle`` (the final write); stages
``own part: to result_ready`` and ``own part: whole (to the final write)``, with the thread's
CPU time beside them, in both modes. A checkout without the mark times the whole alone.

Prints one line per stage (median over the repeats, min-max) and writes JSON. Usage, on the GPU
machine with the CUPTI backend's wheels on PYTHONPATH (scripts/gpu_env.sh's CUPTI_PATH):
``python benchmarks/warm_stages.py OUT_JSON [--repeats 10]``

Without a GPU (issue 40), ``--recorded BUNDLE`` times the worker's own stages alone on a recorded
H200 bundle's inputs (``benchmarks/post_processing.py``: what the backend handed over), as the run
path does after the collection: ``write_result_tables``, ``write_run_audit`` and
``finish_bundle``, with the same inner timers; ``run_job wall`` is then their sum. Each stage's
CPU time (the thread's) is kept beside its wall time there (``cpu_median_ms``, ``per_job_cpu_ms``).
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
J1 = {"kernels": ["matmul"], "annotations": ["fp16"], "backend": "cupti",
      "configs": [{"n": n} for n in (1024, 2048, 4096, 8192)], "runs": 10}
_spent: collections.Counter[str] = collections.Counter()
_cpu: collections.Counter[str] = collections.Counter()  # the thread's CPU time, s
_calls: collections.Counter[str] = collections.Counter()
#: label -> (wall, thread CPU) at the first call's start and at the last call's end, this job
_began: dict[str, tuple[float, float]] = {}
_ended: dict[str, tuple[float, float]] = {}
#: The two marks (issue 40): the worker's own part from the start of ``write_result_tables`` to
#: the end of the result-ready manifest's write, and to the end of ``finish_bundle``.
TO_READY, WHOLE = "own part: to result_ready", "own part: whole (to the final write)"


def _timer(original: Any, label: str) -> Any:
    """``original`` wrapped to add its wall time, and the calling thread's CPU time, to
    ``label``, and to note when its first call began and its last ended (:func:`_marks`)."""
    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0, c0 = time.perf_counter(), time.thread_time()
        _began.setdefault(label, (t0, c0))
        try:
            return original(*args, **kwargs)
        finally:
            t1, c1 = time.perf_counter(), time.thread_time()
            _ended[label] = (t1, c1)
            _spent[label] += t1 - t0
            _cpu[label] += c1 - c0
            _calls[label] += 1

    return wrapper


def _marks() -> tuple[dict[str, float], dict[str, float]]:
    """This job's :data:`TO_READY` and :data:`WHOLE`, (wall ms, thread CPU ms); a mark the
    checkout does not make (no result-ready write before issue 40's) is left out."""
    start = _began.get("write_result_tables")
    ends = {TO_READY: _ended.get("result ready (manifest)"), WHOLE: _ended.get("finish_bundle")}
    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}
    for name, end in ends.items():
        if start is not None and end is not None:
            wall[name] = (end[0] - start[0]) * 1e3
            cpu[name] = (end[1] - start[1]) * 1e3
    return wall, cpu


def _clear() -> None:
    """Forget the last job's timers."""
    for book in (_spent, _cpu, _calls, _began, _ended):
        book.clear()


def _timed(owner: Any, name: str, label: str) -> None:
    """Replace ``owner.name`` by a wrapper adding its wall time to ``label``."""
    setattr(owner, name, _timer(getattr(owner, name), label))


def _time_decorated_calls(core: Any) -> None:
    """Time every call of a function nsight-python decorated (its wrapper, CSVs included)."""
    original = core.NsightProfiler.__call__
    core.NsightProfiler.__call__ = lambda self, func: _timer(original(self, func),
                                                             "nsight-python call")


def install_timers() -> None:
    """Timers on the worker's and nsight-python 1.1's stages (see the module docstring)."""
    import nsight.collection.core as core
    import nsight.collection.cupti as cupti_collection
    import nsight.extraction as extraction
    import nsight.transformation as transformation

    from profiling_worker.job import results, runner
    from profiling_worker.backends import nsight_backend

    _time_decorated_calls(core)
    collector = next(v for v in vars(cupti_collection).values()
                     if isinstance(v, type) and issubclass(v, core.NsightCollector)
                     and v is not core.NsightCollector)
    _timed(collector, "collect", "CUPTI collect")
    _timed(core, "run_profile_session", "run_profile_session")
    _timed(extraction, "extract_df_from_data", "extract_df_from_data")
    _timed(transformation, "aggregate_data", "aggregate_data")
    _timed(runner, "prepare", "prepare")
    if hasattr(runner, "_check_memory"):  # inside prepare: the memory check, NVML's free query
        _timed(runner, "_check_memory", "prepare: memory check")
        _timed(runner.gpu_select, "free_memory", "prepare: free memory")
    _timed(runner, "load_registry", "prepare: kernel files")
    _timed(runner, "collect", "collect")
    _timed(nsight_backend, "warm_up_bodies", "warm_up_bodies")
    _install_worker_timers(results)


def _install_worker_timers(results: Any) -> None:
    """Timers on the worker's own stages after the collection, and inside them."""
    _timed(results, "write_result_tables", "write_result_tables")
    _timed(results, "write_run_audit", "write_run_audit")
    _timed(results, "finish_bundle", "finish_bundle")
    if hasattr(results, "mark_result_ready"):  # issue 40: runs and aggregated on disk
        _timed(results, "mark_result_ready", "result ready (manifest)")
    _install_inner_timers(results)


def _install_inner_timers(results: Any) -> None:
    """Timers inside the worker's tables and checks, and on the NVML sampler."""
    import pandas as pd

    from profiling_worker.bundle import writer as bundle_writer
    from profiling_worker.probes import nvml_trace
    from profiling_worker.bundle.schema import run_audit

    # since session 27 the run path makes both tables' columns (runs_columns,
    # aggregated_columns) and writes them by write_columns: timed under the old names
    for name, label in (("runs_columns", "launches_to_runs"),
                        ("aggregated_columns", "aggregate_runs")):
        _timed(results, name if hasattr(results, name) else label, f"tables: {label}")
    for name in ("work_table", "write_table", "write_columns"):
        if hasattr(results, name):  # write_columns: runs and aggregated, since session 27
            _timed(results, name, f"tables: {name}")
    if hasattr(results, "write_empty_table"):  # a job without collectors (issue 40)
        _timed(results, "write_empty_table", "tables: write_empty_table")
    _timed(bundle_writer.pq, "write_table", "tables: Parquet writes")
    _timed(pd.DataFrame, "to_csv", "nsight-python's CSV writes")
    _timed(bundle_writer.plausibility, "check_bundle", "finish: plausibility")
    _timed(bundle_writer, "bundle_files", "finish: file list")
    _timed(bundle_writer, "write_manifest", "finish: manifest")
    _timed(run_audit, "audit_runs", "run audit: audit_runs")
    _timed(nvml_trace.NvmlSampler, "__enter__", "NVML sampler start")
    _timed(nvml_trace.NvmlSampler, "__exit__", "NVML sampler stop")


def _recorded_jobs(bundle: Path, repeats: int) -> tuple[list[float], list[dict[str, float]]]:
    """``repeats`` + 1 post-processings of ``bundle``'s recorded inputs (the first apart), each
    in a fresh copy of its folder (copied before the timer starts); (walls s, stages ms).
    :data:`_per_job_cpu` gets each job's CPU time per stage (ms; ``run_job wall``: the whole
    post-processing's), which a machine shared with other work sways far less than wall time."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    import post_processing
    from profiling_worker.job import results

    rec = post_processing.load_recorded(bundle)
    _install_worker_timers(results)
    per_job: list[dict[str, float]] = []
    walls: list[float] = []
    with tempfile.TemporaryDirectory(prefix="warm-stages-") as root:
        for i in range(repeats + 1):
            job = post_processing._fresh_copy(rec, Path(root))
            _clear()
            t0, c0 = time.perf_counter(), time.thread_time()
            post_processing.post_process(rec, job)
            wall = time.perf_counter() - t0
            _cpu["run_job wall"] = time.thread_time() - c0
            marks, cpu_marks = _marks()
            print(f"job {i}{' (first, apart)' if not i else ''}: {wall * 1e3:.1f} ms"
                  + (f", to result_ready {marks[TO_READY]:.1f} ms" if TO_READY in marks
                     else ""), flush=True)
            if i:
                walls.append(wall)
                per_job.append({**{k: v * 1e3 for k, v in _spent.items()}, **marks})
                _per_job_cpu.append({**{k: v * 1e3 for k, v in _cpu.items()}, **cpu_marks})
    return walls, per_job


_per_job_cpu: list[dict[str, float]] = []


def _gpu_jobs(repeats: int) -> tuple[list[float], list[dict[str, float]]]:
    """J1 run ``repeats`` + 1 times through ``runner.run_job`` (the first apart)."""
    from profiling_worker.probes import gpu_select
    from profiling_worker.job import runner
    from profiling_worker.backends.registry import environment_report, run_side
    from profiling_worker.backends.run_side import BackendStatus
    from profiling_worker.backends.channel import Channel

    from profiling_worker.backends import gc_pause

    gc_pause.pause()  # as cli.py's serve: the collector off until the warm-up is done
    report = environment_report()
    gpu_select.pin(gpu_select.resolve(0, report["environment"].get("gpus") or ()))
    run_side("cupti").warm_up(BackendStatus.from_json(report["backends"]["cupti"]))
    gc_pause.resume()
    install_timers()
    per_job: list[dict[str, float]] = []
    walls: list[float] = []
    for i in range(repeats + 1):
        job = Path(tempfile.mkdtemp(prefix="warm-stages-"))
        (job / "spec.json").write_text(json.dumps(J1))
        _clear()
        t0, c0 = time.perf_counter(), time.thread_time()
        runner.run_job(job, Channel(job, None), report)
        wall = time.perf_counter() - t0
        _cpu["run_job wall"] = time.thread_time() - c0
        status = json.loads((job / "manifest.json").read_text())["status"]
        marks, cpu_marks = _marks()
        print(f"job {i}{' (first, apart)' if not i else ''}: {wall * 1e3:.1f} ms, {status}, "
              f"nsight-python calls {_calls['nsight-python call']}"
              + "".join(f", {k} {v:.1f} ms" for k, v in marks.items()), flush=True)
        if i:
            walls.append(wall)
            per_job.append({**{k: v * 1e3 for k, v in _spent.items()}, **marks})
            _per_job_cpu.append({**{k: v * 1e3 for k, v in _cpu.items()}, **cpu_marks})
    return walls, per_job


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_json", type=Path)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--recorded", type=Path, help="a recorded bundle: the worker's stages "
                        "alone on its inputs, no GPU")
    args = parser.parse_args()
    walls, per_job = (_recorded_jobs(args.recorded, args.repeats) if args.recorded
                      else _gpu_jobs(args.repeats))
    stages = sorted({k for job in per_job for k in job})
    summary = {k: {"median_ms": statistics.median(j.get(k, 0.0) for j in per_job),
                   "min_ms": min(j.get(k, 0.0) for j in per_job),
                   "max_ms": max(j.get(k, 0.0) for j in per_job)} for k in stages}
    print(f"run_job wall: median {statistics.median(walls) * 1e3:.1f} ms "
          f"({min(walls) * 1e3:.1f}-{max(walls) * 1e3:.1f})")
    cpu = {k: statistics.median(j.get(k, 0.0) for j in _per_job_cpu)
           for k in sorted({k for j in _per_job_cpu for k in j})}
    for k, s in sorted(summary.items(), key=lambda kv: -kv[1]["median_ms"]):
        print(f"  {k:24s} {s['median_ms']:7.1f} ms ({s['min_ms']:.1f}-{s['max_ms']:.1f})"
              + (f"; CPU {cpu[k]:.1f} ms" if k in cpu else ""))
    if TO_READY in summary:  # the worker's own part to the first chart's tables, and whole
        print(f"own part to result_ready: median {summary[TO_READY]['median_ms']:.1f} ms"
              + (f" (CPU {cpu[TO_READY]:.1f})" if TO_READY in cpu else "")
              + f", whole {summary[WHOLE]['median_ms']:.1f} ms"
              + (f" (CPU {cpu[WHOLE]:.1f})" if WHOLE in cpu else ""))
    args.out_json.write_text(json.dumps({
        "repeats": args.repeats, "recorded": str(args.recorded) if args.recorded else None,
        "gc_pause": os.environ.get("KPROF_GC_PAUSE", "1"),  # profiling_worker/backends/gc_pause.py
        "cpus": os.cpu_count(), "load_average": os.getloadavg(), "run_job_wall_s": walls,
        "stages": summary, "per_job_ms": per_job,
        **({"cpu_median_ms": cpu, "per_job_cpu_ms": _per_job_cpu} if _per_job_cpu else {})},
        indent=1))


if __name__ == "__main__":
    main()
