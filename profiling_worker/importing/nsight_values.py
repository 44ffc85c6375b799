"""Values of nsight-python's CSVs: the per-run and aggregated frames of one file
(:class:`~profiling_worker.importing.nsight_csv.NsightCsv`, whose columns and configs
:mod:`~profiling_worker.importing.nsight_csv` has read), in the bundle's units, and whether a
processed_data file was written from a profiled_data file's runs.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from profiling_worker.bundle.writer import table_columns
from profiling_worker.bundle.errors import ImportFailed
from profiling_worker.bundle.stats.combine_rules import RULE_SINGLE
from profiling_worker.bundle.stats.units import UNITS, unit_factors
from profiling_worker.importing import nsight_columns as N
from profiling_worker.importing.nsight_csv import NsightCsv
from profiling_worker.importing.refusals import HINT_CSV
from profiling_worker.importing.textcsv import (METRIC_NAME_RE, floats, kernels,
                                                non_finite_to_missing, text_column, units)
from profiling_worker.bundle.schema import columns as C, intervals
from profiling_worker.bundle.number_text import counted

#: CombineRule of imported runs whose value nsight-python had already combined from several
#: kernels with the user's ``combine_kernel_metrics`` (the function is not recorded).
RULE_NSIGHT_COMBINED = "combined by nsight-python (combine_kernel_metrics)"
CI_METHOD_T = (f"{intervals.CI_METHOD}, from StdDev and NumRuns (nsight-python wrote "
               "mean +- 1.96 sigma/sqrt(n))")
#: Units of time, size or rate: values the pages draw in ns, bytes or Hz when not converted.
_DIMENSIONED = re.compile(r"second|byte|hz", re.IGNORECASE)


def key_columns(it: NsightCsv, params: list[str]) -> pd.DataFrame:
    """Annotation, Config, <params>, Metric of one nsight-python CSV (checked text columns)."""
    f = it.frame
    out = pd.DataFrame({
        C.ANNOTATION: text_column(f[C.ANNOTATION], it.path, C.ANNOTATION, True),
        C.CONFIG: f[C.CONFIG].astype("int64"),
    })
    for p in params:
        out[p] = f[p]
    out[C.METRIC] = text_column(f[C.METRIC], it.path, C.METRIC, True)
    return out


def number(it: NsightCsv, column: str, notes: list[str] | None = None) -> pd.Series:
    """A numeric column of ``it`` (NaN where absent); thousands separators read as the ncu CSV
    reader reads them (:func:`~profiling_worker.importing.textcsv.numbers_as_text`); inf/NaN
    cells become missing, counted in ``notes`` when given.

    Raises:
        ImportFailed: a cell that is not a number.
    """
    f = it.frame
    if column not in f.columns:
        return pd.Series(np.nan, index=f.index, dtype="float64")
    values = floats(f[column], it.path, column, finite=False, decimal=it.source.decimal,
                    thousands=it.source.decimal == ".")
    infinite = np.isinf(values.to_numpy(dtype="float64"))
    values, bad = non_finite_to_missing(values)
    if bad and notes is not None:
        notes.append(_missing_note(it, column, values.isna().to_numpy(), infinite))
    return values


def _missing_note(it: NsightCsv, column: str, missing: np.ndarray, infinite: np.ndarray) -> str:
    """The note for the cells of ``column`` shown as missing: those that held no number (empty,
    N/A, NaN as written) and those that were infinite (a derived metric over a zero counter),
    each with the metrics they belong to."""
    f = it.frame
    parts = []
    for cells, what in ((missing & ~infinite, "held no number (empty, N/A or NaN as written: "
                                              "no value was recorded)"),
                        (infinite, "held inf (a derived metric divided by a zero counter?)")):
        if cells.any():
            metrics = ", ".join(map(str, dict.fromkeys(f.loc[cells, C.METRIC])))
            parts.append(f"{counted(int(cells.sum()), column + ' cell')} {what}: {metrics}")
    return f"{it.path.name}: {'; '.join(parts)}; they are shown as missing"


def base_units(it: NsightCsv, notes: list[str]) -> tuple[pd.Series, pd.Series]:
    """Per row of ``it``: the factor that takes its values to the bundle's units (ns, byte,
    Hz, byte/s, %) and that unit, from the ``Unit`` column (0.9.x: inferred,
    :func:`~profiling_worker.importing.textcsv.units`) by
    :func:`~profiling_worker.bundle.stats.units.unit_factors`. Each conversion is noted per metric;
    a unit of time, size or rate the importer does not know is kept as written, with a note.

    Raises:
        ImportFailed: a duration metric (``*__time_duration*``, drawn in ns) in a unit the
            importer does not know.
    """
    given = units(it.frame)
    factor, unit, scaled = unit_factors(given)
    for metric, u in dict.fromkeys(zip(it.frame[C.METRIC].astype(str), given)):
        if u in scaled:
            notes.append(f"{metric}: {it.path.name}: values in {u} converted at import, "
                         f"{scaled[u]}")
        elif isinstance(u, str) and u not in UNITS and _is_duration(metric):
            raise ImportFailed(f"{it.path.name}: {metric} in unit {u!r}, which the importer "
                               "cannot convert to ns; expected one of its units: "
                               + ", ".join(UNITS), HINT_CSV)
        elif isinstance(u, str) and u not in UNITS and _DIMENSIONED.search(u):
            notes.append(f"{metric}: {it.path.name}: unit {u} is not one the importer converts; "
                         f"values kept as written, in {u} (not ns, bytes or Hz)")
    return factor, unit


def _is_duration(metric: str) -> bool:
    """An Nsight Compute duration metric (``gpu__time_duration.sum``; not a ratio of one)."""
    return bool(METRIC_NAME_RE.match(metric)) and "__time_duration" in metric


def runs_frame(it: NsightCsv, params: list[str], notes: list[str]) -> pd.DataFrame:
    """Per-run rows of one profiled_data file (Run numbered in file order per key), values
    in the bundle's units (:func:`base_units`).

    Raises:
        ImportFailed: see :func:`base_units`.
    """
    out = key_columns(it, params)
    factor, out[C.UNIT] = base_units(it, notes)
    out[C.VALUE] = number(it, C.VALUE, notes) * factor
    out[C.KERNELS] = kernels(it.frame)
    out[C.RUN] = out.groupby([C.ANNOTATION, C.CONFIG, C.METRIC], sort=False).cumcount() \
        .astype("int64")
    # an object column of two shared strings (np.where would make a wide unicode array)
    out[C.COMBINE_RULE] = pd.Series(RULE_SINGLE, index=out.index, dtype=object).mask(
        out[C.KERNELS] > 1, RULE_NSIGHT_COMBINED)
    return out[table_columns(C.TABLE_RUNS, params)]


def sort_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """Config, then annotation and metric in first-seen order, then run (one reordering copy)."""
    order = np.lexsort((runs[C.RUN].to_numpy(), pd.factorize(runs[C.METRIC])[0],
                        pd.factorize(runs[C.ANNOTATION])[0], runs[C.CONFIG].to_numpy()))
    return runs.take(order).reset_index(drop=True)


def agg_frame(it: NsightCsv, params: list[str], notes: list[str]) -> pd.DataFrame:
    """The aggregated rows of one processed_data file as written, CI95, relative std dev and
    stability recomputed from StdDev and NumRuns by the worker's method (:data:`CI_METHOD_T`);
    values in the bundle's units (:func:`base_units`).

    Raises:
        ImportFailed: see :func:`base_units`.
    """
    f = it.frame
    out = key_columns(it, params)
    factor, out[C.UNIT] = base_units(it, notes)
    nruns = number(it, C.NUM_RUNS)
    out[C.NUM_RUNS] = nruns.fillna(0).clip(0, 2**62).round().astype("int64")
    out[C.AVG] = number(it, C.AVG, notes) * factor
    for column in (C.STD, C.MIN, C.MAX):
        out[column] = number(it, column) * factor
    out[C.MEDIAN] = np.nan
    few = (out[C.NUM_RUNS] < intervals.MIN_RUNS) | out[C.STD].isna()  # no spread known
    lower, upper = intervals.ci95_bounds(out[C.AVG], out[C.STD], out[C.NUM_RUNS],
                                         out[C.MIN].fillna(out[C.AVG]), out[C.METRIC])
    out[C.CI95_LOWER] = np.where(few, np.nan, lower)
    out[C.CI95_UPPER] = np.where(few, np.nan, upper)
    _note_file_ci95(it, out, factor, notes)
    out[C.RSD] = _relative_std_dev(it, out)
    out[C.STABLE] = intervals.stable(out[C.NUM_RUNS], out[C.RSD])
    out[C.KERNELS] = kernels(f).astype("float64")
    out[C.KERNELS_VARY] = False
    return out[table_columns(C.TABLE_AGGREGATED, params)]


def _relative_std_dev(it: NsightCsv, out: pd.DataFrame) -> pd.Series:
    """RelativeStdDevPct (%) of the rows of ``out`` (AvgValue, StdDev, NumRuns filled): the
    file's own where it gives one, else ``100 * StdDev / |AvgValue|``; NaN below
    ``intervals.MIN_RUNS`` runs. The file's value is nsight-python's std / mean of the runs,
    computed before any normalisation, so it is also the relative spread of a normalised row,
    whose AvgValue is a ratio and whose StdDev is not (case 04: 0.86 % .. 2.17 %)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        recomputed = (out[C.STD] / out[C.AVG].abs() * 100).where(out[C.AVG] != 0)
    return number(it, C.RSD).abs().fillna(recomputed).where(
        out[C.NUM_RUNS] >= intervals.MIN_RUNS)


