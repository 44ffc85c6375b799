"""Kernel launches per run and per config, and the table-layout helpers the extraction shares
(pure pandas; table layouts in :mod:`profiling_worker.bundle.schema.columns`).

A launch count that differs between runs of one config (autotuning, a one-time kernel inside
the range) makes the runs incomparable: :func:`configs_with_varying_kernels` lists them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pandas as pd
from profiling_worker.bundle.schema import columns as C

def infer_param_names(frame: pd.DataFrame) -> list[str]:
    """Config parameter columns of a long table: every column that is not a schema column.

    Args:
        frame: a launches, runs or aggregated table.

    Returns:
        The parameter names in column order.
    """
    return [c for c in frame.columns if c not in C.RESERVED]


def require_columns(frame: pd.DataFrame, needed: Iterable[str], what: str) -> None:
    """Raise ``KeyError`` naming ``what`` and its columns when any of ``needed`` is missing."""
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise KeyError(f"{what} lacks column(s) {', '.join(missing)}; has {list(frame.columns)}")


def config_params(frame: pd.DataFrame, param_names: Sequence[str]) -> pd.DataFrame:
    """One row per (Annotation, Config) with the parameter values of that config."""
    keys = [C.ANNOTATION, C.CONFIG]
    return frame.drop_duplicates(keys)[keys + list(param_names)].reset_index(drop=True)


def kernel_counts(launches: pd.DataFrame, param_names: Sequence[str] | None = None) -> pd.DataFrame:
    """Number of kernel launches per annotation x config x run.

    Args:
        launches: the launches table (see module docstring).
        param_names: config parameter columns; None infers them (columns not in the schema).

    Returns:
        Columns Annotation, Config, <params>, Run, Kernels (distinct Launch indices of that
        annotation-run, over all metrics), sorted by Config, Annotation (first-seen), Run.

    Raises:
        KeyError: a required column is missing.
    """
    require_columns(launches, (C.ANNOTATION, C.CONFIG, C.RUN, C.LAUNCH), "launches table")
    params = list(infer_param_names(launches) if param_names is None else param_names)
    keys = [C.ANNOTATION, C.CONFIG, C.RUN]
    counts = (launches.groupby(keys, sort=False, dropna=False)[C.LAUNCH].nunique()
              .rename(C.KERNELS).reset_index())
    out = counts.merge(config_params(launches, params), on=[C.ANNOTATION, C.CONFIG], how="left")
    out = out[[C.ANNOTATION, C.CONFIG, *params, C.RUN, C.KERNELS]]
    return out.sort_values([C.CONFIG, C.RUN], kind="stable").reset_index(drop=True)


def configs_with_varying_kernels(counts: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`kernel_counts` whose annotation x config has different counts per run.

    A count that differs between *configs* is normal (cuBLAS picks split-K at one size) and is
    not listed; a count that differs between *runs* of one config (autotuning, a one-time
    kernel inside the range) makes the runs incomparable and deserves a warning.

    Args:
        counts: output of :func:`kernel_counts`.

    Returns:
        The same columns, only the rows of annotation x config pairs with more than one distinct
        Kernels value (empty when every config is consistent).
    """
    n = counts.groupby([C.ANNOTATION, C.CONFIG], sort=False, dropna=False)[C.KERNELS] \
        .transform("nunique")
    return counts[n > 1].reset_index(drop=True)


def kernels_per_config(counts: pd.DataFrame) -> pd.DataFrame:
    """Median launches per run for each annotation x config (for the per-config count table).

    Args:
        counts: output of :func:`kernel_counts`.

    Returns:
        Columns Annotation, Config, <params>, Kernels (median over runs), KernelsVary.
    """
    params = infer_param_names(counts)
    g = counts.groupby([C.ANNOTATION, C.CONFIG], sort=False, dropna=False)[C.KERNELS]
    out = pd.DataFrame({C.KERNELS: g.median(), C.KERNELS_VARY: g.nunique() > 1}).reset_index()
    out = out.merge(config_params(counts, params), on=[C.ANNOTATION, C.CONFIG], how="left")
    return out[[C.ANNOTATION, C.CONFIG, *params, C.KERNELS, C.KERNELS_VARY]]
