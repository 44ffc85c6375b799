"""What the sidebar needs from the services, in one place: the job and bundle types it draws,
and where a spec is queued (this host's lanes or a Slurm sweep).

The sidebar imports this module, never ``app.services`` (tests/unit/test_boundaries.py), so the
Streamlit widgets and the executors meet here only.
"""

from __future__ import annotations

from profiling_worker.bundle.schema import backends as B
from profiling_worker.bundle.schema.owner import owner_of, owner_text
from profiling_worker.bundle.schema.spec import JobSpec
from profiling_worker.bundle.schema.spec_errors import FieldError, SpecInvalid

# Re-exported (the "as" form says so to mypy): the sidebar's type names.
from app.services.executor import Executor as Executor
from app.services.job_model import Job as Job, TaskView as TaskView
from app.services.job_recovery import PARTIAL_DIR as PARTIAL_DIR
from app.services.repeat_guard import (SUBMITTING as SUBMITTING, recent_twin as _recent_twin,
                                       twin_text as _twin_text)
from app.services import call_time, result_store
from app.services.result_store import (SOURCE_BUNDLED as SOURCE_BUNDLED, BundleInfo as BundleInfo,
                                       UNKNOWN_BACKEND as UNKNOWN_BACKEND)
from app.services.slurm_executor import (READ_ONLY_STAGE as READ_ONLY_STAGE, SCAN_S as SCAN_S,
                                         slurm_available as slurm_missing)
from app.services.sweep_plan import SweepOptions as SweepOptions, sweep_options as sweep_options
from app.services.sweep_queue import SlurmMissing
from app import settings
from app.ui import cached

__all__ = ["BundleInfo", "Executor", "Job", "READ_ONLY_STAGE", "SCAN_S", "SOURCE_BUNDLED",
           "UNKNOWN_BACKEND", "SweepOptions", "slurm_missing", "SUBMITTING", "recent_twin",
           "store_jobs", "store_owner", "submit", "sweep_options", "twin_text", "call_check",
           "ask_before"]


def submit(spec: JobSpec, options: SweepOptions | None, gpu_types: list[str]) -> list[str]:
    """Queue ``spec`` on this host's lanes (``options`` None) or as one sweep per GPU type in
    ``gpu_types`` (all GPUs when empty); returns the new job ids.

    Raises:
        SpecInvalid: GPU types asked for a cpu job, or Slurm's commands missing (named
            ``slurm.gpu_types`` / ``slurm`` with the fix).
        OSError: the job folder cannot be written.
    """
    if options is None:
        return [cached.job_manager().submit(spec)]
    if gpu_types and not B.on_gpu(spec.backend):
        raise SpecInvalid([FieldError("slurm.gpu_types", "GPU types given for a cpu job",
                                      "clear GPU types or choose a GPU backend")])
    try:
        return cached.slurm_executor().submit_each_type(spec, options, gpu_types)
    except SlurmMissing as exc:
        raise SpecInvalid([FieldError("slurm", str(exc), "choose Run on: this host, or run "
                                      "the dashboard where Slurm's commands work")]) from exc


def recent_twin(spec: JobSpec) -> str | None:
    """The job of the result store with ``spec``'s hash queued in the last
    :data:`~app.services.repeat_guard.REPEAT_WINDOW_S` seconds (by any door), else None."""
    return _recent_twin(settings.results_dir(), spec)


def call_check(spec: JobSpec) -> tuple[str | None, str | None]:
    """:func:`app.services.call_time.call_check` of ``spec`` against this server's result store
    and bundled jobs (:func:`_witnesses`): (the question about its longest call, the no-rate
    note)."""
    where = _witnesses()
    return call_time.call_check(spec, where.results_dir, where.bundled_dir, where)


def _witnesses() -> call_time.Witnesses:
    """Where a Run click looks for rates: this server's folders as the page last listed them
    (:func:`app.ui.cached.last_listing`), each job's rates read once per manifest."""
    return call_time.Witnesses(settings.results_dir(), settings.bundled_dir(),
                               cached.last_listing(), cached.job_rates)


def ask_before(spec: JobSpec, size_ask: str | None) -> call_time.Ask:
    """:func:`app.services.call_time.ask_before` of ``spec`` and its size question
    ``size_ask`` against this server's result store and bundled jobs (:func:`_witnesses`)."""
    where = _witnesses()
    return call_time.ask_before(spec, size_ask, where.results_dir, where.bundled_dir, where)


def twin_text(job_id: str) -> str:
    """The question about queuing a twin of ``job_id`` of the result store: when it was
    submitted, its status now (:func:`~app.services.repeat_guard.twin_text`)."""
    return _twin_text(settings.results_dir(), job_id)


def store_jobs(known: set[str]) -> list[BundleInfo]:
    """The jobs of this server's result store (its results folder; not the bundled examples)
    whose ids ``known`` lacks, newest first (by ``created_at``, then id): those that ended
    before this server started, or that another process queued and the executors' scan has
    not found yet. From the store's cached listing
    (:func:`~app.services.result_store.scan_root`: a manifest is read again only when it
    changed), so a look costs a ``stat`` per folder, not a manifest read."""
    bundles, _ = result_store.scan_root(settings.results_dir(), result_store.SOURCE_LOCAL)
    fresh = [b for b in bundles if b.job_id not in known]
    return sorted(fresh, key=lambda b: (b.created_at, b.job_id), reverse=True)


def store_owner(info: BundleInfo) -> str:
    """Who runs a queued or running job of the store, from its manifest (``server``, else
    ``worker``: "worker CLI pid 12 on host h"); "" when the manifest names no one."""
    return owner_text(info.manifest) if owner_of(info.manifest) else ""
