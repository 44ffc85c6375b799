"""NVTX ranges as Nsight Compute prints them in CSV exports and console text -> region names.

Layouts (read from files ncu 2025.3.1 wrote with ``--nvtx``; tests/fixtures/import_cases/
09-nvtx-in-csv and 14-nvtx-nested):

``thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg`` (CSV column)
    the launching thread's id, then one quoted frame per open push/pop range, outermost first:
    ``590  "<default domain>:outer:none:none:none:none:none:none"  "<default domain>:scale:..."``.
``Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg`` (CSV column)
    one quoted frame per open start/end range: ``"0:<default domain>:add_phase:none:...:none"``.
console text (``ncu --nvtx`` without ``--csv``)
    ``NVTX Push/Pop Stack for Thread 834:`` / ``NVTX Start/End Ranges:``, then the domain and
    one ``<depth or id,name>`` line per range, outermost first.

A frame ends with the six payload, colour and message fields (``PL_Type`` .. ``Msg``), so the
range name is what lies between the domain and them (it may hold ``:`` itself).

Region of a launch (:func:`region`): ``innermost`` (default) is the last start/end range, else the
innermost push/pop range -- as the report reader takes the last of a domain's push/pop then
start/end ranges; ``stack`` joins every open range, outermost first, push/pop before start/end,
with `` > ``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

PUSH_POP_PREFIX = "thread Domain:Push/Pop_Range"
START_END_PREFIX = "Id:Domain:Start/Stop_Range"
INNERMOST = "innermost"
STACK = "stack"
MODES = (INNERMOST, STACK)
STACK_SEPARATOR = " > "
_FRAME = re.compile(r'"([^"]*)"')
_TAIL_FIELDS = 6  # PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg

Ranges = tuple[str, ...]


def nvtx_columns(header: Sequence[str]) -> tuple[str | None, str | None]:
    """The push/pop and start/end column names of a CSV header (None where absent)."""
    push = next((h for h in header if h.startswith(PUSH_POP_PREFIX)), None)
    start = next((h for h in header if h.startswith(START_END_PREFIX)), None)
    return push, start


def _frame_name(frame: str, has_id: bool) -> str | None:
    """The range name of one frame (any domain: nsight-python's ranges are regions too)."""
    head = frame.rsplit(":", _TAIL_FIELDS)[0] if frame.count(":") > _TAIL_FIELDS else frame
    if has_id:
        head = head.split(":", 1)[1] if ":" in head else head
    _, sep, name = head.partition(":")
    return (name if sep else head) or None


def parse_cell(cell: object, start_end: bool) -> Ranges:
    """The open ranges of one NVTX CSV cell, outermost first (empty for an empty cell)."""
    text = str(cell or "").strip()
    if not text:
        return ()
    frames = _FRAME.findall(text) or [text]
    return tuple(n for f in frames if (n := _frame_name(f.strip(), start_end)))


def region(push_pop: Ranges, start_end: Ranges, mode: str = INNERMOST) -> str | None:
    """The region of a launch in these ranges, or None outside every range (see the module
    docstring for ``mode``).

    Raises:
        ValueError: ``mode`` is not one of :data:`MODES`.
    """
    if mode not in MODES:
        raise ValueError(f"NVTX region mode {mode!r}: use one of {', '.join(MODES)}")
    if mode == STACK:
        return STACK_SEPARATOR.join((*push_pop, *start_end)) or None
    if start_end:
        return start_end[-1]
    return push_pop[-1] if push_pop else None


def source_label(push_pop: bool, start_end: bool) -> str:
    """How regions were found, for the Import page: ``NVTX push/pop``, ``NVTX start/end``, both,
    or ``kernel names``."""
    kinds = [k for k, present in (("push/pop", push_pop), ("start/end", start_end)) if present]
    return "NVTX " + " and ".join(kinds) if kinds else "kernel names"


__all__ = ["PUSH_POP_PREFIX", "START_END_PREFIX", "INNERMOST", "STACK", "MODES",
           "STACK_SEPARATOR", "nvtx_columns", "parse_cell", "region", "source_label"]
