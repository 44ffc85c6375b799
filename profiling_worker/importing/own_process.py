"""Run one step of an import in a forked child, so that what it loaded is returned when it ends.

``ncu_report`` keeps every launch it has read until its process exits (``del`` and glibc's
``malloc_trim`` return none of it, docs/performance.md): reports read one after another in one
process add up. A step run here costs its own peak only.
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def _answer(conn: Any, step: Callable[[], Any]) -> None:
    conn.send(step())
    conn.close()


def forked(step: Callable[[], T], died: Callable[[int | None], T]) -> T:
    """``step()`` run in a forked child (its result pickled back), or here where fork is not
    available. ``died(exit code)`` is the result when the child ends without one (killed,
    e.g. by the out-of-memory killer). ``step`` must catch what it means to report."""
    if "fork" not in mp.get_all_start_methods():
        return step()
    ctx = mp.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_answer, args=(send, step), daemon=True)
    child.start()
    send.close()
    try:
        result: T = receive.recv()
    except EOFError:
        child.join()
        return died(child.exitcode)
    child.join()
    return result


__all__ = ["forked"]
