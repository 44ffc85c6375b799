"""Merge the finished tasks of a sweep into one bundle: the sweep folder itself.

Each done task's tables are read from its attempt folder, its configs renumbered to the
sweep's (``Config`` indexes the sweep's ``spec.json``), and written as the sweep's tables. A
task that ended failed or cancelled with the configs it measured kept (its manifest's
``partial_configs``, :mod:`~profiling_worker.bundle.schema.partial`) gives those configs too;
a sweep with any config not measured records which and why as a partial job does, so every
page says so and the gate does not judge it as complete. The
manifest's ``sweep`` entry records, per task, its configs, state, attempts, node, GPU (UUID
and model), the Slurm ids and tool versions; per-config ``sweep.configs`` says which task and
GPU measured it. A config is measured by one task on one GPU, so no value pools GPUs; a sweep
that ran on GPUs of several models says so in a note. The NVML trace and CUPTI launch times
are per GPU (their clocks differ) and stay in the task folders. Task folders are never
changed or deleted.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from profiling_worker import __version__
from profiling_worker.bundle.stats import adaptive
from profiling_worker.bundle.writer import empty_table, finish_bundle, write_table
from profiling_worker.bundle.schema import backends as B
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema import partial
from profiling_worker.bundle.schema.manifest import JobStatus, now_iso, read_manifest
from profiling_worker.bundle.schema.spec import validate_spec
from profiling_worker.sweep.reference import reference_time, slow_notes, slow_tasks
from profiling_worker.sweep.task import TASK_FILE
from profiling_worker.bundle.number_text import counted

#: Tables merged across tasks (the per-GPU nvml_trace and launch_times are not).
MERGED = (C.TABLE_LAUNCHES, C.TABLE_RUNS, C.TABLE_AGGREGATED, C.TABLE_WORK,
          C.TABLE_COLLECTORS, C.TABLE_UNATTRIBUTED)
TASKS_DIR = "tasks"  # the sweep's task folders (sweep_plan.TASKS_DIR on the app's side)
LEAVE_OUT = (TASKS_DIR, ".submitit")  # not listed as the bundle's files
READ_THREADS = 16
_WHY = {"cancelled": "cancelled by the user"}
VERSION_KEYS = ("nsight_python", "torch", "cupti_python", "python", "ncu_report")


def _read(folder: Path, name: str) -> pa.Table | None:
    path = folder / C.TABLES_DIR / f"{name}.parquet"
    # one small file per call, many calls at once: pyarrow's own threads only contend
    return pq.read_table(path, use_threads=False) if path.is_file() else None


def _renumber(table: pa.Table, configs: Sequence[int]) -> pa.Table:
    """``Config`` of a task's table (0.. within the task) as the sweep's config index."""
    if C.CONFIG not in table.column_names or table.num_rows == 0:
        return table
    local = table.column(C.CONFIG).to_numpy()
    index = table.column_names.index(C.CONFIG)
    return table.set_column(index, C.CONFIG, pa.array(np.asarray(configs, dtype="int64")[local]))


def _task_entry(task: Mapping[str, Any], folder: Path, sweep_dir: Path) -> dict[str, Any]:
    """What the manifest records of one task: where it ran, on which GPU, with which tools."""
    entry: dict[str, Any] = {k: task[k] for k in ("task", "configs", "state", "attempts", "reason")
                             if k in task}
    entry["folder"] = str(folder.relative_to(sweep_dir)) if folder.is_relative_to(sweep_dir) \
        else str(folder)
    try:
        info = json.loads((folder / TASK_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        info = {}
    try:
        manifest = read_manifest(folder)
    except (ValueError, OSError):
        manifest = {}
    gpu = manifest.get("gpu") or {}
    env = manifest.get("environment") or {}
    entry.update(node=info.get("node") or task.get("node") or "", slurm=info.get("env") or {},
                 gpu_uuid=gpu.get("uuid"), gpu_model=gpu.get("name") or "host (cpu backend)",
                 worker_version=manifest.get("worker_version"),
                 versions={**{k: env.get(k) for k in VERSION_KEYS if env.get(k)},
                           **({"ncu": (env.get("ncu") or {}).get("version")}
                              if (env.get("ncu") or {}).get("version") else {})},
                 reference=reference_time(folder))
    record = manifest.get(partial.CONFIGS_KEY) if task.get("state") != "done" else None
    if isinstance(record, Mapping) and record.get("measured") and \
            (folder / C.TABLES_DIR / f"{C.TABLE_RUNS}.parquet").is_file():
        configs = list(task["configs"])  # the task's config i is the sweep's configs[i]
        entry["kept_configs"] = [configs[i] for i in record["measured"]]
        entry["not_measured"] = [{"config": configs[m["config"]], "why": m["why"]}
                                 for m in record.get("not_measured") or ()]
    return entry


def _merged_tables(sweep_dir: Path, done: list[tuple[Mapping[str, Any], Path]],
                   params: list[str]) -> None:
    for name in MERGED:
        # threads: reading many small Parquet files is file-system latency (pyarrow lets go
        # of the GIL); 1,000 tasks are 6,000 files
        with ThreadPoolExecutor(READ_THREADS) as pool:
            tables = list(pool.map(lambda f: _read(f, name), [folder for _, folder in done]))
        parts = [_renumber(tab, task["configs"]) for (task, _), tab in zip(done, tables)
                 if tab is not None]
        if parts:
            frame = pa.concat_tables(parts, promote_options="permissive").to_pandas()
        elif name == C.TABLE_UNATTRIBUTED:
            continue
        else:
            frame = empty_table(name, params)
        write_table(sweep_dir, name, frame.sort_values(C.CONFIG, kind="stable")
                    .reset_index(drop=True) if C.CONFIG in frame else frame)
    write_table(sweep_dir, C.TABLE_NVML, empty_table(C.TABLE_NVML))


def _config_rows(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per config of a done task: its task, node, GPU UUID and model."""
    rows = [{"config": c, "task": e["task"], "node": e["node"], "gpu_uuid": e["gpu_uuid"],
             "gpu_model": e["gpu_model"]} for e in entries
            for c in (e["configs"] if e.get("state") == "done" else e.get("kept_configs") or ())]
    return sorted(rows, key=lambda r: r["config"])


