"""What a reader can do about a job that failed, by its error's kind: run it again only where a
second run of the same spec can end otherwise (issue 37: a spec refused for an unknown kernel
or by the memory check read "Run it again", and Files offered to replicate it).

Pure: reads the error dict a failed job records (kind, message, hint:
:class:`profiling_worker.bundle.errors.ErrorFields`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from profiling_worker.bundle import errors as E

#: Error kinds whose job ends the same way when its spec runs again unchanged: the spec (or the
#: memory check) refused it, the backend cannot run here, Nsight Compute may not read the
#: counters, a kernel body raised (its code, or sizes that do not fit). Every other kind
#: (cancelled, interrupted, disk full, a thermal timeout, an internal fault) may pass next time.
SAME_AGAIN_KINDS = frozenset({E.SpecRejected.kind, E.BackendUnavailable.kind,
                              E.CounterPermission.kind, E.KernelFailed.kind})
#: The advice where a second run can help (or nothing says it cannot).
RUN_AGAIN = "Run it again."


def rerun_helps(error: Mapping[str, Any] | None) -> bool:
    """False when ``error`` (a failed job's recorded error, None when it has none) is of a kind
    that a second run of the same spec meets again (:data:`SAME_AGAIN_KINDS`)."""
    return not error or error.get("kind") not in SAME_AGAIN_KINDS


def named_fields(message: str) -> list[str]:
    """The spec fields a spec_invalid message names: each ``; ``-joined part's text before its
    first ``: `` (``configs[1]: kernel matmul at n=65536 moves ...`` names ``configs[1]``),
    first-seen order; none when a part names no field (a space in what precedes ``: ``)."""
    fields: list[str] = []
    for part in message.split("; "):
        field, sep, _rest = part.partition(": ")
        if sep and field and " " not in field and field not in fields:
            fields.append(field)
    return fields


def next_step(error: Mapping[str, Any] | None) -> str:
    """The sentence that says what to do about a failed job: :data:`RUN_AGAIN` where a rerun
    can help, else that it would end the same way, with the fields the error names and its
    recorded hint (the fix), e.g. "Running it again unchanged would fail the same way
    (configs[1]): fix the named fields and submit again."."""
    if rerun_helps(error):
        return RUN_AGAIN
    assert error is not None  # rerun_helps is True without one
    fields = (named_fields(str(error.get("message", "")))
              if error.get("kind") == E.SpecRejected.kind else [])
    where = f" ({', '.join(fields)})" if fields else ""
    hint = str(error.get("hint") or "").strip().rstrip(".") or "fix what its error names"
    return f"Running it again unchanged would fail the same way{where}: {hint}."
