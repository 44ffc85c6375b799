"""A sweep on a cluster: the Slurm options a user picks, the split of a job's configs into array
tasks, and the attempt folders the tasks run in.

Layout of a sweep (a job folder of the result store, on a file system the nodes share)::

    <sweep>/spec.json            the whole job (all configs)
    <sweep>/sweep.json           options and the task plan (written at submit)
    <sweep>/tasks/t0003/a0/      attempt 0 of task 3: spec.json (its configs), reference/,
                                 task.json, manifest.json, tables/, events.jsonl (the worker's)
    <sweep>/.submitit/           submitit's pickles and Slurm logs

No Streamlit; stdlib only.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from profiling_worker.bundle.schema import backends as B, columns as C
from profiling_worker.bundle.schema.spec import JobSpec, whole_number_error
from profiling_worker.bundle.schema.spec_errors import FieldError, SpecInvalid
from profiling_worker.sweep.task import REFERENCE_DIR

SWEEP_FILE = "sweep.json"
TASKS_DIR = "tasks"
SUBMITIT_DIR = ".submitit"
Cluster = Literal["slurm", "local"]
#: The reference kernel every task times first (catalog kernel ``scale``: x * 2 over n fp32,
#: memory-bound and short): 64 MiB on a GPU (about 0.1 ms on an H200), 1 MiB on the host.
REFERENCE_KERNEL = "scale"
REFERENCE_N = {True: 1 << 24, False: 1 << 18}  # on a GPU backend / on the cpu backend
REFERENCE_RUNS = 10


@dataclass(frozen=True)
class SweepOptions:
    """How a sweep runs on the cluster (sidebar "Run on", head-less ``--slurm-*``).

    ``gpu_type`` is a Slurm GRES type (``--gres=gpu:<type>:<n>``); a spec repeated on each of
    several types is one sweep per type (:func:`per_gpu_type`).
    """

    cluster: Cluster = "slurm"  # "local": submitit's LocalExecutor on this host, no Slurm
    partition: str = ""  # "" = the cluster's default partition
    gpus_per_task: int = 1  # ignored by the cpu backend (no --gres)
    time_limit_min: int = 30  # per task (sbatch --time)
    parallelism: int = 16  # tasks at once (slurm_array_parallelism: --array=...%N)
    retries: int = 1  # extra attempts of a failed or preempted task
    gpu_type: str = ""  # "" = any GPU of the partition
    configs_per_task: int = 1
    reference: bool = True  # time the reference kernel first in every task
    worker_python: str = ""  # the worker's Python on the nodes ("" = the dashboard's)

    def to_json(self) -> dict[str, Any]:
        """The options as a JSON-able dict (``sweep.json``)."""
        return dataclasses.asdict(self)


_INT_RANGES = {"gpus_per_task": (0, 16), "time_limit_min": (1, 7 * 24 * 60),
               "parallelism": (1, 10_000), "retries": (0, 10), "configs_per_task": (1, 4096)}


def sweep_options(raw: dict[str, Any]) -> SweepOptions:
    """Check raw options (sidebar or JSON) and return :class:`SweepOptions`.

    Raises:
        SpecInvalid: every bad field, each named ``slurm.<field>`` with its fix.
    """
    errors: list[FieldError] = []
    known = {f.name for f in dataclasses.fields(SweepOptions)}
    for name in sorted(set(raw) - known):
        errors.append(FieldError(f"slurm.{name}", "unknown option",
                                 f"use one of {', '.join(sorted(known))}"))
    for name, (low, high) in _INT_RANGES.items():
        value = raw.get(name, getattr(SweepOptions, name))
        wrong = whole_number_error(value, low, high)  # the spec's range wording
        if wrong is not None:
            errors.append(FieldError(f"slurm.{name}", wrong,
                                     f"give {name} as an integer from {low:,} to {high:,}"))
    if raw.get("cluster", "slurm") not in ("slurm", "local"):
        errors.append(FieldError("slurm.cluster", f"{raw.get('cluster')!r} is not slurm or local",
                                 "choose slurm (sbatch) or local (this host, no Slurm)"))
    for name in ("partition", "gpu_type"):
        value = raw.get(name, "")
        if not isinstance(value, str) or any(ch in value for ch in " ,:;\n\t'\"$`"):
            errors.append(FieldError(f"slurm.{name}", f"{value!r} is not one Slurm name",
                                     "give a single name (letters, digits, - _ .)"))
    if errors:
        raise SpecInvalid(errors)
    return SweepOptions(**{k: raw[k] for k in known if k in raw})


def per_gpu_type(options: SweepOptions, gpu_types: list[str]) -> list[SweepOptions]:
    """One sweep's options per GPU type (the same spec on each); ``[options]`` for none."""
    return [dataclasses.replace(options, gpu_type=t) for t in gpu_types] or [options]


