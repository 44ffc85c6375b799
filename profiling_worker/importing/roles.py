"""What nsight-python's special columns mean for the values (see
:mod:`~profiling_worker.importing.nsight_columns`): derived metrics, normalised values and 1.1's
info-collector columns, so that none of them is drawn as a measured time or taken for a config
parameter.

``metric_roles`` (stored in the manifest under ``metric_roles``,
:data:`~profiling_worker.bundle.schema.manifest.METRIC_ROLES_KEY`) maps a metric name of the
bundle to ``{"role": "derived" | "normalised", "label": <what to print beside it>, ...}``;
pages label such metrics where they draw them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from profiling_worker.bundle.writer import table_columns
from profiling_worker.importing import nsight_columns as N
from profiling_worker.importing.nsight_csv import NsightCsv
from profiling_worker.importing.kinds import NSIGHT_AGG
from profiling_worker.importing.textcsv import METRIC_NAME_RE, NA_STRINGS
from profiling_worker.bundle.schema import columns as C

_FALSE = frozenset({*NA_STRINGS, "False", "false", "FALSE", "0"})
RATIO_UNIT = "ratio"


def _set_metric(it: NsightCsv, mask: pd.Series, names: pd.Series) -> None:
    it.frame.loc[mask, C.METRIC] = names[mask]


def apply_roles(it: NsightCsv) -> dict[str, dict[str, Any]]:
    """Rename derived and normalised metrics in ``it.frame`` and return their roles.

    * 0.9.4/0.9.5 ``Transformed`` = a derive_metric name: the row's Metric becomes that name
      (the value is the derived one, not the measured metric);
    * 0.9.6+ ``Normalized`` = an annotation, and 0.9.4/0.9.5 ``... relative to <annotation>``
      metric names: the metric becomes ``<metric> relative to <annotation>``, unit ``ratio``;
    * any other metric that is not an Nsight Compute name is a derive_metric output.
    """
    f = it.frame
    for col in (C.METRIC, C.UNIT):  # renamed below: plain text, not categoricals
        if col in f.columns:
            f[col] = f[col].astype(object)
    roles: dict[str, dict[str, Any]] = {}
    if N.TRANSFORMED in f.columns:
        t = f[N.TRANSFORMED].astype(str).str.strip()
        mask = ~t.isin(_FALSE)
        for name, source in dict(zip(t[mask], f.loc[mask, C.METRIC])).items():
            roles[name] = {"role": N.ROLE_DERIVED, "from": source,
                           "label": f"derived by derive_metric {name} (from {source})"}
        _set_metric(it, mask, t)
    if N.NORMALIZED in f.columns:
        against = f[N.NORMALIZED].astype(str).str.strip()
        mask = ~against.isin(_FALSE)
        _set_metric(it, mask, f[C.METRIC].astype(str) + " relative to " + against)
        for name, ann in dict(zip(f.loc[mask, C.METRIC], against[mask])).items():
            roles[name] = {"role": N.ROLE_NORMALISED, "against": ann,
                           "label": f"normalised: AvgValue / AvgValue of {ann}"}
    for name in dict.fromkeys(f[C.METRIC].astype(str)):
        rel = N.relative_metric(name)
        if rel and name not in roles:
            roles[name] = {"role": N.ROLE_NORMALISED, "against": rel[1],
                           "label": f"speed-up over {rel[1]} (NormalizationValue / AvgValue, "
                                    "nsight-python 0.9.4/0.9.5)"}
        elif not rel and name not in roles and not METRIC_NAME_RE.match(name) \
                and name != C.HOST_TIME:
            roles[name] = {"role": N.ROLE_DERIVED, "label": f"derived by derive_metric {name}"}
    if roles and C.UNIT not in f.columns:
        f[C.UNIT] = None
    normalised = f[C.METRIC].map(lambda m: roles.get(m, {}).get("role") == N.ROLE_NORMALISED)
    f.loc[normalised.astype(bool), C.UNIT] = RATIO_UNIT
    return roles


def blank_normalised_stats(agg: pd.DataFrame, roles: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """nsight-python normalises AvgValue only: StdDev, min, max and CI95 of a normalised row
    are of the unnormalised values, so they are left out (NaN) rather than drawn beside it.
    RelativeStdDevPct and StableMeasurement are kept: the file's relative std dev is of the
    same runs and unitless, so it holds for the ratio (see ``nsight_values.agg_frame``)."""
    mask = agg[C.METRIC].map(lambda m: roles.get(m, {}).get("role") == N.ROLE_NORMALISED)
    agg = agg.copy()
    agg.loc[mask.astype(bool), [C.STD, C.MIN, C.MAX, C.CI95_LOWER, C.CI95_UPPER]] = np.nan
    return agg


def collectors_frame(it: NsightCsv, params: list[str]) -> tuple[pd.DataFrame, dict[str, str]]:
    """1.1 info-collector columns of a profiled_data file -> the collectors table (one value per
    config x run, from the first annotation and metric), and the text-valued ones (driver
    version ...) as {name: value} for the environment."""
    if it.kind == NSIGHT_AGG:
        return pd.DataFrame(columns=table_columns(C.TABLE_COLLECTORS, params)), {}
    names = N.raw_extra_columns(it.header, params)
    f = it.frame
    first = f[(f[C.ANNOTATION] == f[C.ANNOTATION].iloc[0]) & (f[C.METRIC] == f[C.METRIC].iloc[0])]
    run = first.groupby(C.CONFIG, sort=False).cumcount()
    rows, text = [], {}
    for name in names:
        values = pd.to_numeric(first[name].astype(str).str.strip(), errors="coerce")
        if values.notna().any():
            rows.append(pd.DataFrame({C.CONFIG: first[C.CONFIG], **{p: first[p] for p in params},
                                      C.RUN: run, C.COLLECTOR: name, C.VALUE: values,
                                      C.UNIT: None}))
        else:
            text[name] = str(first[name].iloc[0])[:200]
    cols = table_columns(C.TABLE_COLLECTORS, params)
    frame = pd.concat(rows, ignore_index=True)[cols] if rows else pd.DataFrame(columns=cols)
    return frame, text


def agg_collector_stats(it: NsightCsv) -> list[str]:
    """Names of the collectors a processed_data file summarises (1.1)."""
    return list(dict.fromkeys(N.collector_name(c)
                              for c in N.agg_collector_columns(it.header, it.params)))


__all__ = ["RATIO_UNIT", "apply_roles", "blank_normalised_stats",
           "collectors_frame", "agg_collector_stats"]
