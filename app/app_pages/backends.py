"""CUPTI vs Nsight Compute: the same job on both backends, durations, ratio, wall time; a CUDA
events job of the same configs beside them."""

import streamlit as st

from profiling_worker.bundle.schema import backends as B, columns as C
from profiling_worker.bundle.schema import interval_words as W
from profiling_worker.bundle.schema.manifest import JobStatus

from app.core.figures import common as figures_common
from app.core.figures.backends import build_backends_figure
from app.core.metrics import MissingData
from app.core.markdown import code, esc
from app.core.views.backends import (EVENTS_ATTRIBUTION, EVENTS_WHY, WHY, backends_frame,
                                     context_mismatch, cupti_choices, default_pair,
                                     events_frame,
                                     kernel_counts_differ, recorded_apart,
                                     tool_version_difference, wall_frame)
from app.core.views.compare import JobSummary, gate_refusals, refusal_text
from app.ui import analysis, cached, job_status, panels, state
from app.core import frame_columns as F
from app.core.table_text import header

PAGE = "backends"  # widget keys of this page: state.key(PAGE, field)

st.header("CUPTI vs Nsight Compute")
analysis.how_to_read("\n\n".join(WHY))
bundles, _problems = cached.list_bundles()
ncu_ids = [b.job_id for b in bundles if b.backend == B.NCU and b.status == JobStatus.DONE]
cupti_ids = [b.job_id for b in bundles if b.backend == B.CUPTI and b.status == JobStatus.DONE]
if not ncu_ids or not cupti_ids:
    st.info("This needs one job on each backend (ncu and cupti) of the same kernels and sizes, "
            "e.g. the bundled h200-ncu-j1-fp16 and h200-cupti-j1-fp16.")
    panels.stop_page()


#: The page's pickers: they follow the sidebar's job, but for the user's picks for that job.
PICKERS = (state.key(PAGE, "ncu"), state.key(PAGE, "cupti"))


def _follow_ncu() -> None:
    """A new ncu job brings its own best CUPTI match."""
    st.session_state.pop(PICKERS[1], None)
    state.remember_picks(PAGE, PICKERS)


by_id = {b.job_id: b for b in bundles}


def _status_words(job_id: str | None) -> str:
    """``a job of the cpu backend``, ``a job of the cupti backend that is running``: what the
    selected job is, in words."""
    info = by_id.get(job_id or "")
    if info is None:
        return "not a job of this dashboard's results"
    status = job_status.state_of(info.job_id, info.status)  # the job panel's (issue 37)
    done = "" if status == JobStatus.DONE else f" that is {status.value}"
    return f"a job of the {info.backend or 'unknown'} backend{done}"


summaries = [JobSummary.of(i, by_id[i].created_at, by_id[i].spec) for i in [*ncu_ids, *cupti_ids]]
manifests = {i: by_id[i].manifest for i in [*ncu_ids, *cupti_ids]}
# the selected job's pair where it is in one (else the J1 pair)
default_ncu, default_cupti = default_pair(state.selected_job_id(), ncu_ids, cupti_ids, summaries,
                                          manifests)
cols = st.columns(2)
ncu_id = cols[0].selectbox("Nsight Compute job",
                           state.job_picker(PAGE, PICKERS[0], ncu_ids, default_ncu),
                           key=PICKERS[0], on_change=_follow_ncu)
cupti_ids = cupti_choices(ncu_id, [s for s in summaries if s.job_id in [ncu_id, *cupti_ids]],
                          manifests)
cupti_id = cols[1].selectbox("CUPTI job",
                             state.job_picker(PAGE, PICKERS[1], cupti_ids,
                                              default_cupti if ncu_id == default_ncu else None),
                             key=PICKERS[1], on_change=state.remember_picks, args=(PAGE, PICKERS),
                             help="The jobs of the same kernels and sizes measured like the ncu "
                                  "job (same cache and clock control, GPU, driver) first")
selected = by_id.get(state.selected_job_id() or "")
if selected is None or selected.backend != B.EVENTS:  # an events job is offered further down
    panels.selected_job_not_shown(
        (ncu_id, cupti_id), "pick it above to use it"
        if state.selected_job_id() in [*ncu_ids, *cupti_ids] else "this page pairs a finished "
        "Nsight Compute job with a finished CUPTI job of the same kernels and sizes, and it is "
        + _status_words(state.selected_job_id()))
ncu, cupti = cached.bundle_for(ncu_id), cached.bundle_for(cupti_id)
if ncu is None or cupti is None:  # as the compare page: not a crash further down
    st.error("One of the jobs could not be read.")
    panels.stop_page()
for job in (ncu, cupti):
    panels.data_notes(job, name_job=True)
gate_refused = gate_refusals(cupti, ncu)  # the verdicts below are the gate's, CUPTI as baseline
if gate_refused:  # as Compare: no verdict on a pair CI's gate refuses
    st.error(refusal_text(gate_refused, {"baseline": cupti_id, "candidate": ncu_id}, "this page",
                          code, esc), icon=":material/block:")
    panels.stop_page()
