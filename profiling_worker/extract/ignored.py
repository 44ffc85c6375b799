"""Leave the launches of ignored kernels (spec ``ignore_kernels``) out of a backend's result.

Applied to every backend's per-launch table before the runs and aggregated tables are computed,
so no value includes an ignored launch; the launches move to the ``unattributed`` table with
:data:`~profiling_worker.bundle.schema.kernel_filter.IGNORED_REASON` (listed on the Kernels page).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pandas as pd

from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.writer import table_columns
from profiling_worker.extract.collection import Collection
from profiling_worker.bundle.errors import ProfilingFailed
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.kernel_filter import FIELD, IGNORED_REASON, matching_entry

_LAUNCH_KEYS = [C.ANNOTATION, C.CONFIG, C.RUN, C.LAUNCH, C.KERNEL]


def ignored_summary(ignored: pd.DataFrame, entries: Sequence[str]) -> list[dict[str, Any]]:
    """Per entry: the kernel names it matched and their launch count (for the manifest)."""
    launches = ignored.drop_duplicates([k for k in _LAUNCH_KEYS if k in ignored])
    out = []
    for entry in entries:
        hit = launches[launches["_entry"] == entry]
        out.append({"entry": entry, "kernels": sorted(set(hit[C.KERNEL])), "launches": len(hit)})
    return out


def leave_out_ignored(result: Collection, entries: Sequence[str]) -> Collection:
    """``result`` without the launches whose kernel matches one of ``entries``.

    Returns:
        A new Collection: launches kept, ignored launches appended to ``unattributed`` (Reason
        :data:`IGNORED_REASON`, Config kept), one warning naming what was left out, and
        ``backend_info["ignored_kernels"]`` = :func:`ignored_summary` (the manifest's record).
        ``result`` itself when ``entries`` is empty.

    Raises:
        ProfilingFailed: the entries match every launch (nothing would be left to show).
    """
    if not entries:
        return result
    launches = result.launches
    entry = launches[C.KERNEL].astype(str).map(lambda k: matching_entry(k, entries))
    hit = entry.notna()
    ignored = launches[hit].assign(_entry=entry[hit])
    summary = ignored_summary(ignored, entries)
    if hit.all():
        raise ProfilingFailed(f"{FIELD} matches every launch of the job "
                              f"({', '.join(sorted(set(launches[C.KERNEL])))})",
                              f"remove or narrow the {FIELD} entries")
    moved = ignored.assign(**{C.REASON: IGNORED_REASON}).reindex(
        columns=table_columns(C.TABLE_UNATTRIBUTED))
    frames = [f for f in (result.unattributed, moved) if f is not None and not f.empty]
    counts = "; ".join(f"{s['entry']}: {s['launches']}" for s in summary)
    total = sum(s["launches"] for s in summary)
    warning = (f"{counted(total, 'launch', 'launches')} of kernels matching {FIELD} "
                f"{'was' if total == 1 else 'were'} left out of every value "
               f"({counts}); the Kernels page lists them") if total else \
        f"{FIELD} matched no launch ({', '.join(entries)}): every launch is in the values"
    return dataclasses.replace(
        result, launches=launches[~hit].reset_index(drop=True),
        warnings=[*result.warnings, warning],
        backend_info={**result.backend_info, "ignored_kernels": summary},
        unattributed=pd.concat(frames, ignore_index=True) if frames else None)
