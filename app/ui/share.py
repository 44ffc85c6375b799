"""The shareable report's download buttons (Files page: the job; Compare page: the pair), built
only when clicked (:mod:`app.services.share_report`, :mod:`app.core.share.build`)."""

from __future__ import annotations

import streamlit as st

from app import settings
from profiling_worker.bundle.loader import Bundle
from app.core.share.build import comparison_report
from app.services.share_report import job_report_html
from app.ui import job_status, state

HELP = ("One HTML file that opens offline in any browser: every chart of the pages "
        "(interactive), their tables, the notes and the provenance{what}. Head-less: "
        "`kernel-dashboard --report {args} --out report.html`.")


def job_button(bundle: Bundle) -> None:
    """Download the job's report (charts, tables, notes, deep dive, rules, provenance), in
    the state the pages say its job is in (:func:`app.ui.job_status.as_named`)."""
    st.download_button(
        "Download the report (self-contained HTML)", key=state.key("files", "report"),
        on_click="ignore",
        data=lambda: job_report_html(job_status.as_named(bundle), settings.worker_python(),
                                     settings.worker_env()).encode("utf-8"),
        file_name=f"{bundle.job_id}-report.html", mime="text/html", icon=":material/share:",
        help=HELP.format(what=", the deep dive and the rule digest where the job has a "
                              "report", args="BUNDLE"))


def comparison_button(baseline: Bundle, candidate: Bundle, max_slowdown_pct: float,
                      metric: str | None) -> None:
    """Download the comparison's report (the gate's verdict first)."""
    st.download_button(
        "Download this comparison (self-contained HTML)", key=state.key("compare", "report"),
        on_click="ignore", mime="text/html", icon=":material/share:",
        data=lambda: comparison_report(baseline, candidate, max_slowdown_pct,
                                       metric).encode("utf-8"),
        file_name=f"compare-{candidate.job_id}-vs-{baseline.job_id}.html",
        help=HELP.format(what=" of both jobs, with the regression gate's verdict",
                         args="BASE CANDIDATE --max-slowdown PCT"))
