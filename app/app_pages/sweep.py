"""Size sweep: time, TFLOP/s or GB/s (or another metric of the job, e.g. an imported derived
metric) against the parameter that varies, optionally normalised."""

import re

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from profiling_worker.bundle.schema import columns as C, intervals, plausibility as P
from profiling_worker.bundle.schema import interval_words as W

from app.core import derived, metric_roles
from app.core.figures import common as figures_common, theme
from app.core.figures.sweep import LOG_Y_SPAN, drawn_rows, table_rows, wants_log_y
from app.core.views.sweep import (SweepOptions, annotations_of, default_options,
                                  metric_choices, sweep_metric, sweep_x, x_choices)
from app.ui import (analysis, deep_dive_action, energy, notes, panels, run_audit, state,
                    sweep_chart)
from app.ui import time_unit as time_unit_control
from app.ui.controls_later import Later
from app.core.markdown import esc, visible

PAGE = "sweep"  # widget keys of this page: state.key(PAGE, field)

st.header("Size sweep")
bundle = analysis.selected_bundle()
deep_dive_action.offer(bundle, "sweep")

units = metric_roles.units(bundle)
metrics = metric_choices(bundle)
has_durations = bundle.duration_metric in metrics
#: What each control starts at (the frame and chart begun with the server used the same)
defaults = default_options(bundle)
#: The unit the chart draws each throughput in (MFLOP/s and MB/s for a cpu job), for the labels
rates = sweep_chart.quantity_units(bundle)
#: Short segment labels in the axis's units (the full quantity names are the y-axis titles;
#: long ones were cut off)
SHORT = {derived.TIME: "Time", derived.TFLOPS: rates[derived.TFLOPS],
         derived.GBPS: f"Analytic {rates[derived.GBPS]}"}


if not metrics:  # queued, running, cancelled or failed: no control would act on anything
    analysis.no_values(bundle, bundle.duration_metric)
#: The controls stand here, but are drawn after the chart, which reads their values first
#: (app.ui.controls_later: the browser rendered them before the chart on every click)
later = Later()
METRIC, QUANTITY, BASELINE, X_AXIS, LOG_Y = (state.key(PAGE, f) for f in
                                             ("metric", "quantity", "baseline", "x", "log-y"))
offers_metric = len(metrics) > 1 or not has_durations
if offers_metric:
    state.keep_if_offered(METRIC, metrics, sweep_metric(bundle, defaults.metric))
metric = sweep_metric(bundle, later.value(METRIC, None) if offers_metric else None)
from_durations = metric == bundle.duration_metric
# nothing to derive a time or a throughput from without durations
quantity = ((later.value(QUANTITY, defaults.quantity) or defaults.quantity) if has_durations
            else derived.TIME)
#: The "— absolute values —" option: "", not None, which a selectbox's state reads as no choice
#: (the box went blank when state.keep_if_offered wrote it)
ABSOLUTE = ""
normalise_to = state.keep_if_offered(BASELINE, [ABSOLUTE, *annotations_of(bundle)],
                                     defaults.baseline or ABSOLUTE)
baseline = later.value(BASELINE, ABSOLUTE) or None
# ns / µs / ms only where the values drawn are a time; else their own unit in its place
is_time = quantity == derived.TIME if from_durations else derived.is_time(metric)
# a throughput's unit is the one that fits its values (MFLOP/s for a cpu job): named below,
# once the frame is made
time_unit = (time_unit_control.ahead(later, PAGE) if is_time
             else time_unit_control.kept(PAGE))
choices = x_choices(bundle)
if len(choices) > 1:
    state.keep_if_offered(X_AXIS, choices, str(defaults.x))
x = sweep_x(bundle, later.value(X_AXIS, None) if len(choices) > 1 else None)
options = SweepOptions(quantity=quantity, time_unit=time_unit, baseline=baseline, x=x,
                       metric=None if from_durations else metric)


def draw_controls() -> tuple[DeltaGenerator, DeltaGenerator]:
    """The page's controls, into ``later.slot``, at the values the chart read; the columns of
    the time unit and of the log toggle (drawn once the frame is made)."""
    with later.slot:
        # the choosers and the log toggle share a row, so the chart stays in sight at 1000x700
        # (a row each put its top at y 684 of 700 there; Log y wrapped onto a row of its own)
        pickers = [offers_metric, len(choices) > 1]
        top = (st.columns([w for w, on in zip((3, 2), pickers) if on] + [1],
                          vertical_alignment="bottom") if any(pickers) else [])
        if offers_metric:
            top[0].selectbox(
                "Y axis: metric", metrics, key=METRIC,
                format_func=metric_roles.picker(bundle.manifest, units),
                help="The job's metrics, each in its own unit as the tables give it (a clock "
                     "in MHz). The durations are drawn as the Quantity below (time, or "
                     "throughput from the kernel catalog's FLOP and byte counts); any other "
                     "metric (an ncu counter, an imported derived metric such as "
                     "nsight-python's compute_tflops) as it is.")
        if pickers[1]:
            top[-2].selectbox(
                "X axis", choices, key=X_AXIS,
                help="The parameters that vary between the configs; the others that vary "
                     "split each annotation into one line per value.")
        # without the toggle, Quantity's share is at least its options' width at 1000 px
        # (255 of 628 px), or Normalise to wrapped onto a row of its own
        cols = st.columns([3.4, 2, 2.3] if top else [3, 2.2, 3, 1.6],
                          vertical_alignment="bottom")
        if has_durations:
            cols[0].segmented_control(
                "Quantity", list(derived.QUANTITIES), default=defaults.quantity,
                key=QUANTITY, disabled=not from_durations,
                help=f"{rates[derived.GBPS]} here is {derived.GBPS_SOURCE} (the kernel "
                     "catalog's byte count); the Memory and Bound pages show DRAM bandwidth "
                     "from measured DRAM bytes / time."
                     + ("" if from_durations else f" Derived from the durations: pick "
                        f"{bundle.duration_metric} as the metric above to use it."),
                format_func=lambda q: SHORT.get(q, derived.QUANTITY_LABELS[q]))
        else:
            cols[0].caption("Quantity: time, TFLOP/s or GB/s need durations (none in this job)")
        cols[2].selectbox("Normalise to", normalise_to, key=BASELINE,
                          format_func=lambda a: ("— absolute values —" if a == ABSOLUTE
                                                 else visible(a)))
        if is_time:
            time_unit_control.control(cols[1], PAGE, True)
    return cols[1], (top or cols)[-1]


