"""Show a bundle's plausibility notes (``profiling_worker.bundle.schema.plausibility``) on the pages
that draw the values they are about."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd
import streamlit as st

from profiling_worker.bundle.loader import Bundle
from app.core import numbers
from app.core.markdown import esc, esc_spans
from app.core.share.analyses import few_runs_text
from app.ui import panels, state
from profiling_worker.bundle.schema import plausibility as P

#: Notes shown in the warning box itself; the rest are in the table under it.
SHOWN = 4


#: Checks every page shows (for the metrics it draws); intervals and roofs only where drawn.
DEFAULT_CHECKS = (P.PERCENT_ABOVE_100, P.CLOCK_ABOVE_MAX, P.NEGATIVE_VALUE, P.RUNS_MISSING,
                  P.KERNELS_VARY, P.UNATTRIBUTED, P.IMPORT, P.SLOW_GPU)


def relevant(bundle: Bundle, metrics: Iterable[str] = (),
             extra_checks: Iterable[str] = ()) -> list[P.Note]:
    """The notes about values a page draws: of :data:`DEFAULT_CHECKS` or ``extra_checks``
    (``interval_below_zero`` where the page shows the aggregated table's CI95, ``above_roof``
    where it draws bandwidth or FLOP/s), and either on one of ``metrics`` or on no metric."""
    metrics, checks = set(metrics), {*DEFAULT_CHECKS, *extra_checks}
    return [n for n in bundle.notes if n.get("check") in checks
            and (n.get("metric") is None or n.get("metric") in metrics)]


def show(bundle: Bundle, page: str, metrics: Iterable[str] = (),
         extra_checks: Iterable[str] = ()) -> None:
    """A warning box listing the notes :func:`relevant` picks (nothing when there are none);
    with more than :data:`SHOWN`, all of them in a table (key ``<page>-notes``)."""
    notes = relevant(bundle, metrics, extra_checks)
    if not notes:
        return
    lines = "\n".join(f"- {esc_spans(n.get('message', ''))}" for n in notes[:SHOWN])  # `ncu`
    more = f"\n\n{len(notes) - SHOWN} more in the table below." if len(notes) > SHOWN else ""
    icon = (":material/warning:" if any(n.get("severity") == P.WARNING for n in notes)
            else ":material/info:")
    st.warning(f"**Plausibility check: {numbers.counted(len(notes), 'note')} on the values "
               f"here.**\n\n{lines}{more}",
               icon=icon)
    if len(notes) > SHOWN:
        frame = pd.DataFrame(notes, columns=["severity", "check", "annotation", "config",
                                             "metric", "message"])
        panels.table(frame, key=state.key(page, "notes"))


def few_runs(frame: pd.DataFrame) -> None:
    """Say :data:`~profiling_worker.bundle.schema.intervals.ONE_RUN_NOTE` when rows of ``frame`` (an
    aggregated-style frame with NumRuns) have fewer than ``intervals.MIN_RUNS`` runs: their
    StdDev, CI95 and relative std dev are empty (undefined with n - 1 = 0), not 0; and
    ``intervals.CONSTANT_NOTE`` when rows read one value in every run (:func:`few_runs_text`)."""
    text = few_runs_text(frame)
    if text:
        st.info(text, icon=":material/info:")


def auto_runs(bundle: Bundle, page: str) -> None:
    """For a job of runs "auto": the stopping rule's note (:func:`app.core.auto_runs.
    auto_runs_note`; a warning when a config missed its target) and its per-config table in an
    expander (key ``<page>-auto-runs``). Nothing for a job of fixed runs."""
    from app.core.auto_runs import MET, auto_runs_frame, auto_runs_note

    text, frame = auto_runs_note(bundle.manifest), auto_runs_frame(bundle.manifest)
    if text is None or frame is None:
        return
    text += f" The rule ran on the job's durations: {bundle.measurement}."
    if frame[MET].all():
        st.info(esc(text), icon=":material/info:")
    else:
        st.warning(esc(text), icon=":material/warning:")
    if (box := panels.fold("Runs per config (runs \"auto\")",
                           state.key(page, "auto-runs-open"))) is not None:
        panels.table(frame, key=state.key(page, "auto-runs"), where=box)
