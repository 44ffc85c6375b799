"""Plain jobs of the result store that another process owns (another dashboard server, the
agent door, a worker run from a shell): found by their folders, read from their manifests and
events, never run, cancelled or rewritten from here (their owner does that; a job whose
owner is gone ends ``interrupted`` as a restart would end it,
:func:`~app.services.job_recovery.interrupt_orphaned`). Cluster sweeps (``sweep.json``) are the
sweep executor's (:mod:`app.services.slurm_executor`). No Streamlit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from profiling_worker.bundle.schema import columns
from profiling_worker.bundle.schema.manifest import (RESULT_READY_KEY, JobStatus, ManifestError,
                                                     now_iso, read_manifest)
from profiling_worker.bundle.schema.owner import is_this_process, owner_of, owner_text
from profiling_worker.bundle.schema.spec import load_spec

from app.services.job_model import Job, lane_of
from app.services.job_recovery import job_folders
from app.services.sweep_plan import SWEEP_FILE


def find(results_dir: Path, known: set[str], since: str) -> tuple[list[Job], set[str]]:
    """The jobs of ``results_dir`` to show read-only, and the folders never to read again.

    A job is shown when its manifest names an owner (``server``, else ``worker``:
    :func:`~profiling_worker.bundle.schema.owner.owner_of`) other than this process, its
    ``spec.json`` is valid, and it is queued or running, or ended at ``since`` (ISO 8601 UTC,
    :func:`~profiling_worker.bundle.schema.manifest.now_iso`) or later: a job that ended
    between two looks is listed with its final state. A folder without a manifest yet is
    looked at again; sweeps, jobs of this process, bundles without an owner (imports, older
    jobs) and jobs that ended before ``since`` (History lists them) are not.

    Args:
        known: folder names to skip (shown already, or settled by an earlier call).
    """
    shown: list[Job] = []
    settled: set[str] = set()
    for path in job_folders(results_dir):
        if path.name in known:
            continue
        try:
            manifest = read_manifest(path)
        except (ManifestError, OSError):
            continue  # being created: the next look
        if not _listed(path, manifest, since):
            settled.add(path.name)
            continue
        try:
            shown.append(job_of(path, manifest))
        except (OSError, ValueError):  # no valid spec.json: nothing of it to show
            settled.add(path.name)
    return shown, settled


def _listed(path: Path, manifest: dict[str, Any], since: str) -> bool:
    owner = owner_of(manifest)
    if not owner or is_this_process(owner) or (path / SWEEP_FILE).is_file():
        return False
    return not JobStatus(manifest["status"]).finished or str(manifest.get("finished_at")) >= since


def job_of(path: Path, manifest: dict[str, Any]) -> Job:
    """The panel's :class:`Job` of a job another process owns (``watched_by`` names it).

    Raises:
        OSError: ``spec.json`` cannot be read.
        ValueError: ``spec.json`` is not a valid spec (``SpecInvalid``).
    """
    spec = load_spec(str(path / columns.SPEC_FILE))
    job = Job(job_id=path.name, path=path, spec=spec, lane=lane_of(spec),
              submitted_at=manifest.get("created_at") or manifest.get("started_at") or now_iso(),
              watched_by=owner_text(manifest))
    take(job, manifest)
    return job


def take(job: Job, manifest: dict[str, Any]) -> None:
    """Set ``job``'s status, error and ``result_ready`` from its manifest, and once it ended
    its warnings (a running job's come from its events)."""
    job.status = JobStatus(manifest["status"])
    job.error = manifest.get("error") or job.error
    ready = manifest.get(RESULT_READY_KEY)
    job.result_ready = ready if isinstance(ready, str) else job.result_ready
    if job.status.finished:
        job.warnings = [str(w) for w in manifest.get("warnings") or []]
