"""Where a sweep's tasks run: a Slurm job array through submitit, or submitit's local executor.

Both submit :func:`profiling_worker.sweep.task.run_task` once per attempt folder (submitit's
``map_array``: one Slurm job array, ``--array=0-N%parallelism``), cancel, and say each task's
scheduler state. Slurm states come from ``squeue --states=all`` (it lists ended jobs for
Slurm's ``MinJobAge``, 300 s by default), not from ``sacct``: a cluster without accounting
(``slurmdbd``) has no ``sacct`` answers. What a task produced is read from its folder instead
(:mod:`app.services.sweep_tasks`). A local task is followed by its process group, and
cancelled through it (:mod:`app.services.local_tasks`). No Streamlit here.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import submitit

from profiling_worker.bundle.schema import backends as B
from profiling_worker.bundle.schema.spec import JobSpec
from profiling_worker.sweep.task import run_task

from app.services.local_tasks import CancelLadder, GroupLocalExecutor, live_groups
from app.services.sweep_plan import SweepOptions

SQUEUE_TIMEOUT_S = 30.0


class SlurmMissing(RuntimeError):
    """No Slurm here (``sbatch`` not found) or it does not answer; the message says which."""


@dataclass(frozen=True)
class QueueState:
    """A task's state as its scheduler reports it: Slurm's job state name (``PENDING``,
    ``RUNNING``, ``COMPLETED``, ``FAILED``, ``PREEMPTED``, ``CANCELLED``, ``TIMEOUT`` ...) and
    its node ("" while pending)."""

    state: str
    node: str = ""
    reason: str = ""


class TaskQueue(Protocol):
    """What the sweep executor needs of a scheduler."""

    def missing(self) -> str | None:
        """Why this host cannot submit to the scheduler (None: it can)."""

    def submit(self, folders: list[Path], name: str) -> list[str]:
        """Start one task per attempt folder as one array named ``name`` (unique to this
        submission); returns their scheduler ids, in order."""

    def adopt(self, name: str, folders: list[Path]) -> list[str] | None:
        """The ids of the array submitted as ``name`` (one task per attempt folder) by a
        submitter that died before recording them, made ready to run; None when the
        scheduler no longer lists it."""

    def states(self, ids: list[str]) -> dict[str, QueueState]:
        """Scheduler state of each id it still knows (ended jobs may be forgotten)."""

    def cancel(self, ids: list[str]) -> None:
        """Cancel these tasks (pending ones never start, running ones get SIGTERM). Called
        again on every poll while any of them runs: a signal a task did not act on is sent
        again, or a stronger one."""


def _executor(kind: str, folder: Path, python: str) -> submitit.Executor:
    if kind == "local":
        return GroupLocalExecutor(folder=folder, python=python)
    return submitit.SlurmExecutor(folder=folder, python=python, max_num_timeout=0)


def slurm_parameters(spec: JobSpec, options: SweepOptions, name: str) -> dict[str, Any]:
    """submitit ``SlurmExecutor.update_parameters`` of a sweep: one task per array element,
    ``--gres=gpu[:<type>]:<n>`` for a GPU backend, ``--time``, ``--array=...%parallelism``."""
    params: dict[str, Any] = {"job_name": name, "time": options.time_limit_min,
                              "array_parallelism": options.parallelism, "nodes": 1,
                              "ntasks_per_node": 1, "cpus_per_task": 1}
    if options.partition:
        params["partition"] = options.partition
    if B.on_gpu(spec.backend) and options.gpus_per_task:
        kind = f"gpu:{options.gpu_type}" if options.gpu_type else "gpu"
        params["gres"] = f"{kind}:{options.gpus_per_task}"
    return params


@dataclass
class SubmititQueue:
    """A :class:`TaskQueue` on submitit: ``kind="slurm"`` (sbatch/squeue/scancel) or
    ``"local"`` (one process group per task on this host).

    Raises (at submit):
        SlurmMissing: ``kind="slurm"`` and ``sbatch`` is not on PATH or refuses the job.
    """

    kind: str
    folder: Path
    python: str
    parameters: dict[str, Any]
    _jobs: dict[str, submitit.Job[Any]] = field(default_factory=dict)
    _ladder: CancelLadder = field(default_factory=CancelLadder)  # local tasks' cancels
    _scancelled: set[str] = field(default_factory=set)  # arrays scancel took

    def missing(self) -> str | None:
        if self.kind == "slurm" and shutil.which("sbatch") is None:
            return "Slurm's sbatch is not on PATH: this host cannot submit to a cluster"
        return None

    def submit(self, folders: list[Path], name: str) -> list[str]:
        if (reason := self.missing()) is not None:
            raise SlurmMissing(reason)
        executor = _executor(self.kind, self.folder, self.python)
        if self.kind == "slurm":
            executor.update_parameters(**{**self.parameters, "job_name": name})
        else:  # the local executor sets CUDA_VISIBLE_DEVICES to the task's GPUs itself
            gpus = int(str(self.parameters.get("gres", "0")).rsplit(":", 1)[-1])
            executor.update_parameters(timeout_min=self.parameters.get("time", 30),
                                       gpus_per_node=gpus)
        try:
            jobs = executor.map_array(run_task, [str(f) for f in folders])
        except (submitit.core.utils.FailedJobError, subprocess.CalledProcessError,
                OSError) as exc:  # submitit raises FailedJobError (sbatch's stderr) on refusal
            detail = getattr(exc, "output", b"") or b""
            text = detail.decode(errors="replace") if isinstance(detail, bytes) else str(detail)
            raise SlurmMissing(f"sbatch refused the array: {exc} {text}".strip()) from exc
        for job in jobs:
            self._jobs[job.job_id] = job
        return [job.job_id for job in jobs]

    def adopt(self, name: str, folders: list[Path]) -> list[str] | None:
        """Found by its name in squeue, the array's tasks get submitit's pickles where the
        dead submitter would have moved them after sbatch (each task waits 60 s for its
        ``<id>_submitted.pkl``; one that gave up failed and is retried as any other).

        Raises:
            SlurmMissing: squeue is missing or fails.
        """
        if self.kind == "local":
            return None  # a local task is a process of the stopped server: nothing to ask
        array = squeue_array_named(name)
        if array is None:
            return None
        ids = [f"{array}_{i}" for i in range(len(folders))]
        for job_id, folder in zip(ids, folders):
            pickle = submitit.core.utils.JobPaths(self.folder, job_id=job_id).submitted_pickle
            if not pickle.exists():
                delayed = submitit.core.utils.DelayedSubmission(run_task, str(folder))
                delayed.set_timeout(int(self.parameters.get("time", 30)), 0)
                part = pickle.with_name(pickle.name + ".part")
                delayed.dump(part)
                part.rename(pickle)  # whole or absent: a waiting task never reads half of it
        return ids

    def states(self, ids: list[str]) -> dict[str, QueueState]:
        if self.kind == "local":  # by its process group: also a task of a stopped dashboard
            live = live_groups(self.folder, set(ids))
            return {i: self._local_state(i, i in live) for i in ids
                    if i in live or i in self._jobs or i in self._ladder.since}
        return squeue_states(ids)

    def _local_state(self, task_id: str, live: bool) -> QueueState:
        """A local task's state in Slurm's words: RUNNING while a process of its group lives
        (the worker may outlive submitit's controller); then CANCELLED with what it took if
        this queue cancelled it, else as submitit says (COMPLETED, or CANCELLED: the
        controller was ended by a signal)."""
        job = self._jobs.get(task_id)
        state = job.state if job is not None else ""  # job.state reaps an ended controller
        if live:
            return QueueState("RUNNING")
        if task_id in self._ladder.since:
            return QueueState("CANCELLED", reason=self._ladder.reason(task_id))
        return QueueState({"FINISHED": "COMPLETED", "INTERRUPTED": "CANCELLED"}.get(state, state))

    def cancel(self, ids: list[str]) -> None:
        if self.kind == "local":
            for task_id in live_groups(self.folder, set(ids)):
                self._ladder.send(task_id)
            return
        arrays = sorted({i.split("_")[0] for i in ids if i} - self._scancelled)
        if arrays:
            self._scancel(arrays)

    def _scancel(self, arrays: list[str]) -> None:
        """``scancel`` the arrays; those it took are not sent again (Slurm SIGKILLs a task
        that outlives its SIGTERM by ``KillWait``), a failed call is made again at the next
        cancel (the next poll): slurmctld busy or down loses no cancel."""
        try:
            proc = subprocess.run(["scancel", *arrays], check=False, capture_output=True,
                                  timeout=SQUEUE_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired):
            return
        if proc.returncode == 0:
            self._scancelled.update(arrays)


def squeue_states(ids: list[str]) -> dict[str, QueueState]:
    """States of array tasks (``<array job>_<index>``) from one ``squeue`` call.

    Raises:
        SlurmMissing: squeue is missing or fails (controller down).
    """
    arrays = sorted({i.split("_")[0] for i in ids if i})  # "": an attempt read from its folder
    if not arrays:
        return {}
    return parse_squeue(_squeue("--array", "--jobs=" + ",".join(arrays), "--format=%i|%T|%N|%r"))


def squeue_array_named(name: str) -> str | None:
    """The array job id (``%F``) of the job named ``name`` that squeue still lists (ended jobs
    stay listed for Slurm's ``MinJobAge``); None when it lists none.

    Raises:
        SlurmMissing: squeue is missing or fails.
    """
    found = _squeue("--name=" + name, "--format=%F").split()
    return found[0] if found else None


def _squeue(*args: str) -> str:
    """``squeue --noheader --states=all`` with ``args``; its output.

    Raises:
        SlurmMissing: squeue is missing, fails or does not answer in time.
    """
    try:
        proc = subprocess.run(["squeue", "--noheader", "--states=all", *args],
                              capture_output=True, text=True, timeout=SQUEUE_TIMEOUT_S,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SlurmMissing(f"squeue did not answer: {exc}") from exc
    if proc.returncode != 0 and "Invalid job id" not in proc.stderr:
        raise SlurmMissing(f"squeue failed: {proc.stderr.strip()[:300]}")
    return proc.stdout


def parse_squeue(text: str) -> dict[str, QueueState]:
    """``%i|%T|%N|%r`` lines -> id -> state. A pending array still in one record
    (``123_[4-9%2]``) is expanded to each of its indices."""
    out: dict[str, QueueState] = {}
    for line in text.splitlines():
        parts = line.strip().split("|")
        if len(parts) < 4:
            continue
        job_id, state, node, reason = parts[:4]
        node = "" if node in ("", "(null)") else node
        for one in _expand(job_id):
            out[one] = QueueState(state, node, reason if state == "PENDING" else "")
    return out


def _expand(job_id: str) -> list[str]:
    """``123_[0-2,5%4]`` -> ``123_0 123_1 123_2 123_5``; a plain id unchanged."""
    if "_[" not in job_id:
        return [job_id]
    base, ranges = job_id.split("_[", 1)
    ranges = ranges.rstrip("]").split("%")[0]
    out = []
    for part in ranges.split(","):
        low, _, high = part.partition("-")
        out += [f"{base}_{i}" for i in range(int(low), int(high or low) + 1)]
    return out
