"""The state a page names for a job, kept in step with the sidebar job panel.

For a job this server runs, pages name the job manager's state, which the job panel shows (the
manifest lags it: the manager sets a job running before it rewrites the manifest, and the cached
bundle is keyed by the manifest's stamp). The job panel is a fragment that reruns every second;
the page is not rerun with it, so a page records what it named (:func:`shown_status`) and the
panel reruns the whole app when a job's state moved on since (:func:`page_behind`): the page
never keeps saying "queued" while the panel says "running".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from profiling_worker.bundle.schema import partial
from profiling_worker.bundle.schema.manifest import JobStatus, ManifestError, read_manifest

from profiling_worker.bundle.loader import Bundle
from profiling_worker.bundle.schema.bundle_spec import PartialSpec
from profiling_worker.bundle.schema.spec import JobSpec
from app.core import preflight
from app.services.job_model import Job
from app.ui import cached, state


def shown_status(bundle: Bundle) -> JobStatus:
    """The job manager's state of ``bundle``'s job when this server has it (:func:`jobs_here`),
    else the manifest's; remembered, with whether a running job's result is ready (its runs
    and aggregated tables written, issue 40), for :func:`page_behind` until the next full run
    of the app."""
    job = jobs_here().get(bundle.job_id)
    status = job.status if job is not None else bundle.status
    ready = job.result_ready if job is not None else bundle.result_ready
    _remember(bundle.job_id, status, ready)
    return status


def state_of(job_id: str, recorded: JobStatus) -> JobStatus:
    """The state a page names for the job ``job_id`` of a listing or index row (``recorded``:
    its manifest's status): the job manager's when this server holds the job, as
    :func:`shown_status` says it for a loaded bundle, and remembered for :func:`page_behind`
    alike (:func:`named`); else ``recorded``."""
    job = jobs_here().get(job_id)
    named(job)
    return job.status if job is not None else recorded


def as_named(bundle: Bundle) -> Bundle:
    """``bundle`` with its job's state in the job manager as its status, where this server
    holds the job in another state than its manifest says (the manifest lags the manager),
    else ``bundle`` itself: for a document built from it, the job's report, whose caption,
    cpu timer line and "no values yet" notes then say the state the pages say. Reads the
    manager now and records nothing: a download is built outside any script run."""
    job = cached.executors().get(bundle.job_id)
    if job is None or job.status == bundle.status:
        return bundle
    return dataclasses.replace(bundle, manifest={**bundle.manifest, "status": job.status.value})


def _remember(job_id: str, status: JobStatus, ready: str | None) -> None:
    """Record that this run named ``job_id`` in ``status`` (``ready``: its result ready, when),
    for :func:`page_behind`."""
    shown = st.session_state.setdefault(state.PAGE_JOB_STATUS, {})
    shown[job_id] = page_state(status, ready)


def jobs_here() -> dict[str, Job]:
    """This server's executors' jobs by id, oldest first: one snapshot per full run of the app,
    which the page, the Job box and the job panel's run within it all read, so that none of
    them says a state the others do not (the page runs first, the panel last, 0.2-0.3 s later:
    a job that moved on between them was said in two states, and the page's, overwritten in
    :func:`page_behind`'s record by the later one, was never drawn again). A run of a fragment
    alone (the panel's tick, Deep dive's wait) reads a fresh one: the panel compares it with
    what the full run named and reruns the app when a job moved on."""
    if _fragment_run():
        return _snapshot()
    held: dict[str, Job] | None = st.session_state.get(state.RUN_JOBS)
    if held is None:
        held = st.session_state[state.RUN_JOBS] = _snapshot()
    return held


def _snapshot() -> dict[str, Job]:
    """This server's executors' jobs by id, as they are now (copies)."""
    return {job.job_id: job for job in cached.executors().snapshot()}


def _fragment_run() -> bool:
    """Whether this script run runs fragments alone (a fragment's own rerun), not the app."""
    ctx = get_script_run_ctx()
    return bool(ctx is not None and ctx.fragment_ids_this_run)


def status_words(recorded: JobStatus, manifest: Mapping[str, Any], job: Job | None) -> str:
    """A job's status as every list and label says it (``done``; ``cancelled, partial: 3 of
    6 configs``): of ``job``, its state in this server's executors (:func:`jobs_here`), when
    they hold it (:func:`job_words`): the manager sets a state before it writes the manifest,
    and the listing that holds ``manifest`` is cached by its stamp, so the manager is right
    first; else of the manifest, its ``recorded`` status
    (:func:`profiling_worker.bundle.schema.partial.status_text`)."""
    return partial.status_text(recorded, manifest) if job is None else job_words(job)


def named(job: Job | None) -> None:
    """Record that this run names ``job`` (None: a job this server does not hold) in its
    state outside the page (the Job box's label), so that the job panel reruns the app when
    it moves on (:func:`page_behind`), on pages that draw no caption of the job too."""
    if job is not None:
        _remember(job.job_id, job.status, job.result_ready)


def kind_after(spec: JobSpec | PartialSpec | None) -> str:
    """What follows a job's status words wherever they are said (the job panel's card and
    store list, the Job box's label and entries, History): `` · Pre-flight pass`` for a
    Pre-flight pass (:func:`app.core.preflight.is_pass` of its spec: the bundle's manifest's,
    or the one the job manager recorded there, so it reads the same after a restart, where
    it read plain "done", issue 37), else ""."""
    return f"{state.LABEL_SEP}{preflight.PASS_WORDS}" if preflight.is_pass(spec) else ""


def job_words(job: Job) -> str:
    """The status of a job this server's executors hold: ``cancelled, partial: 3 of 6
    configs`` for a finished job that kept part of its configs
    (:func:`profiling_worker.bundle.schema.partial.status_text`, from its manifest, read now:
    the manager writes it with the final state), else the state alone (a manifest that
    cannot be read included)."""
    if not job.status.finished or job.status == JobStatus.DONE:
        return str(job.status)
    try:
        return partial.status_text(job.status, read_manifest(job.path))
    except ManifestError:
        return str(job.status)


def page_state(status: JobStatus, result_ready: str | None) -> str:
    """What a page drew a job in: its status, and for a running job whether its result was
    ready (``result_ready``: when, None: not yet), so that the page is drawn again when it
    becomes ready (the Size sweep can draw it) as when the status moves on."""
    return f"{status.value}, result ready" if result_ready and not status.finished \
        else status.value


def forget_run_jobs() -> None:
    """Read this server's jobs afresh at the next :func:`jobs_here` of this run: a job was
    queued inline in it (a button's branch, not a callback that runs before the page)."""
    st.session_state.pop(state.RUN_JOBS, None)


def forget_shown() -> None:
    """Start of a full run of the app: the page about to be drawn has named nothing yet, and
    this run reads this server's jobs afresh (:func:`jobs_here`)."""
    st.session_state.pop(state.PAGE_JOB_STATUS, None)
    forget_run_jobs()


def page_behind(jobs: Iterable[Job]) -> bool:
    """True when one of ``jobs`` (the job panel's snapshot) is in another state than the page
    named for it this run."""
    shown = st.session_state.get(state.PAGE_JOB_STATUS) or {}
    return any(job.job_id in shown and shown[job.job_id] != page_state(job.status,
                                                                         job.result_ready)
               for job in jobs)
