"""A prepared table's pandas Styler marshalled once per place, not at every script run (issue 40).

``st.dataframe`` of a Styler computes and translates the Styler and writes its display values
as Arrow bytes on every draw (``streamlit.elements.arrow.marshall_styler``): 13 ms of One
kernel's 46 ms script run on the 2-core machine (its table of every metric; AppTest reruns,
2026-12-07), on every click and rerun of a page with a styled table. A Styler that
:func:`app.ui.panels.prepare` made has fixed data and formats and is kept as is
(``panels._prepared``); :func:`mark` gives it a memo. Its first draw at a place (Streamlit's
``default_uuid``, a hash of the element's delta path) stores the ``styler`` part of the proto
that Streamlit wrote (at any place when the Styler has its own uuid, as pandas gives every
one), and a later draw copies that part instead: the same bytes (uuid, caption, CSS, display
values) reach the browser. :func:`warm` marshals one ahead (the prefetch). A copy of a
marked Styler made by :func:`copy_of` (what ``panels.table`` draws) shares its memo. Any other
Styler is marshalled as before; a Streamlit without ``arrow.marshall_styler`` gets the stock
behaviour (``install`` does nothing).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from typing import Any

#: The attribute of a marked Styler: default uuid -> the ``ArrowData.styler`` message written.
MEMO = "_kprof_marshalled"
_INSTALLED = "_kprof_styler_memo"  # set on the wrapper: install once


def mark(styler: Any) -> Any:
    """Give ``styler`` (a pandas Styler that nothing changes later) a memo; returns it."""
    setattr(styler, MEMO, {})
    return styler


def copy_of(styler: Any) -> Any:
    """``copy.copy(styler)`` that shares a marked Styler's memo (a Styler's own ``__copy__``
    copies its styling attributes only)."""
    duplicate = copy.copy(styler)
    memo = getattr(styler, MEMO, None)
    if memo is not None:
        setattr(duplicate, MEMO, memo)
    return duplicate


def _place(styler: Any, default_uuid: str) -> str | None:
    """The memo's key: None for a Styler with its own uuid (pandas gives every Styler one),
    whose proto Streamlit writes the same at any place; else ``default_uuid``."""
    return None if getattr(styler, "uuid", None) else default_uuid


def warm(styler: Any) -> None:
    """Marshal the marked ``styler`` now, through the installed wrapper, so that its first
    draw copies the result (a Styler with its own uuid: at any place). Does nothing for an
    unmarked Styler, one marshalled already, or where :func:`install` did not wrap."""
    from streamlit.elements import arrow
    from streamlit.proto.ArrowData_pb2 import ArrowData

    memo = getattr(styler, MEMO, None)
    marshall = getattr(arrow, "marshall_styler", None)
    if memo is None or not getattr(marshall, _INSTALLED, False) or _place(styler, "") in memo:
        return
    assert marshall is not None
    marshall(ArrowData(), copy_of(styler), "")


def memoised(original: Callable[[Any, Any, str], None]) -> Callable[[Any, Any, str], None]:
    """``original`` (Streamlit's ``marshall_styler(proto, styler, default_uuid)``), which a
    marked Styler runs once per ``default_uuid``; later calls copy the ``proto.styler`` that
    the first wrote. Errors (too many cells) are raised as before, and nothing is kept."""

    @functools.wraps(original)
    def marshall(proto: Any, styler: Any, default_uuid: str) -> None:
        memo = getattr(styler, MEMO, None)
        if memo is None:
            original(proto, styler, default_uuid)
            return
        place = _place(styler, default_uuid)
        done = memo.get(place)
        if done is None:
            original(proto, styler, default_uuid)
            done = type(proto.styler)()
            done.CopyFrom(proto.styler)
            memo[place] = done  # one dict store: atomic for the sessions' threads
        else:
            proto.styler.CopyFrom(done)

    setattr(marshall, _INSTALLED, True)
    return marshall


def install() -> None:
    """Wrap ``streamlit.elements.arrow.marshall_styler`` (the name ``st.dataframe`` calls) with
    :func:`memoised`, once per process."""
    from streamlit.elements import arrow

    current = getattr(arrow, "marshall_styler", None)
    if current is None or getattr(current, _INSTALLED, False):
        return
    setattr(arrow, "marshall_styler", memoised(current))  # the name arrow's st.dataframe calls