def _note_file_ci95(it: NsightCsv, out: pd.DataFrame, factor: pd.Series,
                    notes: list[str]) -> None:
    """Say so when the file's own CI95 columns differ from the recomputed Student-t ones
    (nsight-python writes mean ± 1.96·StdDev/√NumRuns, a z interval, under the same names)."""
    differ = pd.Series(False, index=out.index)
    for column in (C.CI95_LOWER, C.CI95_UPPER):
        if column not in it.frame.columns:
            continue
        mine, theirs = out[column].to_numpy(float), (number(it, column) * factor).to_numpy(float)
        differ |= ~np.isclose(mine, theirs, rtol=1e-6, equal_nan=True)
    if differ.any():
        notes.append(f"{it.path.name}: CI95_Lower/CI95_Upper recomputed as a Student-t interval "
                     "(mean ± t(0.975, NumRuns − 1)·StdDev/√NumRuns) from StdDev and NumRuns; "
                     "the file's own CI95 (nsight-python's z interval, mean ± "
                     f"1.96·StdDev/√NumRuns) differ in {int(differ.sum())} of "
                     f"{counted(len(out), 'row')}")


def pairs_with(agg: pd.DataFrame, runs: pd.DataFrame) -> bool:
    """True when every aggregated row repeats the count, minimum and maximum of the per-run
    rows of its key: the processed_data file was written from these runs."""
    keys = [C.ANNOTATION, C.CONFIG, C.METRIC]
    stats = runs.groupby(keys, sort=False)[C.VALUE].agg(["size", "min", "max"]).reset_index()
    agg = agg[[*keys, C.NUM_RUNS, C.MIN, C.MAX]].copy()
    # A normalised row keeps the unnormalised count, min and max of its base metric.
    agg[C.METRIC] = [(N.relative_metric(m) or (m,))[0] for m in agg[C.METRIC].astype(str)]
    merged = agg.merge(stats, on=keys, how="left")
    if merged["size"].isna().any():
        return False
    return bool((merged[C.NUM_RUNS] == merged["size"]).all()
                and np.allclose(merged[C.MIN], merged["min"], rtol=1e-9, equal_nan=True)
                and np.allclose(merged[C.MAX], merged["max"], rtol=1e-9, equal_nan=True))
