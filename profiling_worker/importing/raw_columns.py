"""Which columns of a per-run nsight-python table (``profiled_data``) are config parameters and
which are nsight-python 1.1 info-collector values, when no ``processed_data`` file beside it
names the parameters.

nsight-python's own columns (:data:`~profiling_worker.importing.nsight_columns.RAW_FIXED`) are
known by name, wherever they are; files without ``Unit`` (0.9.x) predate collectors, so every
other column is a parameter. In ``Unit`` files (1.0, 1.1) the other columns are told apart by
what their values do, never by their order: 1.1 writes the collector columns in the order of a
Python set (``extraction.extract_df_from_report``: ``custom_info_names = {name for ...}``), so
it changes from process to process. A collector (RUN or ANNOTATION scope) changes from run to
run within a config; a parameter does not, and every config has the same number of runs:

1. a column with this project's collector names
   (:data:`~profiling_worker.bundle.schema.spec.COLLECTORS`) is a collector;
2. a column with a new value on every row of an annotation and metric (a time stamp, a counter)
   is a collector when the parameters found among the other columns (rule 3) still group
   those rows into configs of two runs or more;
3. of the rest, the parameters are the set of columns that gives every config of an
   (Annotation, Metric) the most equal run counts (the fewest missing runs), leaving out no
   column that forms a full grid with the configs (a swept parameter of a job run once per
   config); ties go to a set whose configs are not all of one run (a collector whose value
   never repeats within a config, a temperature, would otherwise make every row a config),
   then to the larger set, then to the set whose values change least often from
   one row to the next (nsight-python writes a config's runs one after another), and the set is
   never empty when a column is left
   (leaving every column out pools all runs, which always looks complete). A column left out
   changes from run to run within a config (or would give unequal run counts);
4. a column with one value in the whole file (a ONCE-scope collector, or a parameter of one
   value: either way it tells no configs apart) is a collector when the file has other
   collectors and parameters that change, else a parameter (1.0 files; a job of one config).

What cannot be told by values: a CONFIG-scope collector (one value per config) reads as a
parameter, and with one run per config no collector changes within a config.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd
from pandas.api.typing import DataFrameGroupBy

from profiling_worker.importing.nsight_columns import RAW_FIXED
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.spec import COLLECTORS


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
    why = {h: "a collector name of this project's worker" for h in cands if h in COLLECTORS}
    single = [h for h in cands if h not in why and frame[h].nunique(dropna=False) <= 1]
    varying = [h for h in cands if h not in why and h not in single]
    fresh = [h for h in varying if _new_on_every_row(frame, h)]
    others = [h for h in varying if h not in fresh]
    params = _best_params(frame, others)
    if fresh and (_groups(frame, [C.ANNOTATION, C.METRIC, *params]).size() >= 2).all():
        why.update({h: "a new value on every run of an annotation and metric (a time stamp or "
                    "counter: RUN scope)" for h in fresh})
        varying = others
    else:
        params = _best_params(frame, varying)
    configs = [C.ANNOTATION, C.METRIC, *params]
    why.update({h: (f"changes from run to run within a config of {', '.join(params) or 'the file'}"
                    if _changes_within(frame, h, configs) else
                    "as a parameter it would give the configs unequal run counts")
                for h in varying if h not in params})
    if why and params:  # one value: tells no configs apart that the parameters do not
        why.update({h: "one value in the whole file (a ONCE-scope collector, or a parameter of "
                    "one value: it tells no configs apart)" for h in single})
    else:  # no collector, or one config: the one-value columns are what names it (n = 256)
        params = [h for h in cands if h in params or h in single]
    return RawColumns([h for h in cands if h in params], why)


def _groups(frame: pd.DataFrame, keys: list[str]) -> "DataFrameGroupBy[Any, Literal[True]]":
    """Rows grouped by the values present (missing values a group of their own)."""
    return frame.groupby(keys, sort=False, dropna=False, observed=True)


def _new_on_every_row(frame: pd.DataFrame, column: str) -> bool:
    by_metric = _groups(frame, [C.ANNOTATION, C.METRIC])[column]
    return bool((by_metric.nunique(dropna=False) == by_metric.size()).all())


def _changes_within(frame: pd.DataFrame, column: str, keys: list[str]) -> bool:
    return bool((_groups(frame, keys)[column].nunique(dropna=False) > 1).any())


def _missing(frame: pd.DataFrame, params: list[str]) -> float:
    """Share of runs missing when ``params`` name the configs (against the most runs any config
    of the same Annotation and Metric has)."""
    counts = _groups(frame, [C.ANNOTATION, C.METRIC, *params]).size()
    most = counts.groupby(level=[0, 1], sort=False).transform("max")
    return float((most - counts).sum() / most.sum())


def _full_grid(frame: pd.DataFrame, column: str, params: list[str]) -> bool:
    """True when ``column`` takes each of its values equally often in every config of
    ``params`` (a swept parameter, not a collector)."""
    cells = _groups(frame, [C.ANNOTATION, C.METRIC, *params, column]).size()
    per_config = cells.groupby(level=list(range(len(params) + 2)), sort=False)
    return bool(cells.nunique() == 1 and (per_config.size() == frame[column].nunique()).all())


def _changes(frame: pd.DataFrame, params: list[str]) -> int:
    """How often the values of ``params`` change from one row to the next of an (Annotation,
    Metric), in file order: nsight-python writes a config's runs one after another, so a
    parameter changes only where a config ends, a collector from run to run."""
    if not params:
        return 0
    keys = frame[[C.ANNOTATION, C.METRIC, *params]].astype(str)
    series = keys.groupby([C.ANNOTATION, C.METRIC], sort=False)
    previous = series[params].shift()
    later = series.cumcount() > 0
    return int((later & (keys[params] != previous).any(axis=1)).sum())


def _one_run_each(frame: pd.DataFrame, params: list[str]) -> bool:
    """True when ``params`` make every config of every (Annotation, Metric) one run: a column
    whose value never repeats within a config (a temperature) would do that, so a set that
    leaves such a column out and keeps runs together wins the tie (issue 35)."""
    return bool((_groups(frame, [C.ANNOTATION, C.METRIC, *params]).size() == 1).all())


def _best_params(frame: pd.DataFrame, columns: list[str]) -> list[str]:
    """The subset of ``columns`` that names the configs (rule 3 of the module doc)."""
    best: list[str] = list(columns)
    best_key: tuple[float, bool, int, int] = (float("inf"), True, 0, 0)
    for k in range(len(columns)):  # never the empty set: merging configs hides no missing run
        for subset in itertools.combinations(columns, len(columns) - k):
            chosen = list(subset)
            if any(_full_grid(frame, h, chosen) for h in columns if h not in chosen):
                continue
            key = (_missing(frame, chosen), _one_run_each(frame, chosen), -len(chosen),
                   _changes(frame, chosen))
            if key < best_key:
                best, best_key = chosen, key
    return best


__all__ = ["RawColumns", "split_raw_columns"]
