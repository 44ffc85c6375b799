"""Stability: RSD, CI95 and StableMeasurement per annotation x config, per-run values and drift."""

import streamlit as st

from profiling_worker.bundle.schema import columns as C, plausibility as P
from profiling_worker.bundle.schema import interval_words as W

from app.core import derived, metric_roles
from app.core.figures import common as figures_common
from app.core.figures.stability import build_runs_figure, build_stability_figure
from app.core.metrics import MissingData, available_metrics
from app.core.views.stability import (OWN_COLUMNS, RUN_COLUMNS, StabilityOptions, how_to_read,
                                      metric_choices, runs_label, short_kernels_text,
                                      stability_frame,
                                      stability_runs_frame, stable_text)
from app.ui import analysis, cached, deep_dive_action, notes, run_audit, state
from app.ui import time_unit as time_unit_control
from app.ui.controls_later import Later
from app.core.markdown import esc
from app.core.table_text import header
from app.core.views.run_audit import badge_frame
from app.core import frame_columns as F

PAGE = "stability"  # widget keys of this page: state.key(PAGE, field)

shown = cached.bundle_for(state.selected_job_id())  # its backend says what drift means
analysis.header("Stability", how_to_read(shown.host_timer if shown is not None else False))
bundle = analysis.selected_bundle()
deep_dive_action.offer(bundle, "stability")

if not available_metrics(bundle):  # queued, running, cancelled or failed: nothing to choose
    analysis.no_values(bundle, bundle.duration_metric)
units = metric_roles.units(bundle)
#: The controls stand here, drawn after the chart, which reads their values first
#: (app.ui.controls_later). The metric's box as wide as its name at 1000 px ("Host wall-clock
#: time (host__time_du" was cut, issue 37): the per-run chart's Config is picked over that chart
later = Later()
cols = later.slot.columns([3, 1], vertical_alignment="bottom")
METRIC = state.key(PAGE, "metric")
metrics = state.keep_if_offered(METRIC, metric_choices(bundle))
metric = later.value(METRIC, None)
# ns / µs / ms for a duration only; any other metric keeps its own unit, named in its place
time_unit = (time_unit_control.ahead(later, PAGE) if derived.is_time(metric)
             else time_unit_control.kept(PAGE))


def draw_controls() -> None:
    """The metric and the time unit, into their columns, at the values the chart read."""
    cols[0].selectbox("Metric", metrics, key=METRIC,
                      format_func=metric_roles.picker(bundle.manifest, units))
    time_unit_control.control(cols[1], PAGE, derived.is_time(metric), units.get(metric, ""))
    later.confirm()


try:
    summary = cached.view(stability_frame, bundle,
                          StabilityOptions(metric=metric, time_unit=time_unit))
except MissingData as exc:
    draw_controls()  # another metric may have what this one lacks
    analysis.missing(exc)

# The notes and the captions stand above the chart but are drawn into their place after it,
# so that the chart's message goes first (they were 20 elements before it on the matmul sweep,
# which the browser rendered before drawing the chart: issue 40).
above_chart = st.container()
# the run audit's badges right under the chart, over its table: over it, their rows put the
# chart's top at y 495 at 1000x700 (issue 37); the evidence stays at the page's end
analysis.figure_panel(cached.figure(build_stability_figure, summary, bundle.host_timer),
                      metric_roles.with_words(summary, bundle.manifest),
                      key=PAGE, filename=f"{bundle.job_id}-stability.csv",
                      under=lambda: run_audit.badges(bundle, PAGE, time_unit),  # page's unit
                      lead=OWN_COLUMNS,
                      parameters=bundle.parameters)
draw_controls()
with above_chart:
    notes.show(bundle, "stability", [metric], extra_checks=(P.INTERVAL_BELOW_ZERO,))
    notes.few_runs(summary)
    notes.auto_runs(bundle, "stability")
# what is stable, how far a short kernel's RSD can be trusted and how to read the table's CI95
# column: under the chart, which they explain; over it they pushed the chart below the fold at
# 1000x700 (issue 37)
said = stable_text(bundle, summary, cached.view(badge_frame, bundle, time_unit))  # cached above
st.caption(f"{esc(said)} In the table, {header(C.CI95_HALF_PCT)} beside "
           f"{header(C.STABLE)}: the CI95's half-width in % of the mean; a stable row of 3 "
           "runs can be wider than an unstable one of 100. " + W.line(W.MEAN, bundle.host_timer))
short = short_kernels_text(summary, bundle.duration_metric)
if short is not None:
    text, all_stable = esc(short[0]), short[1]
    if all_stable:
        st.caption(text + " All of them are stable here.")
    else:
        st.warning(text, icon=":material/timer:")

st.subheader("Per run, in run order")
labels = dict(zip(summary[C.CONFIG], summary[F.CONFIG_LABEL]))
config = st.selectbox("Config for the per-run chart",
                      state.keep_if_offered(state.key(PAGE, "config"), labels),
                      key=state.key(PAGE, "config"), format_func=lambda c: labels[c])
runs = cached.view(stability_runs_frame, bundle,
                   StabilityOptions(metric=metric, time_unit=time_unit, config=config))
if runs.empty:
    st.info("This job has no per-run table (plain nsight-python output keeps only the "
            "aggregated values).")
else:
    fig = cached.figure(build_runs_figure, runs, runs_label(bundle.manifest, metric),
                        bundle.host_timer)
    analysis.figure_panel(fig, runs, key=state.key(PAGE, "runs"),
                          filename=f"{bundle.job_id}-stability-runs.csv",
                          note=figures_common.open_end_note(fig) or None,  # unbounded CI95s
                          lead=RUN_COLUMNS, parameters=bundle.parameters)
run_audit.details(bundle, PAGE, time_unit)