mismatch = context_mismatch(ncu.manifest, cupti.manifest)
versions = tool_version_difference(ncu.manifest, cupti.manifest)
if versions:
    st.caption(f"{esc(versions)} (ncu vs CUPTI): by design where Nsight Compute is older than "
               "2026.2.1, whose ncu backend needs nsight-python 0.9.6 (launch mode) while CUPTI "
               "needs 1.1.")
if mismatch:
    st.warning("These two jobs were measured under different conditions besides the backend "
               "(ncu vs CUPTI: " + "; ".join(esc(m) for m in mismatch) + "). Each can change "
               "durations on its own (a warm L2 alone can halve a short kernel's time), so the "
               "ratios below are not the backend's alone. The CUPTI jobs recorded most like "
               "the ncu job are offered first.", icon=":material/warning:")

def _apart_warning(what: str, first: str, second: str, why: str | None) -> None:
    """Say that a pair of jobs was recorded in different sittings, and what that costs."""
    if why:
        st.warning(f"The {what} were recorded apart ({esc(why)}: `{esc(first)}` first): the "
                   "GPU's clocks and temperature and the host's load change between sittings, "
                   "so the differences below hold that change too, not only the backends'. "
                   "Record them in one call for a like-for-like pair.",
                   icon=":material/history:")


_apart_warning("ncu and CUPTI jobs", ncu_id, cupti_id,
               recorded_apart(ncu.manifest, cupti.manifest))
try:
    frame = backends_frame(ncu, cupti)
except MissingData as exc:
    analysis.missing(exc)
differ = kernel_counts_differ(ncu, cupti)
if len(differ):
    st.warning("The two backends saw different kernels in these regions, so their times do not "
               "measure the same work (for example kernels launched from another thread, which "
               "an NVTX range of the calling thread misses): " + ", ".join(
                   f"{a} {c} (ncu {n}, CUPTI {k} per run)" for a, c, n, k in zip(
                       differ[C.ANNOTATION], differ[F.CONFIG_LABEL], differ[F.NCU_KERNELS_PER_RUN],
                       differ[F.CUPTI_KERNELS_PER_RUN])))
    panels.table(differ, key=state.key(PAGE, "kernel-counts"))
fig = cached.figure(build_backends_figure, frame)
analysis.figure_panel(fig, frame, key=PAGE, filename=f"backends-{ncu_id}-vs-{cupti_id}.csv",
                      note=figures_common.open_end_note(fig) or None)  # unbounded CI95s, named
st.caption("Verdict: the regression gate's rule (`python -m profiling_worker compare`, CUPTI as "
           "baseline, ±3 %) with the backend, the tools only one of them uses and the metric "
           "set set aside: *ncu slower* / *ncu faster* when the whole 95 % interval of the "
           "difference is beyond ±3 %, *same* inside it, *ambiguous* across it (Reason: the "
           "runs a side that would decide it), *not comparable* for any other difference. "
           f"{header(F.RATIO_CI95_LOWER)}/upper are the same interval as the gate's "
           "(Fieller's, of "
           "m_ncu / m_cupti; the gate's difference d = ratio − 1). " + W.line(W.RATIO))
st.subheader("CUDA events beside them")
st.markdown(EVENTS_WHY)
events_ids = [b.job_id for b in bundles if b.backend == B.EVENTS and b.status == JobStatus.DONE]
events = None
if not events_ids:
    st.info("No events job yet: run the same kernels and sizes on the events backend (e.g. "
            "h200-events-j1-fp16 beside the J1 jobs) to compare the three backends here.")
else:
    events_ids = cupti_choices(ncu_id, [JobSummary.of(i, by_id[i].created_at, by_id[i].spec)
                                        for i in [ncu_id, *events_ids]],
                               {i: by_id[i].manifest for i in [ncu_id, *events_ids]})
    events = cached.bundle_for(st.selectbox(
        "CUDA events job", events_ids, key=state.key(PAGE, "events"),
        help="The jobs of the same kernels and sizes measured like the ncu job first"))
    try:
        if events is not None:
            _apart_warning("CUPTI and events jobs", cupti_id, events.job_id,
                           recorded_apart(cupti.manifest, events.manifest))
            panels.table_with_csv(events_frame(frame, cupti, events), state.key(PAGE, "three"),
                                  f"backends-{ncu_id}-{cupti_id}-{events.job_id}.csv")
            st.caption(EVENTS_ATTRIBUTION)
    except MissingData as exc:
        analysis.missing(exc, stop=False)
st.subheader("Wall time of each job")
walls = wall_frame(*[job for job in (ncu, cupti, events) if job is not None])
panels.table_with_csv(walls, state.key(PAGE, "wall"), f"backends-wall-{ncu_id}-{cupti_id}.csv")
if walls[F.WALL_S].notna().all() and float(walls[F.WALL_S].iloc[1] or 0) > 0:
    ratio = walls[F.WALL_S].iloc[0] / walls[F.WALL_S].iloc[1]
    st.caption(f"The Nsight Compute job took {ratio:.1f}× "
               "the CUPTI job's wall time (replay passes, cache flushes, serialisation).")
