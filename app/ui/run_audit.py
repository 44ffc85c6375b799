"""The run audit's badges: one per annotation x config, green when every run passed, orange
when some did not; the evidence in an expander (:mod:`app.core.views.run_audit`)."""

from __future__ import annotations

import streamlit as st

from profiling_worker.bundle.loader import Bundle
from app.core.markdown import esc
from app.core.views.run_audit import audit_source, badge_frame, flagged_frame
from app.ui import cached, panels, state
from profiling_worker.bundle.schema import columns as C, run_audit as A


def badges(bundle: Bundle, page: str) -> None:
    """The badges, near the top of a page (nothing for a job without runs); :func:`details`
    gives the evidence further down."""
    frame = cached.view(badge_frame, bundle)
    if frame.empty:
        return
    several = frame[C.ANNOTATION].nunique() > 1
    cols = st.columns(min(len(frame), 4) + 1, vertical_alignment="center")
    cols[0].caption("Run audit")
    passed_all = (frame["Passed"] == frame[C.RUNS]).tolist()
    for i, (r, ok) in enumerate(zip(frame.itertuples(index=False), passed_all)):
        where = f"{r.Annotation} {r.ConfigLabel}" if several else str(r.ConfigLabel)
        cols[1 + i % 4].badge(f"{where}: {r.Passed}/{r.Runs} passed",
                              icon=":material/check:" if ok else ":material/report:",
                              color="green" if ok else "orange")


def details(bundle: Bundle, page: str) -> None:
    """The checks and their evidence in an expander (tables keyed ``<page>-run-audit*``)."""
    frame = cached.view(badge_frame, bundle)
    if frame.empty:
        return
    with st.expander("Run audit: the checks and their evidence", icon=":material/fact_check:"):
        st.caption(esc(f"Each run is checked for {', '.join(A.CHECKS)} "
                       f"({audit_source(bundle)}); a config's badge counts the runs with no "
                       "flag. 'not checked' says what the files cannot support."))
        panels.table(frame, key=state.key(page, "run-audit"))
        details = cached.view(flagged_frame, bundle)
        if not details.empty:
            panels.table(details, key=state.key(page, "run-audit-details"))
