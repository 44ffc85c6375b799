"""Size sweep: time, TFLOP/s or GB/s against the parameter that varies, optionally normalised."""

import streamlit as st

from profiling_worker.schema import intervals, plausibility as P

from app.core import derived, metric_roles
from app.core.figures.sweep import LOG_Y_SPAN, build_sweep_figure, wants_log_y
from app.core.views.sweep import SweepOptions, annotations_of, sweep_frame, sweep_x, x_choices
from app.ui import analysis, cached, deep_dive_action, job_status, notes, panels, state
from app.core.markdown import esc, visible

PAGE = "sweep"  # widget keys of this page: state.key(PAGE, field)

st.header("Size sweep")
bundle = analysis.selected_bundle()
deep_dive_action.offer(bundle, "sweep")

#: Short segment labels (the full quantity names are the y-axis titles); long ones were cut off.
SHORT = {derived.TIME: "Time", derived.TFLOPS: "TFLOP/s", derived.GBPS: "Analytic GB/s"}
cols = st.columns([3, 2.2, 3, 1.6], vertical_alignment="bottom")
quantity = cols[0].segmented_control(
    "Quantity", list(derived.QUANTITIES), default=derived.TIME, key=state.key(PAGE, "quantity"),
    help=f"GB/s here is {derived.GBPS_SOURCE} (the kernel catalog's byte count); the Memory "
         "and Bound pages show DRAM GB/s from measured DRAM bytes / time.",
    format_func=lambda q: SHORT.get(q, derived.QUANTITY_LABELS[q])) or derived.TIME
time_unit = cols[1].segmented_control("Time unit", list(derived.TIME_UNITS), default="µs",
                                      key=state.key(PAGE, "time-unit"),
                                      disabled=quantity != derived.TIME) or "µs"
baseline = cols[2].selectbox("Normalise to",
                             state.keep_if_offered(state.key(PAGE, "baseline"),
                                                   [None, *annotations_of(bundle)]),
                             key=state.key(PAGE, "baseline"),
                             format_func=lambda a: ("— absolute values —" if a is None
                                                    else visible(a)))
choices = x_choices(bundle)
x_param = st.selectbox(
    "X axis", state.keep_if_offered(state.key(PAGE, "x"), choices), key=state.key(PAGE, "x"),
    help="The parameters that vary between the configs; the others that vary split each "
         "annotation into one line per value.") if len(choices) > 1 else None
x = sweep_x(bundle, x_param)
options = SweepOptions(quantity=quantity, time_unit=time_unit, baseline=baseline, x=x)

try:
    frame = cached.view(sweep_frame, bundle, options)
except (derived.MissingWork, ValueError) as exc:
    imported = list(metric_roles.roles(bundle.manifest))
    panels.render_error(str(exc), "Choose Time, or a job whose kernels declare FLOP/byte counts."
                        + (f" The file's own {', '.join(imported)} (not measurements) are on the "
                           "stability and compare pages." if imported else ""))
    panels.stop_page()
if frame.empty:
    st.info(f"This job has no {esc(bundle.duration_metric)} values to plot (status: "
            f"{esc(job_status.shown_status(bundle))}).")
    panels.stop_page()

notes.show(bundle, "sweep", [bundle.duration_metric],
           extra_checks=(P.ABOVE_ROOF,) if quantity != derived.TIME else ())
notes.few_runs(frame)
notes.auto_runs(bundle, "sweep")
label = derived.QUANTITY_LABELS[quantity].split(" (")[0]
if baseline:
    label = f"{label} relative to {baseline}"
log_y = cols[3].toggle(
    "Log y", value=wants_log_y(frame), key=state.key(PAGE, "log-y"),
    help=f"On by default when the values span more than {LOG_Y_SPAN:g}×, so small sizes do not "
         "sit on zero. A CI95 lower bound ≤ 0 cannot be drawn on a log axis: its whisker is cut "
         "at the bottom of the chart (the hover says so; the table keeps the exact bound).")
fig = cached.figure(build_sweep_figure, frame, x, bundle.host_timer, quantity_label=label,
                         log_y=log_y)
frame = frame.assign(Measurement=bundle.measurement)  # the CSV says what the durations are
panels.chart_with_table(fig, frame, key=PAGE, filename=f"{bundle.job_id}-sweep-{quantity}.csv")
st.caption(f"Error bars and CI95 columns: {intervals.CI_METHOD}."
           + (f" A ratio to {baseline} takes both annotations' run spread (the Welch interval "
              "of the difference over the baseline's mean, as on the Compare page and in the "
              "regression gate); StdDev and RSD are the annotation's own runs."
              if baseline else ""))
if metric_roles.roles(bundle.manifest):
    st.caption("Drawn from the measured durations only. Imported metrics that are not "
               "measurements (pick them on the compare or stability page): "
               + "; ".join(metric_roles.describe(bundle.manifest)) + ".")
