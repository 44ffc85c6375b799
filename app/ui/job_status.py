"""The state a page names for a job, kept in step with the sidebar job panel.

For a job this server runs, pages name the job manager's state, which the job panel shows (the
manifest lags it: the manager sets a job running before it rewrites the manifest, and the cached
bundle is keyed by the manifest's stamp). The job panel is a fragment that reruns every second;
the page is not rerun with it, so a page records what it named (:func:`shown_status`) and the
panel reruns the whole app when a job's state moved on since (:func:`page_behind`): the page
never keeps saying "queued" while the panel says "running".
"""

from __future__ import annotations

from collections.abc import Iterable

import streamlit as st

from profiling_worker.bundle.schema.manifest import JobStatus

from profiling_worker.bundle.loader import Bundle
from app.services.job_model import Job
from app.ui import cached, state


def shown_status(bundle: Bundle) -> JobStatus:
    """The job manager's state of ``bundle``'s job when this server has it, else the
    manifest's; remembered, with whether a running job's result is ready (its runs and
    aggregated tables written, issue 40), for :func:`page_behind` until the next full run of
    the app."""
    job = cached.executors().get(bundle.job_id)
    status = job.status if job is not None else bundle.status
    ready = job.result_ready if job is not None else bundle.result_ready
    shown = st.session_state.setdefault(state.PAGE_JOB_STATUS, {})
    shown[bundle.job_id] = page_state(status, ready)
    return status


def page_state(status: JobStatus, result_ready: str | None) -> str:
    """What a page drew a job in: its status, and for a running job whether its result was
    ready (``result_ready``: when, None: not yet), so that the page is drawn again when it
    becomes ready (the Size sweep can draw it) as when the status moves on."""
    return f"{status.value}, result ready" if result_ready and not status.finished \
        else status.value


def forget_shown() -> None:
    """Start of a full run of the app: the page about to be drawn has named nothing yet."""
    st.session_state.pop(state.PAGE_JOB_STATUS, None)


def page_behind(jobs: Iterable[Job]) -> bool:
    """True when one of ``jobs`` (the job panel's snapshot) is in another state than the page
    named for it this run."""
    shown = st.session_state.get(state.PAGE_JOB_STATUS) or {}
    return any(job.job_id in shown and shown[job.job_id] != page_state(job.status,
                                                                         job.result_ready)
               for job in jobs)
