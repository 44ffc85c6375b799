"""One submission per intent: has an identical spec been queued in the last few seconds?

A double click on Run (two clicks 250 ms apart) queued the same job twice, the second waiting
behind the first; on a GPU that doubles a long sweep. Every door that queues a job (the
sidebar, ``kernel-sweep``, the agent door) asks :func:`recent_twin` first and, when it names a
job, asks the person (or the caller) before queuing another. The store is the witness, not a
session: a twin queued by another server, tab or process counts too. Within one process the
check and the queuing happen under :data:`SUBMITTING`, so two clicks handled at once cannot both
pass it.

A job's folder name begins with its UTC submit second (``20261129-231500-matmul-ab12``,
:func:`app.services.job_model.new_job_id`), so only folders of the last few seconds have their
``spec.json`` read: the check costs one directory listing however large the store is.
"""

from __future__ import annotations

import calendar
import json
import threading
import time
from pathlib import Path

from profiling_worker.bundle.schema import columns
from profiling_worker.bundle.schema.manifest import JobStatus, ManifestError, read_manifest
from profiling_worker.bundle.schema.spec import JobSpec, SpecInvalid, validate_spec

#: Seconds after a submission in which an identical spec is asked about, not queued.
REPEAT_WINDOW_S = 30.0
#: Held from the twin check to the job folder's creation: the two script runs of a double
#: click ran at once on the server, each found no twin, and both queued.
SUBMITTING = threading.Lock()
_STAMP_LEN = len("20261129-231500")


def submitted_at(job_id: str) -> float | None:
    """The UTC epoch second a job id was drawn in (its ``YYYYMMDD-HHMMSS`` prefix), None for an
    id without one (an imported or bundled job)."""
    try:
        return float(calendar.timegm(time.strptime(job_id[:_STAMP_LEN], "%Y%m%d-%H%M%S")))
    except ValueError:
        return None


def recent_twin(results_dir: Path, spec: JobSpec, now: float | None = None,
                within_s: float = REPEAT_WINDOW_S) -> str | None:
    """The newest job in ``results_dir`` submitted within ``within_s`` seconds before ``now``
    (default: the clock) whose spec has ``spec``'s :meth:`~JobSpec.spec_hash` (the label is
    not part of it), else None. Folders without a readable, valid ``spec.json`` are skipped."""
    now = time.time() if now is None else now
    wanted = spec.spec_hash()
    try:
        names = sorted((p.name for p in Path(results_dir).iterdir()), reverse=True)
    except OSError:  # no store yet: nothing was queued
        return None
    for name in names:
        when = submitted_at(name)
        if when is None or now - when > within_s + 1.0:  # ids have whole seconds
            continue
        try:
            data = json.loads((Path(results_dir) / name / columns.SPEC_FILE).read_text("utf-8"))
            if validate_spec(data).spec_hash() == wanted:
                return name
        except (OSError, ValueError, SpecInvalid):
            continue
    return None


def twin_text(results_dir: Path, job_id: str, now: float | None = None) -> str:
    """What a door says before queuing a twin of ``job_id`` (a job of ``results_dir``): when
    it was submitted and its status now (its manifest's: a twin of a few seconds ago may be
    done already; not said where the manifest cannot be read), and how to queue another."""
    when = submitted_at(job_id)
    now = time.time() if now is None else now
    try:
        status: JobStatus | None = JobStatus(read_manifest(Path(results_dir) / job_id)["status"])
    except (ManifestError, OSError):
        status = None
    said = ", ".join(filter(None, ("" if when is None else f"{max(0, round(now - when))} s ago",
                                   status.value if status else "")))
    after = "run after the first and " if status is None or not status.finished else ""
    return (f"An identical job ({job_id}) was submitted{' ' + said if said else ''}. Queue "
            f"another copy? It would {after}measure the same configs again.")
