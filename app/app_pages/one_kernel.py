"""One kernel: the aggregated values of one annotation x config, its kernels, clock and TFLOP/s."""

import streamlit as st

from profiling_worker.bundle.schema import columns as C, intervals, plausibility as P
from profiling_worker.bundle.schema import interval_words as W

from app.core import derived, metric_roles, numbers
from app.core.markdown import visible
from app.core.figures.one_kernel import build_one_kernel_figure, chart_title
from app.core.metrics import MissingData, available_metrics
from app.core.provenance import profiled_scope
from app.core.views.run_audit import PAGE_EVIDENCE, audit_not_read_note, pair_failed_text
from app.core.views.one_kernel import (OneKernelOptions, annotation_configs,
                                       one_kernel_frame, one_kernel_launches_frame,
                                       one_kernel_summary)
from app.ui import analysis, cached, job_status, notes, panels, state
from app.ui.controls_later import Later
from app.core.markdown import code, esc

PAGE = "one-kernel"  # widget keys of this page: state.key(PAGE, field)

st.header("One kernel")
bundle = analysis.selected_bundle()
notes.show(bundle, "one-kernel", available_metrics(bundle),
           extra_checks=(P.INTERVAL_BELOW_ZERO, P.ABOVE_ROOF))
analysis.how_to_read(
    "Pick an **annotation** (a region named with `nsight.annotate`) and a **config**. The "
    "table lists every metric the job recorded for it: mean over the runs (**Mean**, "
    "nsight-python's AvgValue, in its unit), spread, CI95 and **Stable** (nsight-python's "
    "StableMeasurement: RSD < 2 %). **SM clock "
    "the kernel ran at** is Nsight Compute's `gpc__cycles_elapsed.avg.per_second` measured on "
    "the kernel itself (ncu backend with the bound preset), not the device's rated clock. "
    "**FLOP/s** and **GB/s** are computed here from the kernel catalog's analytic FLOP and byte "
    "counts (work table) over the mean measured duration, in the unit in which they read at "
    "least 1 (TFLOP/s on a GPU; MFLOP/s or MB/s for a slow host job).")


def show_scope() -> None:
    """What the annotated region holds (the job's backend says): under the chart, since over it
    the chart's top was at y 625 of a 1000x700 window; before a stop for missing data too."""
    st.info(profiled_scope(bundle.manifest, bundle.backend), icon=":material/crop_free:")


try:
    # the job's state as the caption says it: the manager's, which the manifest lags
    choices = annotation_configs(bundle, job_status.shown_status(bundle))
except MissingData as exc:
    show_scope()
    analysis.missing(exc)

#: The controls stand here, drawn after the chart, which reads their values first
#: (app.ui.controls_later)
later = Later()
ANNOTATION, CONFIG, TIME_UNIT = (state.key(PAGE, f) for f in ("annotation", "config", "time-unit"))
annotations = state.keep_if_offered(ANNOTATION, choices)
annotation = later.value(ANNOTATION, None)
configs = choices[annotation]
config_ids = state.keep_if_offered(CONFIG, configs)
config = later.value(CONFIG, None)
# a job without durations (an import of other metrics only) has no time to put in a unit
has_durations = bundle.duration_metric in available_metrics(bundle)
time_unit = (later.value(TIME_UNIT, derived.DEFAULT_TIME_UNIT)
             if has_durations else None) or derived.DEFAULT_TIME_UNIT
options = OneKernelOptions(annotation=annotation, config=config, time_unit=time_unit)


def draw_controls() -> None:
    """The annotation, the config and the time unit, into ``later.slot``, at the values the
    chart read."""
    cols = later.slot.columns(3)
    cols[0].selectbox("Annotation", annotations, key=ANNOTATION, format_func=visible)
    cols[1].selectbox("Config", config_ids, key=CONFIG, format_func=lambda c: configs[c])
    if has_durations:
        cols[2].segmented_control("Time unit", list(derived.TIME_UNITS),
                                  default=derived.DEFAULT_TIME_UNIT, key=TIME_UNIT)
    later.confirm()


try:
    frame = cached.view(one_kernel_frame, bundle, options)
except MissingData as exc:
    draw_controls()  # another annotation or config may have what this one lacks
    show_scope()
    analysis.missing(exc)
summary = one_kernel_summary(bundle, frame)
notes.few_runs(frame)

