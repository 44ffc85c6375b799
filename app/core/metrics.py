"""How to read a bundle by Nsight Compute metric (names from
:mod:`profiling_worker.bundle.schema.metrics`).

Pure pandas; names only through :mod:`profiling_worker.bundle.schema.columns` for table columns.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from profiling_worker.bundle.schema import backends as B, columns as C
from profiling_worker.bundle.schema.view_metrics import PRESET_OF as PRESET_OF  # re-exported
# Re-exported (the "as" form says so to mypy): the views import these metric names from here.
from profiling_worker.bundle.schema.metrics import (DRAM_PCT as DRAM_PCT, DRAM_READ as DRAM_READ,
                                                    DRAM_WRITE as DRAM_WRITE, GPC_HZ as GPC_HZ,
                                                    SM_CLOCK_METRICS as SM_CLOCK_METRICS,
                                                    SM_HZ as SM_HZ, SM_PCT as SM_PCT)

from profiling_worker.bundle.schema.manifest import JobStatus

from app.core import frame_columns as F, metric_roles
from app.core.failure_advice import RUN_AGAIN, next_step
from profiling_worker.bundle.loader import Bundle
from app.core.provenance import is_imported



class MissingData(ValueError):
    """A view needs a table or metric the job does not have.

    Attributes:
        hint: what to do (which preset or backend to run the job with).
    """

    def __init__(self, message: str, hint: str = ""):
        super().__init__(message)
        self.hint = hint


#: How a page names the durations in a sentence (the y-axis label and the job caption say
#: "Durations" / "durations"; the metric's name, host__time_duration.sum, is a column's)
DURATIONS = "durations"
#: How the Files page names what a job's report is made of, where the job has none yet
REPORT_VALUES = "results"


def shown_name(bundle: Bundle, metric: str) -> str:
    """``metric`` as a sentence names it: ``durations`` for the job's duration metric, else the
    metric with its role as the Size sweep's y axis names it (``compute_tflops (derived)``)."""
    if metric == bundle.duration_metric:
        return DURATIONS
    return metric_roles.label(bundle.manifest, metric)


def no_values_text(name: str, status: JobStatus, what: str = "the chart",
                   error: Mapping[str, Any] | None = None) -> str:
    """The sentence of a page that has no ``name`` values of a job in ``status`` to draw
    ``what`` from: a queued or running job's come when it ends; one that ended without them
    is to be run again (an interrupted one may have measured runs and kept none, or never run:
    its error box says which), unless its ``error`` is one a rerun meets again (a refused spec:
    :func:`~app.core.failure_advice.next_step` names the fix).

    Args:
        name: the values in a reader's words (:func:`shown_name`), not a metric's column name.
        status: the job's state as the page names it.
        what: what the page would draw from them.
        error: the failed job's recorded error (``Bundle.error``), None when it has none.
    """
    if status is JobStatus.QUEUED:
        return f"No {name} yet: the job is queued, and {what} comes once it has run."
    if status is JobStatus.RUNNING:
        return f"No {name} yet: the job is running, and {what} comes when it ends."
    if status is JobStatus.DONE:
        return f"No {name} to plot: the job recorded none."
    if status is JobStatus.INTERRUPTED:  # it may have measured runs, or never run: its error
        # box says which (job_recovery.interrupted_error); said here too, it was read twice
        return f"No {name}: the job was {status} before it finished. {RUN_AGAIN}"
    ended = "failed" if status is JobStatus.FAILED else f"was {status}"
    advice = next_step(error) if status is JobStatus.FAILED else RUN_AGAIN
    return f"No {name}: the job {ended} before it recorded any. {advice}"


def missing_metric(bundle: Bundle, metrics: tuple[str, ...], what: str) -> MissingData:
    """The standard "this job has no X; run it with the Y preset" error."""
    presets = sorted({PRESET_OF.get(m, "") for m in metrics} - {""})
    how = (f"run it with the {' + '.join(presets)} metric preset" if presets
           else f"add {', '.join(metrics)} to the job's metrics")
    if is_imported(bundle.manifest):  # made elsewhere: nothing here can re-run it
        how = (f"profile again with Nsight Compute collecting {', '.join(metrics)} (nsight-python "
               "metrics=[...] on its ncu backend, or ncu --metrics) and import the output")
    elif bundle.backend in B.NAMES and not B.get(bundle.backend).any_metric:
        how += f" on the ncu backend (the {bundle.backend} backend measures durations only)"
    return MissingData(f"This job has no {what} ({', '.join(metrics)}).",
                       how[0].upper() + how[1:] + ".")