def _partial_entries(entries: list[dict[str, Any]], configs: Sequence[Mapping[str, Any]],
                     cancelled: bool) -> dict[str, Any]:
    """The sweep's :data:`~profiling_worker.bundle.schema.partial.PARTIAL_KEY` and
    :data:`~profiling_worker.bundle.schema.partial.CONFIGS_KEY` when any config of it was not
    measured (a task failed or was cancelled, whole or after keeping some configs), else
    ``{}``; each config not measured says why (its task's own words where it kept others)."""
    measured = {c for e in entries for c in
                (e["configs"] if e.get("state") == "done" else e.get("kept_configs") or ())}
    if len(measured) == len(configs) or not measured:
        return {}
    why = {c: f"task {e['task']} {e['state']}: "
              f"{e.get('reason') or _WHY.get(e['state'], 'no reason given')}"
           for e in entries for c in e["configs"] if c not in measured}
    why.update({m["config"]: m["why"] for e in entries for m in e.get("not_measured") or ()})
    short = partial.Shortfall(sorted(measured), cancelled="by the user" if cancelled else None)
    entries_ = partial.manifest_entries(short, configs)
    for row in entries_[partial.CONFIGS_KEY]["not_measured"]:
        row["why"] = why.get(row["config"], row["why"])
    entries_[partial.PARTIAL_KEY] = [partial.note_of(entries_[partial.CONFIGS_KEY])]
    return entries_


def _warnings(entries: list[dict[str, Any]], models: set[str]) -> list[str]:
    out = [f"task {e['task']} (configs {', '.join(map(str, e['configs']))}) {e['state']} after "
           f"{counted(e.get('attempts', 1), 'attempt')}: "
           f"{e.get('reason') or _WHY.get(e['state'], 'no reason given')}"
           for e in entries if e.get("state") != "done"]
    if len(models) > 1:
        out.append(f"the configs ran on GPUs of {len(models)} models ({', '.join(sorted(models))}):"
                   " each config on one GPU (manifest sweep.configs), never pooled; compare "
                   "configs of different models with care")
    return out


