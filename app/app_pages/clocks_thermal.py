"""Clocks and thermal: NVML trace of the job, the SM clock each kernel ran at, per-run collectors
(sampled before the run) beside the kernel time, and a thermal_mode comparison of two jobs."""

import streamlit as st

from profiling_worker.bundle.schema import backends as B, columns as C
from profiling_worker.bundle.schema.manifest import JobStatus
from profiling_worker.bundle.schema.spec import SPEC_DEFAULTS
from profiling_worker.bundle.schema.throttle_reasons import NVML_DOCS

from app.core import derived
from app.core.figures.clocks import (build_correlation_figure, build_drift_figure,
                                     build_kernel_clock_figure, build_thermal_figure,
                                     build_trace_figure)
from app.core.figures.timeline import build_timeline_figure
from app.core.metrics import SM_CLOCK_METRICS, MissingData
from app.core.views.clocks import (ClocksOptions, clock_sources, collector_runs_frame,
                                   correlation_frame, kernel_clock_frame, max_sm_clock_mhz,
                                   thermal_compare_frame, thermal_mean_difference_pct,
                                   throttle_frame, trace_frame, user_collectors_frame)
from app.core.views.compare import JobSummary
from app.core.views.thermal_pair import pair_notes, thermal_pair
from app.core.views.timeline import PERFETTO_UI, TRACE_SUFFIX, timeline_view, trace_bytes
from app.ui import analysis, cached, notes, panels, state
from app.core.markdown import esc
from app.core import frame_columns as F

PAGE = "clocks"  # widget keys of this page: state.key(PAGE, field)

st.header("Clocks and thermal")
bundle = analysis.selected_bundle()
notes.show(bundle, "clocks", [bundle.duration_metric, *SM_CLOCK_METRICS])
analysis.how_to_read(
    "**NVML trace**: the worker samples the GPU (SM and memory clock, temperature, power, "
    "throttle reasons) every few tens of ms during the whole job: it shows the clocks over the "
    "job and the idle gaps (345 MHz on an idle H200), but a kernel shorter than the sampling "
    "period mostly falls between two samples, so it is not the clock each kernel ran at. "
    "**Info collectors** (nsight-python >= 1.1) are sampled once **before each run**, not "
    "during it: the first run of an H200 job read the idle clock although its kernel ran near "
    "1980 MHz. Their correlation with the kernel time says whether a slow run followed a hot or "
    "slow-clocked GPU. **SM clock the kernels ran at** is Nsight Compute's "
    "`gpc__cycles_elapsed.avg.per_second`, measured on each kernel.")

interval_ms = float(bundle.job_spec.nvml_interval_ms if bundle.job_spec
                    else SPEC_DEFAULTS["nvml_interval_ms"])
# folded: as a section its seven lines stood over the trace, below the fold at 1000x700 (issue 37)
with st.expander("What each clock source measures", icon=":material/help:"):
    st.markdown("\n".join(
        f"- **{esc(r.Source)}** measures {esc(r.Measures)}, {esc(r.When)}. "
        f"*Misses:* {esc(r.Misses)}."
        for r in clock_sources(interval_ms).itertuples()))

st.subheader("NVML trace of the whole job")
try:
    trace = trace_frame(bundle)
    analysis.figure_panel(build_trace_figure(trace, max_sm_clock_mhz(bundle)), trace,
                          key=state.key(PAGE, "trace"), filename=f"{bundle.job_id}-nvml-trace.csv")
    reasons = throttle_frame(trace)
    st.markdown(f"**Throttle reasons set during the job** (NVML clocks-event reason bits, "
                f"[nvmlClocksEventReasons]({NVML_DOCS})); *GPU idle* between kernels is normal:")
    if reasons.empty:
        st.caption("None: the clocks were never held back.")
    else:
        panels.table(reasons, key=state.key(PAGE, "throttle"))
except MissingData as exc:
    analysis.missing(exc, stop=False)

st.subheader("Timeline of the job")
try:
    timeline = cached.view(timeline_view, bundle)
    figure = build_timeline_figure(timeline.launches, timeline.counters,
                                   timeline.measured_starts, max_sm_clock_mhz(bundle),
                                   timeline.host_timer)
    analysis.figure_panel(figure, timeline.launches, key=state.key(PAGE, "timeline"),
                          filename=f"{bundle.job_id}-timeline-launches.csv")
    st.caption(timeline.note)
    st.download_button("Download the trace for the Perfetto UI (ui.perfetto.dev: Open trace file)",
                       data=lambda: trace_bytes(bundle), key=state.key(PAGE, "timeline-trace"),
                       file_name=f"{bundle.job_id}{TRACE_SUFFIX}", mime="application/json",
                       on_click="ignore", icon=":material/timeline:",
                       help=f"Trace Event Format JSON: drop it on {PERFETTO_UI} or "
                            "chrome://tracing; also on the Files page.")
except MissingData as exc:
    analysis.missing(exc, stop=False)

st.subheader("SM clock each kernel ran at")
try:
    clocks = kernel_clock_frame(bundle)
    analysis.figure_panel(build_kernel_clock_figure(clocks, bundle.host_timer), clocks,
                          key=state.key(PAGE, "kernel"),
                          filename=f"{bundle.job_id}-kernel-clocks.csv")
except MissingData as exc:
    analysis.missing(exc, stop=False)

st.subheader("Per-run collectors (sampled before the run) and kernel time")
user_collectors = user_collectors_frame(bundle)
if not user_collectors.empty:
    st.markdown("**Your info collectors** (user files; ONCE values here, RUN values below):")
    st.dataframe(user_collectors, hide_index=True, key=state.key(PAGE, "user-collectors"))
