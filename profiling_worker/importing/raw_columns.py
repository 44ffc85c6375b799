"""Which columns of a per-run nsight-python table (``profiled_data``) are config parameters and
which are nsight-python 1.1 info-collector values, when no ``processed_data`` file beside it
names the parameters.

Decided by the columns' names and nsight-python's version (see
:mod:`~profiling_worker.importing.nsight_columns`), never by position alone:

* nsight-python's own columns (:data:`~profiling_worker.importing.nsight_columns.RAW_FIXED`)
  are known by name, wherever they are (a re-saved file may reorder them);
* files without ``Unit`` (0.9.x) predate collectors: every other column is a parameter;
* ``Unit`` files (1.0, 1.1): 1.1 writes collector columns after ``Unit`` and the profiled
  function's parameters last (``extraction.extract_df_from_report``: "function params LAST";
  ``transformation.aggregate_data`` takes the last N columns as the parameters). So, among
  the columns that are not nsight-python's, in file order:

  1. a column with this project's collector names (:data:`~profiling_worker.schema.spec.COLLECTORS`)
     is a collector, and so is every column before it;
  2. a column whose value differs on every run of what (a tail of) the later columns name as
     one config of two runs or more (a time stamp, a counter) is a RUN-scope collector, and
     so is every column before it;
  3. of the rest, the parameters are the tail that gives every config of an (Annotation,
     Metric) the same number of runs (nsight-python runs every config ``runs`` times), or,
     when a run is missing, the tail that needs the fewest missing runs; ties go to the
     longer tail. The tail is never empty when a column is left: a table with one column
     left has that column as its parameter (1.0 files, no collectors).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd
from pandas.api.typing import DataFrameGroupBy

from profiling_worker.importing.nsight_columns import RAW_FIXED
from profiling_worker.schema import columns as C
from profiling_worker.schema.spec import COLLECTORS


@dataclass(frozen=True)
class RawColumns:
    """``params``: the config parameter columns in file order; ``collectors``: {column: why it
    was read as an info-collector value} (for the bundle's notes)."""

    params: list[str]
    collectors: dict[str, str] = field(default_factory=dict)


def split_raw_columns(header: Sequence[str], frame: pd.DataFrame) -> RawColumns:
    """Tell config parameters from 1.1 info-collector columns in a per-run table (module doc).

    Args:
        header: the file's column names in file order.
        frame: its rows (text cells); ``Annotation`` and ``Metric`` present.
    Raises:
        nothing: any header gives an answer (possibly no parameters: one config).
    """
    cands = [h for h in header if h not in RAW_FIXED]
    if C.UNIT not in header:
        return RawColumns(cands)
    why: dict[str, str] = {}
    named = [i for i, h in enumerate(cands) if h in COLLECTORS]
    if named:
        last = cands[named[-1]]
        why.update({h: "a collector name of this project's worker" if h in COLLECTORS else
                    f"written before the collector {last}, as 1.1 writes parameters last"
                    for h in cands[:named[-1] + 1]})
    rest = cands[named[-1] + 1:] if named else cands
    per_run = {i: tail for i in range(len(rest) - 1)
               if (tail := _config_it_varies_in(frame, rest[i], rest[i + 1:])) is not None}
    if per_run:
        cut = max(per_run)
        why.update({h: f"differs on every run of one config of {', '.join(per_run[i])}"
                    if i in per_run else f"written before the run-scope collector {rest[cut]}"
                    ", as 1.1 writes parameters last" for i, h in enumerate(rest[:cut + 1])})
        rest = rest[cut + 1:]
    params = _tail_with_full_runs(frame, rest)
    why.update({h: "as a parameter it would give the configs unequal run counts"
                for h in rest[:len(rest) - len(params)]})
    return RawColumns(params, why)


def _groups(frame: pd.DataFrame, keys: list[str]) -> "DataFrameGroupBy[Any, Literal[True]]":
    """Rows grouped by the values present (missing values a group of their own)."""
    return frame.groupby(keys, sort=False, dropna=False, observed=True)


def _config_it_varies_in(frame: pd.DataFrame, column: str, later: list[str]) -> list[str] | None:
    """The tail of ``later`` whose values group each (Annotation, Metric) into configs of two
    runs or more on every one of which ``column`` differs (it never repeats within an
    Annotation and Metric), or None when there is none."""
    by_metric = _groups(frame, [C.ANNOTATION, C.METRIC])[column]
    if not (by_metric.nunique(dropna=False) == by_metric.size()).all():
        return None
    for k in range(len(later)):
        sizes = _groups(frame, [C.ANNOTATION, C.METRIC, *later[k:]]).size()
        if (sizes >= 2).all():
            return later[k:]
    return None


def _tail_with_full_runs(frame: pd.DataFrame, columns: list[str]) -> list[str]:
    """The non-empty tail of ``columns`` whose configs miss the fewest runs (as a share of the
    most runs any config of the same Annotation and Metric has); the longer tail on a tie."""
    best: list[str] = []
    best_missing = float("inf")
    for k in range(len(columns)):
        tail = columns[k:]
        counts = _groups(frame, [C.ANNOTATION, C.METRIC, *tail]).size()
        most = counts.groupby(level=[0, 1], sort=False).transform("max")
        missing = float((most - counts).sum() / most.sum())
        if missing < best_missing:
            best, best_missing = tail, missing
    return best


__all__ = ["RawColumns", "split_raw_columns"]
