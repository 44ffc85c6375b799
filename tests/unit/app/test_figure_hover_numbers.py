"""Every figure's hover writes its numbers as the tables do (issue 37: one number format for
pages, tables, hover, report): built from the bundled H200 jobs, each point's hover, rendered
from the trace's hovertemplate, values and customdata, shows no exponent form ("4.12609e+6
ns", the Compare hover a fresh user of session 25 read beside the table's µs)."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import plotly.graph_objects as go
import pytest

from app.core import frame_columns as F
from app.core.figures import common
from app.core.figures.compare import build_compare_figure
from app.core.views.compare import CompareOptions, compare_frame, compare_table
from profiling_worker.bundle.schema import columns as C
from tests.unit.app.bundled import bundled
from tests.unit.app.test_figure_text import FIGURES, hostile

#: A field of a hovertemplate: ``%{y:,.2f}``, ``%{customdata[3]}``.
_FIELD = re.compile(r"%\{(?P<name>[a-z]+)(?:\[(?P<index>\d+)\])?(?::(?P<spec>[^}]*))?\}")
#: A number in exponent form, as Plotly's d3 (``4.12609e+6``) or Python (``1e-05``) write it.
_EXPONENT = re.compile(r"\d(?:\.\d+)?e[+-]?\d")


def _value(trace: Any, name: str, index: str | None, point: int) -> Any:
    values = trace[name]
    if values is None:
        return None
    values = np.asarray(values, dtype=object)
    if values.ndim == 0:  # one value for every point
        return values.item()
    row = values[point] if point < len(values) else None
    return row[int(index)] if index is not None and row is not None else row


def _written(value: Any, spec: str | None) -> str:
    """``value`` as the hover writes it: d3's format specs of these figures are Python's."""
    if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
        number = float(value)
        if not math.isfinite(number):
            return str(number)
        return format(number, spec.replace("~", "")) if spec else repr(number)
    return str(value)


def hover_texts(fig: go.Figure) -> list[str]:
    """Each point's hover of every trace of ``fig`` with a hovertemplate."""
    out = []
    for trace in fig.data:
        template = trace["hovertemplate"] if "hovertemplate" in trace else None
        if not template or "y" not in trace or trace["y"] is None:
            continue
        for point in range(len(trace["y"])):
            out.append(_FIELD.sub(lambda m: _written(_value(
                trace, m["name"], m["index"], point), m["spec"]), template))
    return out


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_no_hover_writes_a_number_in_exponent_form(name: str) -> None:
    bundle_name, build = FIGURES[name]
    texts = hover_texts(build(hostile(bundle_name)))  # as the names test builds them
    assert texts, f"{name}: no hover"
    shown = [t for t in texts if _EXPONENT.search(t)]
    assert not shown, f"{name}: {shown[:2]}"


def test_the_compare_hover_says_the_means_as_the_table() -> None:
    """The Compare hover's means are the table's: its unit (µs) and its values."""
    bundle = bundled("h200-cupti-j1-fp16")
    frame = compare_frame(bundle, bundle, CompareOptions())
    table = compare_table(frame)
    texts = hover_texts(build_compare_figure(frame, table=table))
    unit = str(table[C.UNIT].iloc[0])
    assert unit == "µs" and all(f" {unit}" in t and " ns" not in t for t in texts)
    first = texts[0]
    means = table[[F.BASELINE_AVG, F.CANDIDATE_AVG]].to_numpy(float)
    said = re.search(r"baseline = ([\d,.]+)", first)[1]
    assert said == format(float(table.iloc[0][F.BASELINE_AVG]), common.hover_format(means))
