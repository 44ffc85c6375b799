"""The time-unit control of the Size sweep and Stability pages: ns / µs / ms where the values
drawn are a time, and in its place the values' own unit where they are not (an imported derived
metric such as nsight-python's ``compute_tflops``, an ncu counter, TFLOP/s): a time-unit choice
shown there, even disabled, read as the unit of a quantity that is no time."""

from __future__ import annotations

from typing import Any

import streamlit as st

from profiling_worker.bundle.number_text import shown_unit

from app.core import derived
from app.core.markdown import esc
from app.ui import state
from app.ui.controls_later import Later

DEFAULT = derived.DEFAULT_TIME_UNIT
LABEL = "Time unit"


def kept_key(page: str) -> str:
    """Session key that keeps the page's last time unit while the control is hidden (Streamlit
    drops a widget's state on a run that does not draw it)."""
    return state.key(page, "time-unit-kept")


def unit_note(unit: str) -> str:
    """What stands in place of the control: ``Unit: TFLOP/s`` or that the values have none;
    a unit the tables give in Hz as the values are shown, in MHz
    (:func:`~profiling_worker.bundle.number_text.shown_unit`)."""
    shown = shown_unit(unit)[0]
    return f"Unit: {esc(shown)}" if shown else "Unit: none (the file gives this metric no unit)"


def control(where: Any, page: str, applies: bool, unit: str = "") -> str:
    """The time unit of ``page`` (``ns``, ``µs``, ``ms``).

    Args:
        where: the column (or ``st``) to draw in.
        page: the page's widget prefix (the widget key is ``<page>-time-unit``).
        applies: the values drawn are a time; else no control, a caption with ``unit`` instead.
        unit: the values' own unit when they are not a time ("" when they have none).

    Returns:
        The chosen unit; while hidden, the last one chosen (so a detour through a metric that
        is not a time keeps it).
    """
    if not applies:
        where.caption(unit_note(unit), help="The time-unit choice (ns, µs, ms) applies to "
                      "duration metrics only; these values are shown in their own unit.")
        return kept(page)
    chosen = where.segmented_control(LABEL, list(derived.TIME_UNITS), default=kept(page),
                                     key=state.key(page, "time-unit")) or DEFAULT
    st.session_state[kept_key(page)] = chosen
    return str(chosen)


def kept(page: str) -> str:
    """The last time unit chosen on ``page`` (``DEFAULT`` before any), without drawing."""
    last = st.session_state.get(kept_key(page), DEFAULT)
    return str(last if last in derived.TIME_UNITS else DEFAULT)


def ahead(later: Later, page: str) -> str:
    """The unit :func:`control` will return where the values are a time, read before it is
    drawn (:meth:`app.ui.controls_later.Later.value`)."""
    return str(later.value(state.key(page, "time-unit"), kept(page)) or DEFAULT)
