"""What the pages say about an aggregated table the loader completed
(:mod:`profiling_worker.bundle.stats.aggregated_repair`): which columns were recomputed, which are
missing (recorded as :class:`~profiling_worker.bundle.table_problems.TableProblem`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from profiling_worker.bundle.stats.aggregated_repair import Completed
from profiling_worker.bundle.schema import columns as C, intervals
from profiling_worker.bundle.table_problems import Fault, TableProblem
from profiling_worker.bundle.number_text import counted


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


def restated_sentences(written: pd.DataFrame, shown: pd.DataFrame) -> tuple[str, ...]:
    """What :func:`profiling_worker.bundle.schema.intervals.restate` changed in a bundle written
    before the worker cut CI95 lower bounds at 0 (issue 34), said as where the values come from
    (a bundled example greeted its user with a warning about itself, issue 37): the metrics,
    how the page shows their bounds, and the count of lower bounds below 0 the files hold.

    Args:
        written, shown: the aggregated table as the files hold it and as restated (same rows).
    """
    cut = _cut(written, shown)
    if not cut.any():
        return ()
    was = written[C.CI95_LOWER].to_numpy(dtype="float64")
    metrics = cut_metrics(written, shown)
    below = int(cut.sum())
    return (f"CI95 lower bounds of {', '.join(metrics)} are shown cut at 0, as the worker writes "
            f"them ({intervals.CI_METHOD}): this job's tables/{C.TABLE_AGGREGATED}.* hold "
            f"{counted(below, 'CI95_Lower value')} below 0 as recorded (lowest "
            f"{float(was[cut].min()):.4g}), shown here as 0, or as no interval where all of it "
            "lay below 0.",)


def cut_metrics(written: pd.DataFrame, shown: pd.DataFrame) -> tuple[str, ...]:
    """The metrics (``Metric`` values, sorted) whose CI95 lower bounds
    :func:`restated_sentences` counts as shown cut at 0: where its note applies."""
    cut = _cut(written, shown)
    if not cut.any() or C.METRIC not in written:
        return ()
    return tuple(sorted(written.loc[cut, C.METRIC].astype(str).unique()))


def _cut(written: pd.DataFrame, shown: pd.DataFrame) -> np.ndarray:
    """Per row: a CI95 lower bound below 0 in the files, shown as 0 or as no interval (NaN: all
    of it below 0, :func:`~profiling_worker.bundle.schema.intervals.cut_at_zero`; all False when
    the tables do not line up)."""
    if C.CI95_LOWER not in written or C.CI95_LOWER not in shown or len(written) != len(shown):
        return np.zeros(len(written), dtype=bool)
    was = written[C.CI95_LOWER].to_numpy(dtype="float64")
    now = shown[C.CI95_LOWER].to_numpy(dtype="float64")
    cut: np.ndarray = (was < 0) & ((now == 0) | np.isnan(now))
    return cut


def empty_problems(done: Completed, file: str) -> list[TableProblem]:
    """One record per column nothing could give (the bundle's ``table_problems``): the key
    columns of a table left out, else each statistics column left empty; ``file``: the file
    the aggregated table was read from (``tables/aggregated.parquet``)."""
    where = f"tables/{C.TABLE_AGGREGATED}"
    if done.keys and not done.rebuilt:
        return [TableProblem(Fault.NO_KEYS, C.TABLE_AGGREGATED, file,
                             f"{where}: key column(s) {', '.join(done.keys)} missing and no "
                             "runs table to rebuild it from, so none of its values are drawn",
                             done.keys)]
    return [TableProblem(Fault.NO_COLUMN, C.TABLE_AGGREGATED, file,
                         f"{where}: column {column} is missing and neither the runs table nor "
                         "the other columns give it, so values that need it are not drawn",
                         (column,)) for column in done.empty]