others = [m for m in metrics if m != bundle.duration_metric]

try:
    frame = sweep_chart.frame(bundle, options)
except (derived.MissingWork, ValueError) as exc:
    draw_controls()  # "Choose Time": the controls stay above the error
    later.confirm()
    panels.render_error(str(exc), "Choose Time, or a job whose kernels declare FLOP/byte counts."
                        + (f" The job's other metrics ({', '.join(others)}) are under "
                           "'Y axis: metric' above, and on the stability and compare pages."
                           if others else ""))
    panels.stop_page()
if frame.empty:
    draw_controls()  # the message names 'Y axis: metric' above
    later.confirm()
    analysis.no_values(bundle, metric, metrics, "Y axis: metric")
if not has_durations:
    st.info(f"This job has no {esc(bundle.duration_metric)} values (durations), so time and "
            f"throughput cannot be derived here; drawn is its metric {esc(metric)} as the file "
            "gives it" + (f" ({esc(units[metric])})" if units.get(metric) else ", which has no "
                          "unit in the file") + ".", icon=":material/info:")

notes.show(bundle, "sweep", [metric],
           extra_checks=(P.ABOVE_ROOF,) if from_durations and quantity != derived.TIME else ())
notes.few_runs(frame)
notes.auto_runs(bundle, "sweep")
log_y = bool(later.value(LOG_Y, wants_log_y(frame)))
fig = sweep_chart.figure(bundle, options, frame, log_y)
role = metric_roles.roles(bundle.manifest).get(metric, {})
measured = (bundle.measurement if from_durations or derived.is_time(metric)
            else str(role.get("label") or f"{metric}, as the job's tables hold it"))
frame = frame.assign(Measurement=measured)  # the CSV says what the values are
shown = quantity if from_durations else re.sub(r"[^\w.-]+", "_", metric)
# the points whose runs failed the run audit (the badges of Stability and Results), named
panels.chart_with_table(fig, frame, key=PAGE, filename=f"{bundle.job_id}-sweep-{shown}.csv",
                        shown=table_rows(frame), which="those of the points drawn",
                        note=" ".join(n for n in (figures_common.open_end_note(fig),
                                                  run_audit.chart_note(bundle, drawn_rows(frame)))
                                      if n) or None)  # unbounded CI95s named, audit
unit_column, log_column = draw_controls()
if not is_time:
    time_unit_control.control(unit_column, PAGE, False, theme.first_unit(frame[C.UNIT]))
log_column.toggle(
    "Log y", value=wants_log_y(frame), key=LOG_Y,
    help=f"On by default when the values span more than {LOG_Y_SPAN:g}×, so small sizes do not "
         "sit on zero. A CI95 lower bound ≤ 0 cannot be drawn on a log axis: its whisker is cut "
         "at the bottom of the chart (the hover says so; the table keeps the exact bound).")
later.confirm()
panels.cut_bounds_note(bundle, [metric])
st.caption(f"Error bars and CI95 columns: {intervals.CI_METHOD} ({intervals.SEED_CI_NOTE})."
           + (f" A ratio to {baseline} takes both annotations' run spread ("
              f"{intervals.RATIO_METHOD}, as on the Compare page and in the regression gate; "
              "CI95_Upper inf: unbounded); "
              f"{esc(visible(baseline))} itself is 1 by definition, with no interval; StdDev "
              "and RSD are the annotation's own runs. Every "
              f"run is divided by {esc(visible(baseline))}'s mean at its config, so StdDev is "
              f"scaled with AvgValue and the unit reads '× {esc(visible(baseline))}'; "
              "nsight-python's normalize_against (its Normalized column names the annotation) "
              "divides AvgValue alone: its StdDev, CI95_Lower and CI95_Upper stay in the "
              "metric's unit."
              if baseline else "")
           + " " + W.line(W.RATIO if baseline else W.MEAN, bundle.host_timer))
energy.show(bundle, PAGE)
if metric_roles.roles(bundle.manifest):
    st.caption(("Drawn from the measured durations. " if from_durations else
                f"Drawn: {esc(metric)}, as the file gives it. ")
               + "Imported metrics that are not measurements (under 'Y axis: metric' above, and "
               "on the compare and stability pages): "
               + "; ".join(metric_roles.describe(bundle.manifest)) + ".")
