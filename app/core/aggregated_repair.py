"""What the pages say about an aggregated table the loader completed
(:mod:`profiling_worker.extract.aggregated_repair`): which columns were recomputed, which are
missing."""

from __future__ import annotations

from profiling_worker.extract.aggregated_repair import Completed
from profiling_worker.schema import columns as C, intervals


def recomputed_sentences(done: Completed) -> tuple[str, ...]:
    """One sentence per way a missing column was filled, naming the columns (for the pages)."""
    out = []
    if done.rebuilt:
        out.append(f"The aggregated table lacks key column(s) {', '.join(done.keys)}: "
                   "rebuilt from the runs table (the worker's method).")
    if done.recomputed:
        out.append(f"The aggregated table lacks column(s) {', '.join(done.recomputed)}: "
                   "recomputed from the runs table (the worker's method).")
    if done.derived:
        out.append(f"The aggregated table lacks column(s) {', '.join(done.derived)}: "
                   "recomputed from its other columns by the worker's formulas (CI95: "
                   f"{intervals.CI_METHOD}).")
    return tuple(out)


def empty_sentences(done: Completed) -> list[str]:
    """One problem per column nothing could give (the bundle's ``problems``)."""
    lost = [f"tables/{C.TABLE_AGGREGATED}: key column(s) {', '.join(done.keys)} missing and no "
            "runs table to rebuild it from, so none of its values are drawn"] \
        if done.keys and not done.rebuilt else []
    return lost + [f"tables/{C.TABLE_AGGREGATED}: column {column} is missing and neither the "
                   "runs table nor the other columns give it, so values that need it are not "
                   "drawn" for column in done.empty]
