"""The deep dive's "kernel's own timeline": the PM-sampling series of the shown launch, read by
the worker from the bundle's report (``profiling_worker pmsampling``; the app never imports
ncu_report), drawn over the kernel's duration with its table and CSV."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.loader import Bundle
from app.core.figures.pm_sampling import build_pm_figure
from app.core.markdown import esc
from app.core.views import pm_sampling as P
from app.ui import cached, panels, state

PAGE = "deep-dive"  # widget keys of this page: state.key(PAGE, field)

SECTION = "PmSampling"


def show(bundle: Bundle, sections: Sequence[str], launch_id: int) -> None:
    """The timeline section; ``sections`` are the launch's section identifiers."""
    st.subheader("The kernel's own timeline (PM sampling)")
    if SECTION not in sections:
        st.info("Not in this report: PM Sampling (section `PmSampling`) was not collected. "
                "Profile the point with the full section set (`ncu --set full`; the deep-dive "
                "action does).", icon=":material/visibility_off:")
        return
    answer = cached.report_answer("pmsampling", bundle)
    if not answer.ok:
        st.warning(f"The sampled series could not be read: {esc(answer.message)}",
                   icon=":material/warning:")
        return
    found = answer.data()
    for problem in found.get("problems") or ():
        st.warning(f"Part of the sampled series could not be read: {esc(problem)}")
    line = P.timeline(found.get("pm_sampling") or [], launch_id)
    if line is None:
        st.info("The report has a PM Sampling section but no sampled series for this launch.")
        return
    st.caption(_caption(line))
    names = sorted(set(line.frame[P.METRIC]))
    key = "deep-dive-pm-metrics"
    if key in st.session_state and not set(st.session_state[key]) <= set(names):
        del st.session_state[key]
    chosen = st.multiselect("Series", names, default=P.default_metrics(line), key=key,
                            help="Metrics Nsight Compute sampled while the kernel ran")
    wide = P.wide(line, chosen)
    fig = build_pm_figure(line.frame, line.time, line.duration_ns, chosen)
    panels.chart_with_table(fig, wide, key=state.key(PAGE, "pm"),
                            filename=f"{bundle.job_id}-pm-sampling-launch{launch_id}.csv")
    if (box := panels.fold("Every sampled series: mean and peak over the kernel",
                           state.key(PAGE, "pm-summary-open"))) is not None:
        panels.table(P.summary(line), key=state.key(PAGE, "pm-summary"), where=box)


def _caption(line: P.Timeline) -> str:
    """What the samples are: interval, origin, kernel duration, what was left out or is absent."""
    parts = [f"{line.frame[P.METRIC].nunique()} series sampled every "
             f"{line.interval_ns:g} ns; each value is the counter accumulated over one interval "
             "starting at its time"]
    if line.duration_ns is not None:
        parts.append(f"time from the kernel's start (`profiler__timestamp_workload_start`), "
                     f"which ran {line.duration_ns / 1e3:.1f} µs")
    else:
        parts.append("no workload timestamps in the report: time from the first aligned sample "
                     "(ncu_report's alignment), not from the kernel's start")
    if line.dropped:
        parts.append(f"{counted(line.dropped, 'sample')} of each series before or after the "
                     "kernel left out")
    if line.missing:
        parts.append("not sampled in this report: " + ", ".join(m.lower() for m in line.missing))
    return "; ".join(parts) + "."
