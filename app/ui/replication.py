"""The Files page's "Replicate this job" panel: queue the bundle's spec again (the job manager,
as the sidebar), then judge any done job of the same spec against it (TOST after the gate's
checks, :mod:`app.core.views.replication`)."""

from __future__ import annotations

import streamlit as st

from profiling_worker.bundle.gate import replication as R
from profiling_worker.bundle.schema.spec import JobSpec

from app.core import numbers, spec_form
from app.core.failure_advice import rerun_helps
from profiling_worker.bundle.loader import Bundle
from app.core.markdown import code, esc
from app.core.views.replication import replica_candidates, replication, verdict_table
from app.ui import cached, job_status, panels, state


def _rerun(bundle: Bundle, page: str) -> None:
    """The button that queues the bundle's spec again, or why it cannot."""
    spec = bundle.spec
    if not isinstance(spec, JobSpec):
        st.caption("No re-run: this job records no complete spec (an import); judge a re-run "
                   "made elsewhere against it below.")
        return
    refused = spec_form.backend_errors(spec, cached.env_report())
    if refused:
        st.caption("No re-run here: " + "; ".join(f"{e.field}: {e.message}" for e in refused))
        return
    if st.button(f"Run this job's spec again ({spec.backend}, "
                 f"{numbers.counted(len(spec.configs), 'config')} x "
                 f"{numbers.counted(spec.runs, 'run')})", key=state.key(page, "replicate"),
                 icon=":material/replay:"):
        job_id = cached.job_manager().submit(spec)
        state.add_own_job(job_id)
        job_status.forget_run_jobs()  # queued inline, after this run read the jobs
        st.success(f"Queued `{job_id}`: once done, pick it below to judge it.")


def offer(bundle: Bundle, page: str) -> None:
    """The panel: the re-run button, the replica choice, the tolerance and the verdict; none
    for a job whose error a re-run meets again (a refused spec: the page's no-values sentence
    names the fix, :func:`~app.core.failure_advice.next_step`)."""
    if not rerun_helps(bundle.error):
        return
    st.subheader("Replicate this job")
    st.caption("Run the same spec again (another day, GPU or machine) and judge the pair: "
               "reproduced when the 90 % interval of the difference lies inside ± the "
               "tolerance (two one-sided tests, TOST), not reproduced when wholly outside, "
               "not decided otherwise (with the runs that would decide); first the regression "
               "gate's checks (GPU, clocks, tools, run options) say whether the two compare. "
               "Head-less: `python -m profiling_worker replicate BUNDLE --out DIR`.")
    _rerun(bundle, page)
    listed, _problems = cached.list_bundles()
    replicas = replica_candidates(bundle, listed)
    if not replicas:
        st.caption("No other done job ran this spec yet.")
        return
    left, right = st.columns([3, 1])
    picker = state.key(page, "replica")  # follows the job, as Compare's pickers
    replica_id = left.selectbox("Replica (a done job of the same spec)",
                                state.job_picker(page, picker, replicas, None), key=picker,
                                on_change=state.remember_picks, args=(page, (picker,)))
    tolerance = right.number_input("Tolerance (± %)", min_value=0.1, max_value=100.0,
                                   value=R.DEFAULT_TOLERANCE_PCT, step=0.5,
                                   key=state.key(page, "tolerance"))
    replica = cached.bundle_for(replica_id)
    if replica is None:
        st.caption(f"{code(replica_id)} can no longer be read.")
        return
    result = replication(bundle, replica, float(tolerance))
    st.markdown(f"**{esc(result.verdict.value)}**: {code(replica.job_id)} against "
                f"{code(bundle.job_id)}, tolerance ±{float(tolerance):g} %.")
    for reason in result.context:
        st.caption(f"Not comparable: {esc(reason)}")
    panels.table(verdict_table(result), key=state.key(page, "replication-table"))
    st.caption(result.interval)  # the DiffCI90 columns' method and coverage
