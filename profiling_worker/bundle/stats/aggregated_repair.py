"""An aggregated table that lacks some of its statistics columns, completed for its readers.

A bundle written by hand or by another tool may hold only part of the aggregated table's
columns (``profiling_worker.bundle.schema.columns``: NumRuns, AvgValue, StdDev, MinValue, MaxValue,
MedianValue, CI95_Lower, CI95_Upper, RelativeStdDevPct, StableMeasurement, Unit, Kernels,
KernelsVary). The pages compute with all of them, so a missing one is

* recomputed from the runs table by the worker's own method
  (:func:`profiling_worker.bundle.stats.aggregate.aggregate_runs`) where the runs table has the
  rows;
* else derived from the columns that are there by the same formulas
  (:mod:`profiling_worker.bundle.schema.intervals`: CI95 from AvgValue, StdDev and NumRuns; relative
  std dev from StdDev and AvgValue; StableMeasurement from NumRuns and the relative std dev);
* else added empty (NaN; False for the two flags), and named, so that a page draws what the
  other columns give and says which column it lacks, and the regression gate refuses the
  bundle naming it.

A table without a key column (Annotation, Config, Metric, a config parameter) cannot be matched
row by row: it is rebuilt from the runs table, or, without one, left out (empty) and named.

The one bundle loader (``bundle/loader.py``) completes the table with it, for the pages and the
regression gate alike; the gate refuses a side whose AvgValue, StdDev, NumRuns or key columns it
could not give (``bundle/gate/sides.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from profiling_worker.bundle.stats.aggregate import aggregate_runs
from profiling_worker.bundle.schema import columns as C, intervals

#: The aggregated table's keys: without them a row cannot be matched with its runs.
KEYS = (C.ANNOTATION, C.CONFIG, C.METRIC)
#: Every other column of the aggregated table the pages read, in the table's order.
STATISTICS = (C.UNIT, C.NUM_RUNS, C.AVG, C.STD, C.MIN, C.MAX, C.MEDIAN, C.CI95_LOWER,
              C.CI95_UPPER, C.RSD, C.STABLE, C.KERNELS, C.KERNELS_VARY)
_FLAGS = (C.STABLE, C.KERNELS_VARY)  # boolean columns: False when not known


@dataclass(frozen=True)
class Completed:
    """The aggregated table with every column of :data:`STATISTICS`, and what was done.

    Attributes:
        table: the table; rows and the columns it had are unchanged, unless it lacked a key.
        recomputed: columns it lacked, recomputed from the runs table.
        derived: columns it lacked, derived from its other columns.
        empty: columns it lacked that nothing gives: NaN (False for the flags).
        keys: key columns it lacked (:data:`KEYS`, a config parameter):
            the whole table was rebuilt from the runs table, or, without one, left out (an
            empty table: ``rebuilt`` False).
        rebuilt: True when ``table`` was rebuilt from the runs table for lack of ``keys``.
    """

    table: pd.DataFrame
    recomputed: tuple[str, ...] = ()
    derived: tuple[str, ...] = ()
    empty: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()
    rebuilt: bool = False


def complete(aggregated: pd.DataFrame, runs: pd.DataFrame,
             params: Sequence[str] | None = None) -> Completed:
    """``aggregated`` with its missing :data:`STATISTICS` columns filled (see the module).

    Args:
        aggregated: a bundle's aggregated table; an empty one is returned as it is. One
            without a key column (:data:`KEYS`, or one of ``params``) is
            rebuilt from the runs table, or, without one, replaced by an empty table: its rows
            cannot be told apart.
        runs: the bundle's runs table (Annotation, Config, Metric, Value...; may be empty).
        params: config parameter names (None: inferred from ``runs``).

    Returns:
        :class:`Completed`. Rows of ``aggregated`` with no runs get NaN in recomputed columns.
    """
    if aggregated.empty:
        return Completed(aggregated)
    keys = [c for c in (*KEYS, *(params or ())) if c not in aggregated]
    if keys:
        fresh = _aggregate(runs, params)
        return Completed(pd.DataFrame() if fresh is None else fresh, keys=tuple(keys),
                         rebuilt=fresh is not None)
    missing = [c for c in STATISTICS if c not in aggregated]
    if not missing:
        return Completed(aggregated)
    out = aggregated.copy()
    recomputed = _from_runs(out, runs, params, missing)
    missing = [c for c in missing if c not in recomputed]
    derived = _from_columns(out, missing)
    empty = [c for c in missing if c not in derived]
    for column in empty:
        out[column] = False if column in _FLAGS else np.nan
    order = [*aggregated.columns, *[c for c in STATISTICS if c not in aggregated]]
    return Completed(out[order], tuple(recomputed), tuple(derived), tuple(empty))


def _from_runs(out: pd.DataFrame, runs: pd.DataFrame, params: Sequence[str] | None,
               missing: list[str]) -> list[str]:
    """Add the ``missing`` columns to ``out`` (in place) from the runs table's statistics;
    returns those added (none when the runs table cannot give them)."""
    fresh = _aggregate(runs, params)
    if fresh is None:
        return []
    keys = list(KEYS)
    merged = out[keys].merge(fresh[[*keys, *missing]].drop_duplicates(keys), on=keys,
                             how="left")
    for column in missing:
        out[column] = merged[column].to_numpy()
    return missing


def _aggregate(runs: pd.DataFrame, params: Sequence[str] | None) -> pd.DataFrame | None:
    """The worker's aggregated table of ``runs``; None when it has no rows or cannot give one."""
    if runs.empty or any(c not in runs for c in (*KEYS, C.VALUE)):
        return None
    try:
        return aggregate_runs(runs, [p for p in params or () if p in runs] if params else None)
    except (KeyError, ValueError, TypeError):  # a runs table too damaged to aggregate
        return None


def _from_columns(out: pd.DataFrame, missing: list[str]) -> list[str]:
    """Add what of ``missing`` the other columns give (in place), by the worker's formulas
    (:mod:`profiling_worker.bundle.schema.intervals`); returns those added."""
    done = []
    if C.RSD in missing and {C.AVG, C.STD} <= set(out):
        out[C.RSD] = intervals.rsd_pct(out[C.AVG], out[C.STD])
        done.append(C.RSD)
    if {C.CI95_LOWER, C.CI95_UPPER} & set(missing) and {C.AVG, C.STD, C.NUM_RUNS} <= set(out):
        floor = out[C.MIN].fillna(out[C.AVG]) if C.MIN in out else out[C.AVG]
        lower, upper = intervals.ci95_bounds(out[C.AVG], out[C.STD], out[C.NUM_RUNS], floor,
                                             out.get(C.METRIC))
        for column, values in ((C.CI95_LOWER, lower), (C.CI95_UPPER, upper)):
            if column in missing:
                out[column] = values
                done.append(column)
    if C.STABLE in missing and {C.NUM_RUNS, C.RSD} <= set(out):
        out[C.STABLE] = intervals.stable(out[C.NUM_RUNS], out[C.RSD])
        done.append(C.STABLE)
    return done