cols = st.columns(2)
# the control is drawn only where there is a chart for it to act on (not for a queued or
# cancelled job): its value of this run is in the session state before it is drawn
time_unit = st.session_state.get(state.key(PAGE, "time-unit")) or "µs"
labels = {None: "every config"}
try:
    every = collector_runs_frame(bundle, ClocksOptions(time_unit=time_unit))
    cols[0].segmented_control("Time unit", list(derived.TIME_UNITS), default="µs",
                              key=state.key(PAGE, "time-unit"))
    labels |= dict(zip(every[C.CONFIG], every[F.CONFIG_LABEL]))
    config = cols[1].selectbox("Config for the per-run chart",
                               state.keep_if_offered(state.key(PAGE, "config"), labels,
                                                     list(labels)[1] if len(labels) > 1 else None),
                               key=state.key(PAGE, "config"), format_func=lambda c: labels[c])
    runs = collector_runs_frame(bundle, ClocksOptions(time_unit=time_unit, config=config))
    analysis.figure_panel(build_drift_figure(runs), runs, key=state.key(PAGE, "drift"),
                          filename=f"{bundle.job_id}-collectors-per-run.csv")
    corr = correlation_frame(every)
    analysis.figure_panel(build_correlation_figure(corr), corr, key=state.key(PAGE, "corr"),
                          filename=f"{bundle.job_id}-collector-correlation.csv")
except MissingData as exc:
    analysis.missing(exc, stop=False)

st.subheader("thermal_mode: spread and wall time of two jobs")
bundles, _problems = cached.list_bundles()
# only jobs whose backend applies thermal_mode (the worker says it ignores it on the others, the
# form greys it out on the cpu backend): two cpu jobs "with different thermal_mode" ran alike
THERMAL_NAMES = tuple(n for n in B.NAMES if "thermal_mode" in B.get(n).options)
ids = [b.job_id for b in bundles if b.status == JobStatus.DONE and b.backend in THERMAL_NAMES]
if len(ids) < 2:
    st.info(f"This needs two finished jobs of a backend that applies thermal_mode "
            f"({B.said(THERMAL_NAMES, 'or')}), e.g. the same kernels with thermal_mode auto and "
            "off.")
    panels.stop_page()
summaries = [JobSummary.of(b.job_id, b.created_at, b.spec) for b in bundles if b.job_id in ids]
modes = {b.job_id: str(getattr(b.spec, "thermal_mode", None) or SPEC_DEFAULTS["thermal_mode"])
         for b in bundles if b.job_id in ids}
pair = thermal_pair(state.selected_job_id(), summaries, modes)
if pair is None:
    st.info("No two finished jobs measure the same kernels and configs with different "
            "thermal_mode, so there is nothing to compare: record the same job again with "
            "thermal_mode off (or auto).", icon=":material/info:")
    panels.stop_page()
PICKERS = (state.key(PAGE, "thermal-a"), state.key(PAGE, "thermal-b"))  # follow the job
picks = st.columns(2)
job_a = picks[0].selectbox("Job A", state.job_picker(PAGE, PICKERS[0], ids, pair[0]),
                           key=PICKERS[0], on_change=state.remember_picks, args=(PAGE, PICKERS))
job_b = picks[1].selectbox("Job B", state.job_picker(PAGE, PICKERS[1], ids, pair[1]),
                           key=PICKERS[1], on_change=state.remember_picks, args=(PAGE, PICKERS))
panels.selected_job_not_shown(
    (job_a, job_b), "only finished jobs of a backend that applies thermal_mode "
    f"({B.said(THERMAL_NAMES, 'or')}) are compared" if state.selected_job_id() not in ids
    else "it has no finished twin of the same kernels and configs with another thermal_mode"
    if state.selected_job_id() not in pair else "pick it as Job A or B above to use it")
by_id = {s.job_id: s for s in summaries}
for note in pair_notes(by_id[job_a], by_id[job_b], modes):
    st.warning(esc(note), icon=":material/warning:")
if job_a == job_b:
    panels.stop_page()
a, b = cached.bundle_for(job_a), cached.bundle_for(job_b)
if a is None or b is None:
    st.error("One of the jobs could not be read.")
    panels.stop_page()
try:
    thermal = thermal_compare_frame(a, b)
except MissingData as exc:
    analysis.missing(exc)
walls = thermal.drop_duplicates(F.JOB)[[F.JOB, F.THERMAL_MODE, F.WALL_S]]
# named and written as the table under the chart writes it (WallS, the table's own format):
# "Wall time (s) 4.14" stood above "WallS 4.143" (issue 37)
panels.table(walls, key=state.key(PAGE, "thermal-wall"))
notes.few_runs(thermal)
analysis.figure_panel(build_thermal_figure(thermal), thermal, key=state.key(PAGE, "thermal"),
                      filename=f"thermal-{job_a}-vs-{job_b}.csv")
diff = thermal_mean_difference_pct(thermal)
if diff is not None:
    st.caption(f"The means of the two jobs differ by at most {diff:.2f} % over the "
               "annotation × configs they share.")
st.caption("nsight-python's thermal control pauses profiling when the GPU's thermal headroom "
           "(margin to its throttle temperature) drops below thermal_wait and resumes at "
           "thermal_cont; auto adapts those thresholds, off never pauses. A cool card never "
           "reaches them, so both modes should then give the same times.")