# The tiles, the kernel names and the table of every value stand below the chart, drawn after
# it: above it they were 30 elements the browser rendered before drawing the chart (issue 40),
# and they put its top at y 1370 of a 1000x700 window (issue 37).
st.subheader("Duration of each launch, run by run")
launches = cached.view(one_kernel_launches_frame, bundle, options)
if launches.empty:  # no chart, table or download that would hold nothing
    st.info(f"This job has no per-run or per-launch {esc(bundle.duration_metric)} values for "
            "this annotation × config, so there is no duration to draw: its recorded values "
            "are in the table below.", icon=":material/info:")
else:
    analysis.figure_panel(
        cached.figure(build_one_kernel_figure, launches,
                      chart_title(annotation, summary.config_label), bundle.host_timer),
        launches, key=state.key(PAGE, "runs"),
        filename=f"{bundle.job_id}-{annotation}-config{config}-launches.csv")
draw_controls()
show_scope()
tiles = st.columns(6)
# — : not in this job: one run (no spread), or a column the bundle lacks (its note above
# says so)
missing = (intervals.ONE_RUN_NOTE if summary.num_runs is not None
           and summary.num_runs < intervals.MIN_RUNS
           else "— = not in this job (the note above names the column)")
if summary.duration is not None:
    unit = summary.time_unit  # the Time unit toggle, like the table and the figure
    shown = (numbers.fmt_interval(summary.duration, summary.duration_lo,
                                  summary.duration_hi)
             if summary.duration_lo is not None and summary.duration_hi is not None
             else (numbers.fmt(summary.duration),))
    ci = (f"CI95 [{shown[1]}, {shown[2]}] {unit} ({W.line(W.MEAN, bundle.host_timer)})"
          if len(shown) == 3 else missing)
    tiles[0].metric(f"Duration ({unit})", shown[0],
                    help=f"Mean over the runs; {ci}; {bundle.measurement}", border=True)
    tiles[1].metric("RSD (%)", numbers.fmt(summary.rsd_pct),
                    help="Relative standard deviation over the runs"
                         + ("" if summary.rsd_pct is not None else f"; {missing}"), border=True)
    tiles[2].metric("Runs", "—" if summary.num_runs is None else f"{summary.num_runs}",
                    border=True)
    tiles[3].metric("Stable", {True: "yes", False: "no", None: "not assessed"}[summary.stable],
                    help=f"nsight-python's StableMeasurement: RSD < {C.STABLE_RSD_PCT:g} % "
                         f"over at least {intervals.MIN_RUNS} runs; with fewer runs it is not "
                         "assessed here (nsight-python's column reads False there: its RSD is "
                         "missing, and a missing RSD < 2 compares False)", border=True)
# a host-timed job ran on no GPU: no SM clock; a job without durations has no clock or
# throughput of its kernel to show (its values are in the table)
if not bundle.host_timer and (has_durations or summary.sm_clock_mhz is not None):
    tiles[4].metric("SM clock (MHz)", numbers.fmt(summary.sm_clock_mhz),
                    help="The clock the kernel ran at: gpc__cycles_elapsed.avg.per_second, "
                         "measured on the kernel (ncu backend, bound preset); not the "
                         "device's rated clock. — = not collected",
                    border=True)
if has_durations:
    tiles[5].metric(summary.throughput_unit, numbers.fmt(summary.throughput),
                    help="Analytic FLOPs (work table) / the mean measured duration. "
                         "— = no work formula for this annotation", border=True)
# a big job's audit is not read here, as its charts do not: deriving it for one pair took
# 7.6 of the page's 17 s profiled on a 1,000-config sweep (issue 37)
if (unread := audit_not_read_note(bundle, PAGE_EVIDENCE)) is not None:
    st.caption(esc(unread))
elif audited := cached.view(pair_failed_text, bundle, annotation, config):
    st.warning(esc(audited), icon=":material/report:")
st.markdown(f"**GPU:** {esc(summary.gpu)} · **annotation** {code(summary.annotation)} · "
            f"**config** {esc(summary.config_label)}")
if summary.kernels:
    st.markdown(f"**Kernel{'s' if len(summary.kernels) > 1 else ''} launched by the region "
                f"({len(summary.kernels)}):**")
    st.code("\n".join(summary.kernels), language="text", wrap_lines=True)
else:
    st.caption("Kernel names: this job has no per-launch table.")

st.subheader("Every value of this annotation × config")
every = metric_roles.with_words(frame, bundle.manifest)  # the words beside each raw name
panels.table(every, key=state.key(PAGE, "table"))
panels.cut_bounds_note(bundle, frame[C.METRIC].unique() if C.METRIC in frame else ())
panels.download_csv(every, key=state.key(PAGE, "csv"),
                    filename=f"{bundle.job_id}-{annotation}-config{config}.csv")
