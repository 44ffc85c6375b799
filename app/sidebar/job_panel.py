"""The sidebar job panel: queue, live progress, cancel, errors. Reads the JobManager only.

The panel is a fragment that reruns every second while a job is queued or running and stops
polling when none is; when the last job finishes it reruns the whole app once, so the job
selector and the pages show the new result.
"""

from __future__ import annotations

import streamlit as st

from app.services.job_manager import JobManager
from app.services.job_model import Job
from app.ui import panels, state

SHOW_LAST = 5
POLL_S = 1.0
STATUS_ICON = {"queued": ":material/schedule:", "running": ":material/autorenew:",
               "done": ":material/check_circle:", "failed": ":material/error:",
               "cancelled": ":material/cancel:", "interrupted": ":material/warning:"}


def render_job_panel(manager: JobManager) -> None:
    """Draw the panel; it polls the manager once a second while any job is active."""

    @st.fragment(run_every=POLL_S if manager.active() else None)
    def _panel() -> None:
        jobs = manager.snapshot()
        active = any(j.active for j in jobs)
        if not jobs:
            st.caption("No jobs submitted from this server yet.")
        for job in reversed(jobs[-SHOW_LAST:]):
            _job(manager, job, queue_position(jobs, job))
        if st.session_state.get(state.PANEL_WAS_ACTIVE) and not active:
            st.session_state[state.PANEL_WAS_ACTIVE] = False
            st.rerun()  # the last job just finished: refresh the whole app once
        st.session_state[state.PANEL_WAS_ACTIVE] = active

    _panel()


def queue_position(jobs: list[Job], job: Job) -> int:
    """1-based place of a queued job among the queued jobs of its lane (0 if not queued)."""
    if job.status != "queued":
        return 0
    queued = [j.job_id for j in jobs if j.lane == job.lane and j.status == "queued"]
    return queued.index(job.job_id) + 1


def _job(manager: JobManager, job: Job, position: int) -> None:
    with st.container(border=True, key=f"panel-job-{job.job_id}"):
        icon = STATUS_ICON.get(job.status, "")
        kernels = ",".join(job.spec.get("kernels", []))
        st.markdown(f"{icon} **{job.status}** · {kernels} · {job.spec.get('backend')}  \n"
                    f"`{job.job_id}`")
        if job.status == "queued":
            st.caption(f"Waiting for {job.lane}: place {position} in its queue.")
        if job.status == "running":
            text = f"{job.stage or 'starting'} · {job.done}/{job.total}" if job.total else "starting"
            st.progress(job.fraction, text=text)
        if job.active:
            st.button("Cancel", key=f"panel-cancel-{job.job_id}", on_click=manager.cancel,
                      args=(job.job_id,), icon=":material/stop:")
        for warning in job.warnings[-3:]:
            st.caption(f"⚠ {warning}")
        if job.status in ("failed", "interrupted") and job.error:
            panels.render_error(str(job.error.get("message", "")), job.error.get("hint"),
                                job.error.get("log_tail"), kind=job.error.get("kind"))
