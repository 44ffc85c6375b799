"""Turn a backend's per-launch table into the bundle's tables, and finish the bundle."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from profiling_worker.bundle.writer import (table_columns, write_columns, write_empty_table,
                                            write_table)
# Re-exported (the "as" form says so to mypy): the run path's name for it.
from profiling_worker.bundle.writer import finish_bundle as finish_bundle
from profiling_worker.bundle.writer import mark_result_ready as mark_result_ready
from profiling_worker.catalog.registry import Registry
from profiling_worker.bundle.stats.aggregate import aggregated_columns, as_frame, runs_columns
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.spec import JobSpec


def _formula(f: Any, annotation: str, config: Any) -> float:
    return float(f(annotation, config)) if f is not None else float("nan")


def work_table(spec: JobSpec, registry: Registry,
               annotations: dict[str, tuple[str, ...]]) -> pd.DataFrame:
    """Analytic FLOPs and bytes per annotation x config from the kernels' formulas
    (NaN where a user kernel declares none).

    Returns columns Annotation, Config, <params>, Flops (FLOP), Bytes (byte), Dtype.
    """
    rows = []
    for kernel in spec.kernels:
        entry = registry.kernels[kernel]
        for name in annotations[kernel]:
            for idx, config in enumerate(spec.configs):
                rows.append({C.ANNOTATION: name, C.CONFIG: idx, **config,
                             C.FLOPS: _formula(entry.flops, name, config),
                             C.BYTES: _formula(entry.bytes, name, config),
                             C.DTYPE: entry.dtype(name)})
    return pd.DataFrame(rows, columns=table_columns(C.TABLE_WORK, spec.parameter_names))


def write_result_tables(job_dir: Path, spec: JobSpec, registry: Registry,
                        annotations: dict[str, tuple[str, ...]],
                        launches: pd.DataFrame,
                        nvml: pd.DataFrame | Callable[[], pd.DataFrame],
                        collectors: pd.DataFrame | None,
                        unattributed: pd.DataFrame | None = None,
                        launch_times: (pd.DataFrame | Callable[[], pd.DataFrame | None]
                                       | None) = None,
                        ready: Callable[[], None] | None = None) -> dict[str, pd.DataFrame]:
    """Write runs and aggregated (what the dashboard draws first), call ``ready`` (the run
    path's :func:`mark_result_ready`: the result is on disk), then write launches, work,
    nvml_trace and collectors (Parquet, each file once),
    ``unattributed`` when some launches belong to no config or no annotation, and
    ``launch_times`` when the backend saw each launch's start and end (CUPTI).
    ``nvml``: the trace, or what makes it (the sampler's ``frame``: made after ``ready``), as
    ``launch_times`` may be (the CUPTI backend's).

    Returns:
        The tables written (name -> frame), for :func:`finish_bundle`'s checks.
    """
    params = list(spec.parameter_names)
    written: dict[str, pd.DataFrame] = {}

    def write(name: str, frame: pd.DataFrame) -> None:
        write_table(job_dir, name, frame)
        written[name] = frame

    # what the dashboard draws first is on disk first, the aggregated table from its columns
    # (its frame, which only the checks after it read, made once it is written); the rest
    # follows once it is safe
    runs_table = runs_columns(launches, params)
    runs = as_frame(runs_table)  # made now: the aggregated statistics read it
    write_columns(job_dir, C.TABLE_RUNS, runs_table, runs)
    written[C.TABLE_RUNS] = runs
    aggregated = aggregated_columns(runs, params)
    made = write_columns(job_dir, C.TABLE_AGGREGATED, aggregated)
    if ready is not None:
        ready()
    written[C.TABLE_AGGREGATED] = made if made is not None else as_frame(aggregated)
    write(C.TABLE_LAUNCHES, launches)
    write(C.TABLE_WORK, work_table(spec, registry, annotations))
    write(C.TABLE_NVML, nvml() if callable(nvml) else nvml)
    if collectors is not None:
        write(C.TABLE_COLLECTORS, collectors)
    else:  # no collector: the empty table's files are the same in every such job
        written[C.TABLE_COLLECTORS] = write_empty_table(job_dir, C.TABLE_COLLECTORS, params)
    if unattributed is not None and not unattributed.empty:
        write(C.TABLE_UNATTRIBUTED, unattributed)
    times = launch_times() if callable(launch_times) else launch_times
    if times is not None and not times.empty:
        write(C.TABLE_LAUNCH_TIMES, times)
    return written


def write_run_audit(job_dir: Path, tables: dict[str, pd.DataFrame],
                    manifest: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """Write ``tables/run_audit`` (:func:`profiling_worker.bundle.schema.run_audit.audit_runs` of
    the tables just written and the finished job's manifest) and return ``tables`` with it;
    the manifest says which checks made it (``run_audit_rules``, :data:`~profiling_worker.bundle.
    schema.run_audit.RULES`).

    The audit is derived from the other tables, so a failure of it must not fail the job: it
    is named in the manifest's ``warnings`` and the app derives the audit on load instead.
    """
    from profiling_worker.bundle.schema.run_audit import RULES, RULES_KEY, audit_runs

    try:
        audit = audit_runs(tables, manifest)
        if not audit.empty:
            write_table(job_dir, C.TABLE_RUN_AUDIT, audit)
            manifest[RULES_KEY] = RULES  # the checks it was made by (stored_audit reads it)
            return {**tables, C.TABLE_RUN_AUDIT: audit}
    except (ValueError, KeyError, TypeError) as exc:  # a table shaped unlike the run path's
        manifest.setdefault("warnings", []).append(
            f"the run audit could not be written ({type(exc).__name__}: {exc}); the dashboard "
            "derives it on load")
    return tables
