"""Labels for imported metrics that are not measurements: nsight-python's derived metrics
(``derive_metric``, 0.9.5's ``Transformed``) and normalised values (``normalize_against``), as
the importer recorded them in ``manifest.json`` (``metric_roles``); each metric's unit as
the tables give it (none for such a derived metric: never the text "None"); and the names of a
metric, one rule each: :func:`label` (the raw name and its role), :func:`words` (what a page
names it by), :func:`readable` and :func:`picker` (a picker's words, unit and raw name)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from profiling_worker.bundle.number_text import shown_unit
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import METRIC_ROLES_KEY

from app.core import frame_columns as F
from app.core.metric_words import metric_words

if TYPE_CHECKING:
    from profiling_worker.bundle.loader import Bundle

_NO_UNIT = ("", "nan", "none", "<na>", "nat")


def unit_text(unit: object) -> str:
    """A unit as shown: "" for a missing one (None, NaN, pandas NA, or the text "None"/"nan"
    such a value became on the way), else its text stripped. An imported derived metric
    (nsight-python's ``compute_tflops``) has an empty Unit cell: its axis read
    "compute_tflops (None)"."""
    if unit is None:
        return ""
    try:
        if bool(pd.isna(unit)):  # type: ignore[call-overload]
            return ""
    except (TypeError, ValueError):  # array-like: not one unit
        return ""
    text = str(unit).strip()
    return "" if text.lower() in _NO_UNIT else text


def units(bundle: Bundle) -> dict[str, str]:
    """{metric: unit} from the bundle's ``Unit`` column (aggregated table, else runs table),
    each metric's first unit that is not missing; "" for a metric without one."""
    for name in (C.TABLE_AGGREGATED, C.TABLE_RUNS):
        table = bundle.table(name)
        if table.empty or C.METRIC not in table:
            continue
        found: dict[str, str] = {}
        pairs = (table[[C.METRIC, C.UNIT]] if C.UNIT in table
                 else table[[C.METRIC]].assign(**{C.UNIT: None})).drop_duplicates()
        for metric, unit in zip(pairs[C.METRIC], pairs[C.UNIT]):  # distinct pairs, in order
            shown = unit_text(unit)
            if not found.get(str(metric)):
                found[str(metric)] = shown
        return found
    return {}


def words(manifest: dict[str, Any], metric: str) -> str:
    """A metric as a person reads it, wherever a page names it (a chart's title and axis, a
    bar, a table's words column): an imported metric's :func:`label`, its role saying more
    than words (``compute_tflops (derived)``); else its words
    (:func:`~app.core.metric_words.metric_words`: ``SM clock rate``, or words read from the
    parts of a name :data:`~profiling_worker.bundle.schema.metrics.WORDS`
    lacks; a name that is no Nsight Compute name as it is).
    A fresh user read ``gpc__cycles_elapsed.avg.per_second per run`` where the picker said
    ``SM clock rate``."""
    return label(manifest, metric) if metric in roles(manifest) else metric_words(metric)


def readable(manifest: dict[str, Any], metric: str, unit: str = "") -> str:
    """A metric as a picker shows it: its :func:`words`, its unit in brackets (none for a
    duration, ``C.DURATION_METRICS``: the page's time-unit control chooses it; a new user read
    ``gpu__time_duration.sum [ns]`` beside a µs choice), and the raw Nsight Compute name in
    parentheses where the words do not hold it (``GPU kernel time (gpu__time_duration.sum)``,
    ``DRAM bytes [byte] (dram__bytes.sum)``, ``compute_tflops (derived)``). The picker's value
    stays the raw name: this is its ``format_func``."""
    named = words(manifest, metric)
    shown = "" if metric in C.DURATION_METRICS else unit_text(unit)
    said = f"{named} [{shown}]" if shown else named
    return said if metric in named else f"{said} ({metric})"


def picker(manifest: dict[str, Any], metric_units: Mapping[str, str]
           ) -> Callable[[str], str]:
    """The ``format_func`` of every metric picker (Size sweep, Stability, Compare):
    :func:`readable` with each metric's unit from ``metric_units`` (:func:`units`), so one
    metric reads the same on each page (a fresh user of session 23 read "SM throughput [%]",
    "SM throughput" and, for the durations, "Durations (...)" on three pages); a unit in the
    one the values are shown in (:func:`~profiling_worker.bundle.number_text.shown_unit`:
    ``SM clock rate [MHz]``)."""
    return lambda metric: readable(manifest, metric,
                                   shown_unit(unit_text(metric_units.get(metric, "")))[0])


def with_words(frame: pd.DataFrame, manifest: dict[str, Any], column: str = F.METRIC_WORDS
               ) -> pd.DataFrame:
    """``frame`` (a copy) with ``column`` right after its Metric column: each metric's
    :func:`words`, so a table names it as its chart and picker do while the raw name
    stays the key; ``frame`` itself where it has no Metric column or already has ``column``."""
    if C.METRIC not in frame or column in frame:
        return frame
    out = frame.copy()
    named = {m: words(manifest, str(m)) for m in out[C.METRIC].unique()}
    out.insert(list(out.columns).index(C.METRIC) + 1, column, out[C.METRIC].map(named))
    return out


def roles(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """{metric: {"role", "label", ...}} of a bundle's manifest ({} for measured-only bundles)."""
    found = manifest.get(METRIC_ROLES_KEY)
    return {str(k): v for k, v in found.items() if isinstance(v, dict)} \
        if isinstance(found, dict) else {}


def label(manifest: dict[str, Any], metric: str) -> str:
    """``metric`` with its role when it has one: ``compute_tflops (derived)``."""
    role = roles(manifest).get(metric)
    return f"{metric} ({role.get('role', 'derived')})" if role else metric


def describe(manifest: dict[str, Any]) -> list[str]:
    """One sentence per labelled metric, for a caption under a chart or a selector."""
    return [f"`{m}`: {r.get('role', '')}, {r.get('label', '')}" for m, r in roles(manifest).items()]
