"""Per-kernel breakdown: every launch and its metrics, kernel counts, combine rules."""

import streamlit as st

from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.schema import columns as C

from app.core.figures.kernels import build_kernels_figure
from app.core.metrics import MissingData, available_metrics
from app.core.views.chart_units import kernels_table
from app.core.views.kernels import (combine_rules_frame, kernel_counts_frame, kernel_time_frame,
                                    launches_frame, split_ignored, unattributed_frame)
from app.ui import analysis, cached, notes, panels, rule_digest, run_audit, state
from app.ui.controls_later import Later
from app.core.markdown import code, esc
from app.core import frame_columns as F

PAGE = "kernels"  # widget keys of this page: state.key(PAGE, field)
BAR_LABELS = {"time": "Time (µs)", "share": "Share %"}

st.header("Kernels")
bundle = analysis.selected_bundle()
notes.show(bundle, "kernels", available_metrics(bundle))
analysis.how_to_read(
    "An annotated region may launch several kernels: cuBLAS picks a split-K GEMM (two kernels) "
    "for fp32 at n=512 on the H200, and an unfused `a + b * c` is two elementwise kernels. The "
    "chart stacks the time of each kernel inside each region on a **linear** axis (stacked "
    "segments only add up on a linear scale; a log axis would make the lower segment look far "
    "bigger than it is). Times span 5 µs to 21 ms in a size sweep, so the chart opens on "
    "**Share %**: every region drawn as 100 %, split between its kernels; **Time (µs)** shows "
    "the absolute times (small regions are then thin bars). The hover and the table give exact "
    "times and shares. Each kernel has its own colour; long names are shortened in the "
    "legend keeping their start and end (and the part that tells similar names apart), the "
    "hover shows the full name. *Kernel counts* says how many launches each run had and whether "
    "that "
    "changed between runs. *Combine rules* says how launches were merged into one value per "
    "run: durations, counts and bytes add (`sum`); percentages and rates are duration-weighted "
    "means (adding them gives nonsense such as 176 % of DRAM peak); `single` = one launch.")
try:
    times = cached.view(kernel_time_frame, bundle)
except MissingData as exc:
    analysis.missing(exc)
later = Later()  # the Bars control stands here, drawn after the chart (app.ui.controls_later)
BARS = state.key(PAGE, "bars")
bars = later.value(BARS, "share") or "share"
analysis.figure_panel(cached.figure(build_kernels_figure, times, bundle.host_timer,
                                    share=bars == "share"), kernels_table(times), key=PAGE,
                      filename=f"{bundle.job_id}-kernel-times.csv",
                      note=run_audit.chart_note(bundle, times))  # regions marked ×
later.slot.segmented_control("Bars", ["share", "time"], default="share", key=BARS,
                             format_func=BAR_LABELS.__getitem__)
later.confirm()

st.subheader("Kernel counts per annotation × config")
counts = cached.view(kernel_counts_frame, bundle)
multi = counts[counts[F.MAX_PER_RUN] > 1]
if len(multi):
    st.caption("Several kernels per run: " + ", ".join(
        f"{esc(a)} {esc(c)} ({lo}–{hi})" if lo != hi else f"{esc(a)} {esc(c)} ({hi})"
        for a, c, lo, hi in zip(multi[C.ANNOTATION], multi[F.CONFIG_LABEL],
                                multi[F.KERNELS_PER_RUN], multi[F.MAX_PER_RUN])))
if counts[F.VARIES_BETWEEN_RUNS].any():
    st.warning("The kernels launched (their number or their names) differ between runs of some "
               "configs: " + ", ".join(f"{esc(a)} {esc(c)}" for a, c in zip(
                   *counts.loc[counts[F.VARIES_BETWEEN_RUNS], [C.ANNOTATION, F.CONFIG_LABEL]]
                   .T.to_numpy())) + ". A kernel absent from a run counts 0 ns in that run's "
               "mean time above.")
panels.table(counts, key=state.key(PAGE, "counts"))
panels.download_csv(counts, key=state.key(PAGE, "counts-csv"),
                    filename=f"{bundle.job_id}-kernel-counts.csv")

outside, ignored = split_ignored(cached.view(unattributed_frame, bundle))
entries = bundle.job_spec.ignore_kernels if bundle.job_spec else ()
if entries:
    st.subheader("Kernels ignored by the job")
    st.caption("The job's `ignore_kernels`: " + ", ".join(code(e) for e in entries) + ". Their "
               "launches are left out of every value on every page (exact name, or `re:` "
               "pattern searched in the name).")
    if len(ignored):
        panels.table(ignored.drop(columns=C.REASON), key=state.key(PAGE, "ignored"))
    else:
        st.caption("No launch matched them: every launch is in the values.")
if len(outside):
    st.subheader("Launches not attributed to any config")
    in_regions = outside[outside[C.ANNOTATION].fillna("") != ""]
    if len(in_regions):
        st.warning(f"{counted(int(in_regions[F.LAUNCHES].sum()), 'launch', 'launches')} inside "
                   "annotations fell outside "
                   "every config's run range; they are in no table's values (never merged into "
                   "a config).")
    st.caption("Launches outside every annotation (set-up code, the L2 flush before each CUPTI "
               "run) are listed for completeness; they are not measured.")
    panels.table(outside, key=state.key(PAGE, "unattributed"))

rule_digest.show(bundle, "kernels")

st.subheader("Combine rules")
rules = cached.view(combine_rules_frame, bundle)
panels.table(rules, key=state.key(PAGE, "rules"))

st.subheader("Every launch")
launches = cached.view(launches_frame, bundle)
panels.table(launches, key=state.key(PAGE, "launches"))
panels.download_csv(launches, key=state.key(PAGE, "launches-csv"),
                    filename=f"{bundle.job_id}-launches.csv")
