"""The run audit's badges: one per annotation x config, green when every run passed, orange
when some did not; the evidence in an expander (:mod:`app.core.views.run_audit`)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from profiling_worker.bundle.number_text import counted

from profiling_worker.bundle.loader import Bundle
from app.core.derived import DEFAULT_TIME_UNIT
from app.core.markdown import esc
from app.core.views.run_audit import (PAGE_EVIDENCE, audit_source, badge_frame, badge_text,
                                      chart_audit_notes, drawn_badges, failed_pairs_text,
                                      failed_rows, flagged_frame, flags_said, points_of,
                                      SLOW_NAMED, SLOW_TABLE, slow_configs_frame, slow_configs_text,
                                      unread_note)
from app.ui import cached, panels, state
from profiling_worker.bundle.schema import columns as C, run_audit as A


#: The most badges drawn in the page's row; more are folded under :func:`folded_label`.
BADGES_IN_ROW = 3


def folded_label(passed_all: list[bool]) -> str:
    """The label of the fold that holds more than :data:`BADGES_IN_ROW` badges: how many
    annotation x config pairs failed the run audit, of how many (``passed_all``: one bool per
    badge, True when every run of its pair passed)."""
    failed = passed_all.count(False)
    pairs = counted(len(passed_all), "annotation × config pair")
    return f"{failed:,} of {pairs} failed" if failed else f"All {pairs} passed"


def badges(bundle: Bundle, page: str, time_unit: str = DEFAULT_TIME_UNIT) -> None:
    """The badges, near the top of a page (nothing for a job without runs); :func:`details`
    gives the evidence further down. ``time_unit``: the page's, for the evidence's durations."""
    unread = unread_note(bundle)
    if unread is not None:  # before the badges, and where a job is left without any
        st.warning(f"Run audit: {esc(unread)}", icon=":material/broken_image:")
    frame = cached.view(badge_frame, bundle, time_unit)
    if frame.empty:
        return
    several = frame[C.ANNOTATION].nunique() > 1
    drawn, summary = drawn_badges(frame)  # a big job's failed badges, the rest counted
    said = flags_said(frame["Flags"])  # a badge names a check; here is what it means
    if not drawn.empty:  # a big job that passed: its summary alone, no empty row
        row = st.container(horizontal=True, vertical_alignment="center")  # wraps: a badge
        row.caption("Run audit")  # that names its failed checks is never cut to a column
        passed_all = (drawn["Passed"] == drawn[C.RUNS]).tolist()
        # more than a row's badges: folded under one line that counts them, in the same row
        # (a contended job's 9 badges took 5 rows over the Stability chart at 1000x700, its
        # top at y 962; issue 37)
        into = (row.popover(folded_label(passed_all), icon=":material/rule:")
                if len(passed_all) > BADGES_IN_ROW else row)
        for r, ok in zip(drawn.to_dict("records"), passed_all):
            label = str(r[C.CONFIG_LABEL])
            where = f"{r[C.ANNOTATION]} {label}" if several else label
            into.badge(badge_text(where, int(r["Passed"]), int(r[C.RUNS]), str(r["Flags"])),
                       color="green" if ok else "orange")
        if said:  # one click away, in the badges' row: the two paragraphs under it pushed the
            # Stability chart below the fold at 1000x700 (issue 37); a badge's help= drew its
            # label twice (a second, hidden badge)
            with row.popover("What the failed checks say", icon=":material/help:"):
                st.caption(f"What a failed check says. {esc(said)}. Each run's evidence: “Run "
                           "audit: the checks and their evidence”, further down.")
                failed = failed_rows(drawn)  # those drawn: a big job's others are counted above
                st.caption("The failed badges' evidence (each check's first flagged run): "
                           f"{esc(failed_pairs_text(bundle, failed))}.")
    if summary is not None:
        st.caption(esc(summary))
    if slow := cached.view(slow_configs_text, bundle):  # no failure: a config's steady clock
        st.caption(esc(slow))


def any_audit(bundle: Bundle) -> bool:
    """True when the job has runs the audit judged (a queued or cancelled job has none)."""
    return not cached.view(badge_frame, bundle).empty


def details(bundle: Bundle, page: str, time_unit: str = DEFAULT_TIME_UNIT) -> None:
    """The checks and their evidence in an expander drawn once opened (key
    ``<page>-audit-open``, :func:`app.ui.panels.fold`; tables keyed ``<page>-run-audit*``);
    the evidence's durations in ``time_unit``, the page's."""
    frame = cached.view(badge_frame, bundle, time_unit)
    if frame.empty:
        return
    box = panels.fold("Run audit: the checks and their evidence", state.key(page, "audit-open"),
                      icon=":material/fact_check:")
    if box is None:
        return
    with box:
        st.caption(esc(f"Each run is checked for {', '.join(A.CHECKS)} "
                       f"({audit_source(bundle)}); a config's badge counts the runs with no "
                       "flag. 'not checked' says what the files cannot support."))
        panels.table_with_csv(frame, key=state.key(page, "run-audit"),
                              filename=f"{bundle.job_id}-run-audit.csv")
        details = cached.view(flagged_frame, bundle, time_unit)
        if not details.empty:
            panels.table(details, key=state.key(page, "run-audit-details"))
        slow = cached.view(slow_configs_frame, bundle)
        if len(slow) > SLOW_NAMED:  # the caption above counts them: every one is here
            st.caption(SLOW_TABLE)
            panels.table_with_csv(slow, key=state.key(page, "slow-configs"),
                                  filename=f"{bundle.job_id}-slow-configs.csv")


def chart_note(bundle: Bundle, points: pd.DataFrame) -> str | None:
    """The caption under a chart whose points (or bars) are the annotation x config rows
    ``points`` (those drawn), as every such page says it: the points marked × named, or that
    the job's audit is not read (:func:`~app.core.views.run_audit.chart_audit_notes`);
    markdown, escaped, for :func:`app.ui.panels.chart_with_table`'s ``note``; None when there
    is nothing to say."""
    said = cached.view(chart_audit_notes, bundle, points_of(points), PAGE_EVIDENCE)
    return esc(" ".join(said)) if said else None