def split_configs(n_configs: int, per_task: int) -> list[tuple[int, ...]]:
    """Config indices of each task, in order: ``per_task`` consecutive configs a task (the
    last task takes the rest). ``split_configs(5, 2) == [(0, 1), (2, 3), (4,)]``."""
    return [tuple(range(i, min(i + per_task, n_configs))) for i in range(0, n_configs, per_task)]


def task_name(index: int) -> str:
    """``t0003``: the name of task 3, used in folders and messages."""
    return f"t{index:04d}"


def attempt_dir(sweep_dir: Path, task: int, attempt: int) -> Path:
    """The folder of one attempt of one task."""
    return sweep_dir / TASKS_DIR / task_name(task) / f"a{attempt}"


def reference_spec(spec: JobSpec) -> dict[str, Any]:
    """The reference kernel's spec on the sweep's backend and GPU (:data:`REFERENCE_KERNEL`)."""
    on_gpu = B.on_gpu(spec.backend)
    return {"kernels": [REFERENCE_KERNEL], "configs": [{"n": REFERENCE_N[on_gpu]}],
            "runs": REFERENCE_RUNS, "backend": spec.backend, "warmup": 2, "gpu": spec.gpu,
            "metrics": [B.get(spec.backend).duration_metric], "label": "reference kernel"}


def next_attempt(sweep_dir: Path, task: int) -> int:
    """The number of the task's next attempt: one past its last attempt folder (folders are
    never deleted, so a number is never used twice, even across a dashboard restart)."""
    folder = attempt_dir(sweep_dir, task, 0).parent
    numbers = [int(p.name[1:]) for p in folder.glob("a*") if p.name[1:].isdigit()] \
        if folder.is_dir() else []
    return max(numbers, default=-1) + 1


def write_attempts(sweep_dir: Path, spec: JobSpec, tasks: list[tuple[int, tuple[int, ...]]],
                   reference: bool) -> list[Path]:
    """Make the next attempt folder of each ``(task index, its config indices)``: its
    ``spec.json`` (its configs of ``spec``) and, with ``reference``, ``reference/spec.json``;
    returns the folders in order. The spec is turned into JSON once for all tasks (once per
    task made a 1,000-task sweep quadratic: 28 s of copying configs).

    Raises:
        FileExistsError: an attempt folder exists (an attempt is never run twice).
    """
    whole = spec.to_json()
    configs = whole["configs"]
    ref = json.dumps(reference_spec(spec), indent=1)
    folders = []
    for task, indices in tasks:
        folder = attempt_dir(sweep_dir, task, next_attempt(sweep_dir, task))
        folder.parent.mkdir(parents=True, exist_ok=True)
        folder.mkdir()
        task_spec = {**whole, "configs": [configs[i] for i in indices],
                     "label": f"{spec.label or 'sweep'} · {task_name(task)}"}
        (folder / C.SPEC_FILE).write_text(json.dumps(task_spec, indent=1), encoding="utf-8")
        if reference:
            (folder / REFERENCE_DIR).mkdir()
            (folder / REFERENCE_DIR / C.SPEC_FILE).write_text(ref, encoding="utf-8")
        folders.append(folder)
    return folders


def write_plan(sweep_dir: Path, options: SweepOptions, tasks: list[tuple[int, ...]]) -> None:
    """Write ``sweep.json``: the options and each task's config indices."""
    plan = {"options": options.to_json(),
            "tasks": [{"task": task_name(i), "configs": list(c)} for i, c in enumerate(tasks)]}
    (sweep_dir / SWEEP_FILE).write_text(json.dumps(plan, indent=1), encoding="utf-8")
