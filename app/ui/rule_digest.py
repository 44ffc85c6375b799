"""The rule digest panel: Nsight Compute's rule results over every launch of the job, one table
(bound view, kernels view and the deep dive)."""

from __future__ import annotations

import streamlit as st

from app.core.bundle_files import explains_launches, summary_has_no_rules
from profiling_worker.bundle.loader import Bundle
from app.core.markdown import code, esc
from app.ui import analysis, cached, panels, state

HOW_TO_READ = (
    "Nsight Compute evaluates its **rules** on each profiled launch (the guidance of its Details "
    "page: a title, a message, the *focus metrics* it looked at and often an **estimated "
    "speedup** in % of that launch's duration). Here every launch of the job is read from the "
    "job's `.ncu-rep` (or, where a bundle left that out, from the deep dive the worker wrote from "
    "it, `nsight/deep_dive.json`) and each rule (rule × title) is one row: at which regions and "
    "configs it "
    "fired, on how many launches, its median and largest estimated speedup, and "
    "**Est. saving % of sweep** = Σ over the launches where it fired (duration × speedup) / "
    "total duration of all launches × 100: what the job's whole sweep would save if the rule's "
    "advice held, each launch's speedup **capped at its speed-of-light headroom**, 100 − the "
    "larger of its SM and memory throughput in % of peak (Nsight Compute's GPU Speed Of Light "
    "section): the same work cannot finish in less time than its busiest unit needs at its "
    "peak. Rows are sorted by it. Nsight Compute estimates each rule on its own model, which "
    "can promise more than the roof allows (an 81-87.5 % occupancy speedup on matmuls already "
    "at 86-93 % of the SM's peak): its uncapped figure is the next column, the tool's own "
    "estimate, and *Capped at SOL roof* says on how many launches the cap applied. A *local* "
    "speedup speeds up one part of the kernel "
    "(Nsight Compute's own distinction), so its saving is an upper bound. A rule without an "
    "estimate (e.g. the bottleneck summary) has an empty saving, not zero. Rules run only when "
    "the report holds sections: a job collected with a metric list alone has none.")


def show(bundle: Bundle, page: str) -> None:
    """Draw the digest of ``bundle`` under a subheader; ``page`` prefixes the widget keys."""
    st.subheader("Nsight Compute rules across the job")
    if not explains_launches(bundle):
        st.caption(f"This job has no Nsight Compute report (backend {code(bundle.backend)}): "
                   "rule results come from an ncu job's `.ncu-rep`.")
        return
    analysis.how_to_read(HOW_TO_READ)
    known = summary_has_no_rules(bundle)  # most sweeps: no need to read the report again
    if known:
        st.info(f"No rule results in this report. {esc(known)}", icon=":material/info:")
        return
    answer = cached.report_answer("rules", bundle)
    if not answer.ok:
        st.warning(f"The report's rules could not be read: {esc(answer.message)}",
                   icon=":material/warning:")
        return
    table = answer.table()
    if table.empty:
        st.info(f"No rule results in this report. {esc(answer.note)}", icon=":material/info:")
        return
    st.caption(esc(answer.note))
    panels.table(table, key=state.key(page, "rules"))
    panels.download_csv(table, key=state.key(page, "rules-csv"),
                        filename=f"{bundle.job_id}-rules.csv")