def _auto_runs_merged(backend: Any, done: Sequence[tuple[Mapping[str, Any], Path]]) -> Any:
    """The first task's backend entry, with runs "auto"'s record of every task in sweep config
    indices (each task's record numbers its own configs from 0)."""
    if not isinstance(backend, dict) or "auto_runs" not in backend:
        return backend
    parts = [(((read_manifest(folder).get("backend") or {}).get("auto_runs") or {}),
              list(task["configs"])) for task, folder in done]
    return {**backend, "auto_runs": adaptive.merge_summaries(parts)}


def merge_sweep(sweep_dir: Path, tasks: Sequence[Mapping[str, Any]], cancelled: bool = False,
                started_at: str | None = None, retries: Sequence[str] = ()) -> dict[str, Any]:
    """Write the sweep's bundle from its tasks; returns the manifest written.

    Args:
        sweep_dir: the sweep folder (``spec.json`` of the whole sweep inside).
        tasks: one per task, in order: ``task`` (name), ``configs`` (sweep config indices),
            ``state`` (done, failed, preempted, cancelled), ``folder`` (its last attempt's
            folder), ``attempts`` (how many ran) and ``reason``.
        cancelled: the user cancelled the sweep (status ``cancelled``; the tables of the
            tasks that finished are still merged: nothing finished is lost).
        started_at: when the sweep was submitted (ISO 8601).
        retries: one line per retry the executor made (``sweep.retries``).

    Raises:
        OSError: a table or the manifest cannot be written.
    """
    raw = json.loads((sweep_dir / C.SPEC_FILE).read_text(encoding="utf-8"))
    spec = validate_spec(raw)
    with ThreadPoolExecutor(READ_THREADS) as pool:
        entries = list(pool.map(lambda t: _task_entry(t, Path(t["folder"]), sweep_dir), tasks))
    done = [(t, Path(t["folder"])) for t in tasks if t["state"] == "done"]
    kept = [(t, Path(t["folder"])) for t, e in zip(tasks, entries)
            if t["state"] == "done" or e.get("kept_configs")]
    _merged_tables(sweep_dir, kept, list(spec.parameter_names))
    base: dict[str, Any] = {}
    if kept:
        base = read_manifest(kept[0][1])
        base["backend"] = _auto_runs_merged(base.get("backend"), done)
    models = {e["gpu_model"] for e in entries if e["state"] == "done" or e.get("kept_configs")}
    flagged = slow_tasks(entries)
    status = (JobStatus.CANCELLED if cancelled else
              JobStatus.DONE if done else JobStatus.FAILED)
    manifest: dict[str, Any] = {
        **{k: base[k] for k in ("backend", "environment", "gpu", "kernel_files") if k in base},
        "job_id": sweep_dir.name, "status": status.value, "spec": spec.to_json(),
        "spec_hash": spec.spec_hash(), "worker_version": __version__,
        "started_at": started_at or base.get("started_at") or now_iso(), "finished_at": now_iso(),
        "provenance": {"recorded_by": f"profiling_worker {__version__} sweep merge",
                       "tasks": len(tasks)},
        "warnings": _warnings(entries, models),
        "sweep": {"tasks": entries, "configs": _config_rows(entries),
                  "gpu_models": sorted(models), "slow_tasks": flagged,
                  "retries": list(retries)},
        "notes": slow_notes(flagged, {e["task"]: e for e in entries}, B.on_gpu(spec.backend)),
    }
    manifest.update(_partial_entries(entries, spec.configs, cancelled))
    if status == JobStatus.FAILED:
        manifest["error"] = {"kind": "sweep_failed", "message": "no task of the sweep finished",
                             "hint": "read the tasks' reasons in the job panel or in "
                                     "manifest.json sweep.tasks; fix and submit again",
                             "log_tail": "\n".join(manifest["warnings"])[-4000:]}
    finish_bundle(sweep_dir, manifest, leave_out=LEAVE_OUT)
    return manifest
