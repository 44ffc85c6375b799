"""nsight-python's CSV columns per version, and the role every column plays.

Read from nsight-python's own source at its tags (``extraction.extract_df_from_report`` writes
``profiled_data``, ``transformation.aggregate_data`` writes ``processed_data``; 1.1 is the
main branch after v1.0.0, "Add support for custom information collectors"):

=======  ===========================================================  ===========================
version  profiled_data (per run)                                      processed_data (aggregated)
=======  ===========================================================  ===========================
0.9.4    Annotation, Value, Metric, Transformed, Kernel, GPU, Host,   Annotation, <params>,
         ComputeClock, MemoryClock, <params>                          AvgValue..NumRuns, Metric,
                                                                      Transformed, Kernel, GPU,
                                                                      Host, ComputeClock,
                                                                      MemoryClock, CI95_*,
                                                                      RelativeStdDevPct,
                                                                      StableMeasurement,
                                                                      [NormalizationValue],
                                                                      Geomean
0.9.5    as 0.9.4                                                     Annotation, Metric,
                                                                      Transformed, <params>,
                                                                      AvgValue.. as 0.9.4
0.9.6    Annotation, Value, Metric, Kernel, GPU, Host, ComputeClock,  Annotation, Metric,
         MemoryClock, <params>; derived metrics are extra rows        <params>, AvgValue..,
         (Metric = the derive_metric function's name)                 Normalized,
                                                                      [NormalizationValue],
                                                                      Geomean
1.0      as 0.9.6 plus Unit after MemoryClock                         as 0.9.6 plus Unit
1.1      as 1.0 plus info-collector columns between Unit and          as 1.0 plus collector
         <params>                                                     columns (config/annotation
                                                                      scope: <c>_Avg/_Std/_Min/
                                                                      _Max)
=======  ===========================================================  ===========================

Meanings that changed:

* ``Transformed`` (0.9.4, 0.9.5): False, or the name of ``derive_metric``; then ``Value`` is the
  derived value (e.g. TFLOP/s) although ``Metric`` still names the measured metric.
* normalisation (``normalize_against``): 0.9.4/0.9.5 write ``AvgValue = NormalizationValue /
  AvgValue`` (a speed-up) and rename the metric ``"<metric> relative to <annotation>"``; 0.9.6+
  write ``AvgValue / NormalizationValue`` (a ratio) and ``Normalized = <annotation>``
  (``False`` when not normalised). StdDev, MinValue, MaxValue and CI95 stay unnormalised.
* CI95 is ``AvgValue +- 1.96 * StdDev / sqrt(NumRuns)`` in every version (normal approximation).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import pandas as pd

from profiling_worker.bundle.schema import columns as C

#: nsight-python's own columns besides the ones the bundle's tables share
#: (bundle/schema/columns.py).
TRANSFORMED = "Transformed"  # 0.9.4/0.9.5: the derive_metric name of a derived row
NORMALIZED = "Normalized"  # 0.9.6+: the annotation a row is normalised to
#: Per-run columns nsight-python always writes (any version).
RAW_FIXED = (C.ANNOTATION, C.VALUE, C.METRIC, TRANSFORMED, C.KERNEL, "GPU", "Host",
             "ComputeClock", "MemoryClock", C.UNIT)
#: Aggregated columns that are not config parameters (collector statistics aside).
AGG_FIXED = (C.ANNOTATION, C.METRIC, TRANSFORMED, C.AVG, C.STD, C.MIN,
             C.MAX, C.NUM_RUNS, C.KERNEL, "GPU", "Host", "ComputeClock", "MemoryClock",
             C.UNIT, C.CI95_LOWER, C.CI95_UPPER, C.RSD, C.STABLE,
             NORMALIZED, "NormalizationValue", "Geomean")
_COLLECTOR_STAT = re.compile(r"^(?P<name>.+)_(Avg|Std|Min|Max)$")
_RELATIVE = re.compile(r"^(?P<metric>.+) relative to (?P<annotation>.+)$")

ROLE_MEASURED = "measured"
ROLE_DERIVED = "derived"
ROLE_NORMALISED = "normalised"


def detect_version(headers: Sequence[Sequence[str]]) -> str:
    """The nsight-python version range whose CSV layout the headers have (for the manifest)."""
    names = {h for header in headers for h in header}
    if TRANSFORMED in names:
        agg = next((h for h in headers if C.AVG in h), None)
        if agg is not None and list(agg).index(C.METRIC) > list(agg).index(C.AVG):
            return "0.9.4 (Transformed column, Metric after the statistics)"
        return "0.9.4-0.9.5 (Transformed column)"
    if C.UNIT in names:
        return "1.0-1.1 (Unit column)"
    if NORMALIZED in names:
        return "0.9.6 (Normalized column, no Unit)"
    return "0.9.6 (no Unit column)"


def agg_params(header: Sequence[str]) -> list[str]:
    """Config parameters of a processed_data header: the columns before ``AvgValue`` that are
    not nsight-python's (0.9.4 puts them right after Annotation, later versions after Metric
    and Transformed)."""
    cut = list(header).index(C.AVG)
    return [h for h in header[:cut] if h not in AGG_FIXED]


def raw_extra_columns(header: Sequence[str], params: Sequence[str]) -> list[str]:
    """Per-run columns that are neither nsight-python's nor config parameters: 1.1's
    info-collector values."""
    return [h for h in header if h not in RAW_FIXED and h not in params]


def agg_collector_columns(header: Sequence[str], params: Sequence[str]) -> list[str]:
    """Aggregated columns after ``AvgValue`` that nsight-python does not define (1.1 collectors,
    ``<name>_Avg``... for config/annotation scope, ``<name>`` otherwise)."""
    cut = list(header).index(C.AVG)
    return [h for h in header[cut:] if h not in AGG_FIXED and h not in params]


def collector_name(column: str) -> str:
    """``temperature_Avg`` -> ``temperature``."""
    m = _COLLECTOR_STAT.match(column)
    return m.group("name") if m else column


def relative_metric(metric: str) -> tuple[str, str] | None:
    """(metric, annotation) of a 0.9.4/0.9.5 normalised metric name, else None."""
    m = _RELATIVE.match(metric)
    return (m.group("metric"), m.group("annotation")) if m else None


__all__ = ["RAW_FIXED", "AGG_FIXED", "ROLE_MEASURED", "ROLE_DERIVED", "ROLE_NORMALISED",
           "detect_version", "agg_params", "raw_extra_columns", "agg_collector_columns",
           "collector_name", "relative_metric"]