def available_metrics(bundle: Bundle) -> list[str]:
    """Metric names in the aggregated table (else the runs table), first-seen order."""
    for name in (C.TABLE_AGGREGATED, C.TABLE_RUNS):
        table = bundle.table(name)
        if not table.empty and C.METRIC in table:
            return table[C.METRIC].unique().tolist()  # first-seen order, no per-row loop
    return []


def keys_of(bundle: Bundle, table: pd.DataFrame | None = None) -> list[str]:
    """Annotation, Config and the config parameter columns present in ``table``."""
    table = bundle.table(C.TABLE_AGGREGATED) if table is None else table
    return [C.ANNOTATION, C.CONFIG] + [p for p in bundle.parameters if p in table]


def wide_means(bundle: Bundle, metrics: tuple[str, ...]) -> pd.DataFrame:
    """AvgValue of each metric per Annotation x Config, one column per metric (NaN if absent).

    Returns:
        Annotation, Config, <params>, then one column per name in ``metrics``; one row per
        annotation x config of the aggregated table, in its order.
    """
    agg = bundle.table(C.TABLE_AGGREGATED)
    if agg.empty or C.METRIC not in agg:
        return pd.DataFrame(columns=[C.ANNOTATION, C.CONFIG, *metrics])
    keys = keys_of(bundle, agg)
    base = agg[keys].drop_duplicates().reset_index(drop=True)
    for metric in metrics:
        part = agg.loc[agg[C.METRIC] == metric, [C.ANNOTATION, C.CONFIG, C.AVG]]
        base = base.merge(part.rename(columns={C.AVG: metric}), on=[C.ANNOTATION, C.CONFIG],
                          how="left")
    return base


def config_label(row: pd.Series, params: tuple[str, ...]) -> str:
    """``n=512`` style label of one row's config parameters (``config 0`` without any)."""
    pairs = [(p, row[p]) for p in params if p in row.index]
    return _label(pairs, None if pairs else row[C.CONFIG])


def _label(pairs: list[tuple[str, object]], config: object) -> str:
    return ", ".join(f"{p}={v}" for p, v in pairs) if pairs else f"config {config}"


def with_labels(frame: pd.DataFrame, params: tuple[str, ...]) -> pd.DataFrame:
    """``frame`` plus a ``ConfigLabel`` column (``n=512``)."""
    out = frame.copy()
    present = [p for p in params if p in out]
    # column by column: iterrows built a pandas Series per row (3,000 rows on a 1,000-config sweep)
    if not len(out):
        labels: list[str] = []
    elif present:
        labels = [_label(list(zip(present, row)), None)
                  for row in zip(*(out[p].tolist() for p in present))]
    else:
        labels = [_label([], config) for config in out[C.CONFIG].tolist()]
    out[F.CONFIG_LABEL] = labels
    return out


def annotation_order(bundle: Bundle) -> list[str]:
    """The job's annotation order, the one rule of every view (legends, x categories, the run
    audit's badges, tables) and of the annotation colours: first-seen order in the aggregated
    table (the spec's order, ``fp32, fp16, bf16``), else in the runs table."""
    for name in (C.TABLE_AGGREGATED, C.TABLE_RUNS):
        table = bundle.table(name)
        if not table.empty and C.ANNOTATION in table:
            # unique() keeps first-seen order, without a Python step per row (180,000 rows of
            # a 10,000-config sweep's aggregated table took 0.1 s on every rerun, issue 37)
            return [str(a) for a in table[C.ANNOTATION].dropna().unique()]
    return []


def in_job_order(frame: pd.DataFrame, bundle: Bundle,
                 by: tuple[str, ...] = (C.ANNOTATION,)) -> pd.DataFrame:
    """``frame`` sorted (stable) by the columns ``by``, its Annotation column in the job's order
    (:func:`annotation_order`; an annotation the job's tables do not have comes after, in
    first-seen order) rather than the alphabet or the order of the table it came from; rows
    equal on ``by`` keep their order. ``frame`` as it is without an Annotation column."""
    if frame.empty or C.ANNOTATION not in frame:
        return frame
    rank = {name: i for i, name in enumerate(annotation_order(bundle))}
    for name in dict.fromkeys(frame[C.ANNOTATION].dropna().astype(str)):
        rank.setdefault(name, len(rank))
    ranked = frame.assign(_rank=frame[C.ANNOTATION].map(lambda a: rank.get(str(a), len(rank))))
    keys = ["_rank" if col == C.ANNOTATION else col for col in by if col in ranked]
    return ranked.sort_values(keys, kind="stable").drop(columns="_rank").reset_index(drop=True)
