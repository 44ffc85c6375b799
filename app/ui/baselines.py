"""The deep dive's baselines: pin a launch (of any job or imported report) and see every section
metric of the launch shown against each pinned one, coloured by direction and by whether the
runs can tell the two apart (:mod:`app.core.views.baselines`), and the two rule results side
by side. Pins live in the session and the URL (``?baseline=<job>:<launch id>``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.schema import interval_words as W
from app.core import derived, numbers
from app.core.markdown import code, esc
from app.core.views import baselines as B
from app.core.views import deep_dive as D
from app.ui import cached, panels, state

PAGE = "deep-dive"  # widget keys of this page: state.key(PAGE, field)

#: Cell colours of the Change column: (told apart, else) for each change.
_COLOURS = {B.BETTER: ("rgba(118,185,0,0.55)", "rgba(118,185,0,0.18)"),
            B.WORSE: ("rgba(214,39,40,0.55)", "rgba(214,39,40,0.18)"),
            B.HIGHER: ("rgba(31,119,180,0.50)", "rgba(31,119,180,0.16)"),
            B.LOWER: ("rgba(255,127,14,0.50)", "rgba(255,127,14,0.16)")}
LEGEND = ("**Change** is green where this launch is better and red where it is worse, by "
          "Nsight Compute's reading of the metric (*Higher is* better or worse); where that is "
          "unknown (bytes, counts, launch configuration) it is coloured by sign only: blue higher, "
          "orange lower. Strong colour: the runs tell the two apart (the difference of their "
          "means lies outside its Welch CI95); pale: they do not, or no spread is known (one "
          "launch on a side: *Told apart* says which). *Difference* compares the two launches; "
          "*Mean difference* and *CI95 ±* are over each side's runs of its region × config.")


def pin_button(job_id: str, launch_id: int) -> None:
    """The "Pin as baseline" button of the shown launch (key ``deep-dive-pin``)."""
    pins = state.baselines()
    mine = B.pin(job_id, launch_id)
    if st.button("Pin this launch as a baseline", key=state.key(PAGE, "pin"), disabled=mine in pins,
                 icon=":material/push_pin:",
                 help="Keep it to compare other launches (of any job) against; several at once."):
        state.set_baselines([*pins, mine])
        st.rerun()


#: The comparison's columns in each row's Unit (:func:`app.core.views.baselines.compare`).
_IN_UNIT = (B.BASELINE, B.THIS, B.DIFF, B.MEAN_DIFF, B.CI95)


def _style(frame: pd.DataFrame) -> tuple[Any, dict[str, Any]]:
    """The comparison with its Change cells coloured (see :data:`LEGEND`), and column widths
    that fit each number column's longest shown value (a narrow column hid a minus sign)."""
    def colour(row: pd.Series) -> list[str]:
        strong, pale = _COLOURS.get(str(row[B.CHANGE]), ("", ""))
        fill = strong if row[B.TOLD] == B.YES else pale
        return [f"background-color: {fill}" if c == B.CHANGE and fill else "" for c in row.index]

    # each unit's values with that unit's decimals, the other numbers with their column's
    # (app.core.numbers: 4 significant digits each mixed decimals in a column); the values
    # stay numbers, so a column sorts by value
    display = numbers.column_display(frame, _IN_UNIT, min_units=1)
    cells = [*(numbers.CellFormat(c, None, f) for c, f in display.formats.items()),
             *display.cells]
    widths = {c: {"width": panels.number_width(int(max([len(c), *text.str.len()]))),
                  "alignment": "right"}
              for c, text in numbers.as_text(frame, cells).items()}
    return panels.styled(frame, cells).apply(colour, axis=1), widths


def _baseline_data(job_id: str) -> tuple[Any, Mapping[str, Any] | None, str]:
    """(bundle, deep-dive dict or None, why not) of a pinned job."""
    bundle = cached.bundle_for(job_id)
    if bundle is None:
        return None, None, f"job {code(job_id)} is not in the result store"
    answer = cached.report_answer("deepdive", bundle)
    if not answer.ok:
        return bundle, None, esc(answer.message)
    return bundle, answer.data(), ""


def _one(pin_text: str, index: int, job_id: str, data: Mapping[str, Any],
         launch_id: int) -> None:
    parsed = B.parse_pin(pin_text)
    if st.button("Unpin", key=state.key(PAGE, f"unpin-{index}"), icon=":material/close:"):
        state.set_baselines([p for p in state.baselines() if p != pin_text])
        st.rerun()
    if parsed is None:
        st.warning(f"{esc(pin_text)} is not a baseline (`<job>:<launch id>`).")
        return
    bundle, base, why = _baseline_data(parsed[0])
    if base is None:
        st.warning(f"Baseline {esc(pin_text)} cannot be read: {why}.", icon=":material/warning:")
        return
    labels = D.launch_labels(base, D.config_labeler(bundle.spec.configs if bundle.spec else ()))
    if parsed[1] not in labels:
        st.warning(f"Job {code(parsed[0])} has no launch {parsed[1]}.")
        return
    st.caption(f"Baseline: job {code(parsed[0])}, launch {esc(labels[parsed[1]])}.")
    one = B.same_runs(parsed[0], base, parsed[1], job_id, data, launch_id)
    frame = B.compare(B.launch_metrics(base, parsed[1]), B.launch_metrics(data, launch_id), one)
    if frame.empty:
        st.info("Neither launch has section metrics to compare.")
        return
    counts = frame[B.TOLD].value_counts()
    if one:
        st.info("Both launches are runs of the same measurement (this job's region × config × "
                "launch × kernel): their runs are the same launches, so they cannot tell the two "
                "apart. The Difference is between two runs; pin a launch of another job or "
                "config to compare measurements.", icon=":material/info:")
    else:
        st.caption(f"{counted(len(frame), 'metric')}: told apart {counts.get(B.YES, 0)}, "
                   "not told apart "
                   f"{counts.get(B.NO, 0)}, no spread known {counts.get(B.NO_SPREAD, 0)}, on "
                   f"one side only {counts.get(B.ONE_SIDE, 0)}.")
    # each row in the unit the other pages show it in (a clock in MHz, a time in µs); the CSV
    # keeps the stored units (each row's Unit) and full precision
    styled, widths = _style(derived.rows_in_shown_units(frame, columns=_IN_UNIT))
    st.dataframe(styled, key=state.key(PAGE, f"baseline-{index}-table"), hide_index=True,
                 width="stretch", column_config=widths)
    panels.download_csv(frame, key=state.key(PAGE, f"baseline-{index}-csv"),
                        filename=f"baseline-{parsed[0]}-{parsed[1]}.csv")
    st.caption("Rule results side by side")
    panels.table(B.rules_side_by_side(base, parsed[1], data, launch_id),
                 key=state.key(PAGE, f"baseline-{index}-rules"))


def show(job_id: str, data: Mapping[str, Any], launch_id: int) -> None:
    """The Baselines section for the shown launch: one tab per pinned baseline."""
    st.subheader("Baselines")
    pin_button(job_id, launch_id)
    pins = state.baselines()
    if not pins:
        st.caption("No baseline pinned: pin a launch here (then pick another launch or job) to "
                   "see every section metric against it, as Nsight Compute's baselines do.")
        return
    st.caption(f"{LEGEND} {W.line(W.DIFFERENCE)}")
    for index, (tab, pin_text) in enumerate(zip(st.tabs([f"vs {p}" for p in pins]), pins)):
        with tab, st.container(key=state.key(PAGE, f"baseline-{index}")):
            _one(pin_text, index, job_id, data, launch_id)
