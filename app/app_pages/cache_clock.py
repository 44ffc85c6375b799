"""Cache and clock control matrix: the selected job beside its variants (same spec, other
cache_control / clock_control)."""

import streamlit as st

from profiling_worker.bundle.schema import backends as B
from app.core.figures.cache_clock import build_cache_clock_figure
from app.core.metrics import MissingData
from app.core.views.chart_units import cache_clock_table
from app.core.views.cache_clock import (VARIANT_KEYS, cache_clock_frame, l2_bytes,
                                        no_variant_text, siblings, variant_label)
from app.core import frame_columns as F
from app.ui import analysis, cached, job_status, panels, run_audit, state
from app.core.markdown import code, esc

PAGE = "cache-clock"  # widget keys of this page: state.key(PAGE, field)

st.header("Cache and clock control")
bundle = analysis.selected_bundle()
analysis.how_to_read(
    "Each variant is one job of the same spec with another **cache_control** (`all` flushes "
    "every cache before each replay pass, `none` keeps L2 warm) or **clock_control** (`base` "
    "locks the clocks to base, `none` lets them boost). Sizes left of the **L2 line** fit in "
    "L2: with `cache_control=none` their data can stay on chip between replays, so they run "
    "faster than from DRAM; right of it, cache control cannot matter. Memory-bound kernels "
    "barely move with the clock; compute-bound ones scale with it. The clock panel shows the "
    "SM clock each kernel actually ran at (`gpc__cycles_elapsed.avg.per_second`), not the rated "
    "clock. To add a variant, run the same job again with the other setting. On the lent H200 "
    "only `clock_control=none` was run (`base` would lock the clocks of a shared machine).")
# Siblings are found from the listed manifests; only the chosen ones are loaded.
listed, _problems = cached.list_bundles()
others = (cached.bundle_for(i.job_id) for i in siblings(bundle, listed)[1:])
group = [bundle, *(b for b in others if b is not None)]
# each job's state as the caption says it: the manager's, which the manifest lags
statuses = {b.job_id: job_status.shown_status(b) for b in group}
# the one rule of the form and the worker (backends.unused): a cpu job applies neither, a cupti
# job no clock_control, so the advice to vary them was wrong for it (a fresh user's find: they
# are greyed out in the form)
unused = [key for key in VARIANT_KEYS if key in B.unused(bundle.backend)]
used = [key for key in VARIANT_KEYS if key not in unused]
applies = f"applies no {' or '.join(unused)} (greyed out in the form, never sent)"
if not used:  # no variant at all: said once, and no variant's name or DRAM bytes drawn
    st.info(no_variant_text(bundle.backend, esc))
    try:
        cache_clock_frame(group, statuses)  # a job still running says when its values come
    except MissingData as exc:
        analysis.missing(exc)
    panels.stop_page()
st.caption("Variants: " + ", ".join(f"{esc(variant_label(b))} ({code(b.job_id)})"
                                    for b in group))
if len(group) == 1:
    st.info(f"No other job with the same spec and another {' or '.join(used)} setting: run "
            f"this job again with the other {' or '.join(used)}."
            + (f" The {esc(bundle.backend)} backend {applies}." if unused else ""))
try:
    frame = cache_clock_frame(group, statuses)
except MissingData as exc:
    analysis.missing(exc)
l2, source = l2_bytes(bundle)
# each variant's points marked × by its own job's run audit, named per variant
marked = [f"{esc(variant_label(b))}: {note}" for b in group
          if (note := run_audit.chart_note(b, frame[frame[F.JOB] == b.job_id])) is not None]
analysis.figure_panel(cached.figure(build_cache_clock_figure, frame, l2, source,
                                    bundle.host_timer), cache_clock_table(frame), key=PAGE,
                      filename=f"{bundle.job_id}-cache-clock.csv",
                      note=" ".join(marked) or None)
