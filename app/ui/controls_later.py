"""A page's controls drawn after its chart, into a container placed above it (issue 40).

The browser renders a page's elements in the order their messages come. The controls of a
chart page (selectboxes, segmented controls, a toggle) stand above its chart; drawn first, they
were rendered before the chart on every click to the page (docs/performance.md, "A click,
issue 40's pages"). A page that uses :class:`Later` places :attr:`Later.slot` where its controls
stand, reads their values with :meth:`Later.value` (the session's value, else the page's
default), draws its chart with them, then draws the widgets into the slot and calls
:meth:`Later.confirm`: the page looks the same once drawn, but the chart's message goes first.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from app.ui import state

#: Session key: the last run ended in :meth:`Later.confirm`'s rerun.
RERAN = "controls-later-reran"


class Later:
    """The controls of one page's run, drawn after the chart into :attr:`slot`.

    Create it where the controls stand on the page (it places the container there).
    """

    def __init__(self) -> None:
        self.slot = st.container()
        #: widget key -> the value the chart was drawn with
        self._read: dict[str, Any] = {}

    def value(self, widget_key: str, default: Any) -> Any:
        """What the widget ``widget_key`` will return once drawn, before it is: its value in
        the session (kept from the page's last run, or set by the user's change that started
        this run), else ``default``, which must be the default the widget is drawn with.

        A selectbox's session value is written first by :func:`app.ui.state.keep_if_offered`,
        which must run before this for it."""
        read = state.widget_value(widget_key, default)
        self._read[widget_key] = read
        return read

    def confirm(self) -> None:
        """Call once every widget read with :meth:`value` is drawn: where one returned another
        value than the chart was drawn with, run the page again (it then reads the widget's
        value) rather than leave a chart that does not match its controls. At most once in a
        row: a widget that gives back another form of the value read (a normalised number)
        would otherwise rerun the page without end."""
        stale = any(key in st.session_state and st.session_state[key] != read
                    for key, read in self._read.items())
        if stale and not st.session_state.get(RERAN):
            st.session_state[RERAN] = True
            st.rerun()
        st.session_state[RERAN] = False
