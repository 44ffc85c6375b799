"""Every figure escapes names from files: built from real H200 bundles whose annotation and
kernel names (in every table) hold an HTML link and an image, and with such names (a GPU name)
in the titles the pages pass, no tag survives in the figure's JSON (what plotly renders)."""

from __future__ import annotations

import numpy as np
import dataclasses
import json
from collections.abc import Callable

import plotly.graph_objects as go
import pytest

from profiling_worker.bundle.loader import Bundle
from app.core.figures import theme
from app.core.figures.backends import build_backends_figure
from app.core.figures.bound import build_bound_figure, build_roofline_figure
from app.core.figures.cache_clock import build_cache_clock_figure
from app.core.figures.clocks import (build_correlation_figure, build_drift_figure,
                                     build_kernel_clock_figure, build_thermal_figure,
                                     build_trace_figure)
from app.core.figures.compare import build_compare_figure
from app.core.figures.kernels import build_kernels_figure
from app.core.figures.memory import build_memory_figure
from app.core.figures.one_kernel import build_one_kernel_figure
from app.core.figures.stability import build_runs_figure, build_stability_figure
from app.core.figures.sweep import build_sweep_figure
from app.core.views.backends import backends_frame
from app.core.views.bound import BoundOptions, bound_frame
from app.core.views.cache_clock import cache_clock_frame
from app.core.views.clocks import (ClocksOptions, collector_runs_frame, correlation_frame,
                                   kernel_clock_frame, thermal_compare_frame, trace_frame)
from app.core.views.compare import CompareOptions, compare_frame
from app.core.views.kernels import kernel_time_frame
from app.core.views.memory import MemoryOptions, memory_frame
from app.core.views.one_kernel import OneKernelOptions, one_kernel_launches_frame
from app.core.views.roofline import RooflineOptions, roofline_ceilings, roofline_frame
from app.core.views.stability import StabilityOptions, stability_frame, stability_runs_frame
from app.core.views.sweep import SweepOptions, sweep_frame
from profiling_worker.bundle.schema import columns as C
from tests.unit.app.bundled import bundled

LINK = '<a href="http://x">x</a>'
IMAGE = "<img src=x>"
EVIL = f"{LINK}{IMAGE}"
NAME_COLUMNS = (C.ANNOTATION, C.KERNEL)  # the GPU name reaches figures in titles only
#: Figures that draw no annotation or kernel name (per GPU or per config only).
NAMELESS = {"correlation", "trace", "kernel_clock", "thermal"}
MARKUP = ("<a ", "<img", "</a>", "&amp;lt;")  # a tag, or an entity escaped twice


def hostile(name: str) -> Bundle:
    """The bundled job with ``EVIL`` before every annotation and kernel name."""
    bundle = bundled(name)
    tables = {}
    for key, table in bundle.tables.items():
        table = table.copy()
        for column in (C.ANNOTATION, C.KERNEL):
            if column in table:
                table[column] = EVIL + table[column].astype(str)
        tables[key] = table
    return dataclasses.replace(bundle, tables=tables)


def _one_kernel(bundle: Bundle) -> go.Figure:
    table = bundle.tables[C.TABLE_RUNS]
    annotation, config = table[C.ANNOTATION].iloc[0], int(table[C.CONFIG].iloc[0])
    frame = one_kernel_launches_frame(bundle, OneKernelOptions(annotation, config))
    return build_one_kernel_figure(frame, f"{annotation} · {EVIL}: duration per run")


def _drift(bundle: Bundle) -> go.Figure:
    return build_drift_figure(collector_runs_frame(bundle, ClocksOptions()))


FIGURES: dict[str, tuple[str, Callable[[Bundle], go.Figure]]] = {
    "sweep": ("h200-ncu-matmul-sweep", lambda b: build_sweep_figure(
        sweep_frame(b, SweepOptions()), "n", False, quantity_label=EVIL)),
    "stability": ("h200-cupti-j1-fp16", lambda b: build_stability_figure(
        stability_frame(b, StabilityOptions()))),
    "runs": ("h200-cupti-stability", lambda b: build_runs_figure(
        stability_runs_frame(b, StabilityOptions()), EVIL)),
    "bound": ("h200-ncu-matmul-sweep", lambda b: build_bound_figure(
        bound_frame(b, BoundOptions()), 60.0)),
    "roofline": ("h200-ncu-roofline", lambda b: build_roofline_figure(
        (points := roofline_frame(b, RooflineOptions())), roofline_ceilings(points))),
    "kernels": ("h200-ncu-linear-backward", lambda b: build_kernels_figure(kernel_time_frame(b))),
    "memory": ("h200-ncu-elementwise", lambda b: build_memory_figure(
        memory_frame(b, MemoryOptions()))),
    "one_kernel": ("h200-ncu-elementwise", _one_kernel),
    "trace": ("h200-cupti-stability", lambda b: build_trace_figure(trace_frame(b))),
    "kernel_clock": ("h200-ncu-matmul-sweep", lambda b: build_kernel_clock_figure(
        kernel_clock_frame(b))),
    "drift": ("h200-cupti-stability", _drift),
    "correlation": ("h200-cupti-stability", lambda b: build_correlation_figure(
        correlation_frame(collector_runs_frame(b, ClocksOptions())))),
    "thermal": ("h200-cupti-stability", lambda b: build_thermal_figure(
        thermal_compare_frame(b, hostile("h200-cupti-stability-thermal-off")))),
    "compare": ("h200-cupti-j1-fp16", lambda b: build_compare_figure(
        compare_frame(b, b, CompareOptions()), f"{EVIL} / {EVIL}")),
    "backends": ("h200-ncu-elementwise", lambda b: build_backends_figure(
        backends_frame(b, hostile("h200-cupti-elementwise")))),
    "cache_clock": ("h200-ncu-elementwise", lambda b: build_cache_clock_figure(
        cache_clock_frame([b, hostile("h200-ncu-elementwise-cache-none")]), 50 * 2**20, EVIL)),
}


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_no_markup_from_names_survives_in_the_figure(name: str) -> None:
    bundle_name, build = FIGURES[name]
    spec = json.dumps(json.loads(build(hostile(bundle_name)).to_json()))  # to_json writes \u003c
    if name not in NAMELESS:
        assert "&lt;a href" in spec  # the names are there, as text
    for tag in MARKUP:
        assert tag not in spec, f"{name}: {tag!r} in the figure"


def test_annotation_colours_follow_escaped_names() -> None:
    bundle = hostile("h200-cupti-j1-fp16")
    fig = build_stability_figure(stability_frame(bundle, StabilityOptions()))
    colors = theme.annotation_colors(bundle.tables[C.TABLE_AGGREGATED][C.ANNOTATION])
    theme.color_annotations(fig, colors)
    tagged = [t for t in fig.data if isinstance(t.meta, dict)]
    assert tagged and {t.marker.color for t in tagged} <= set(colors.values())


def test_an_unbounded_interval_is_marked_open_not_left_undrawn():
    """A ratio whose baseline cannot be told from 0 (upper bound +inf, lower cut at 0 or
    -inf) drew no bar, so the least precise point looked the most precise (a fresh user's
    find); its open side is now an infinite whisker, drawn to the chart's edge by
    common.open_ends; a NaN upper beside a finite lower bound is open too; one run (both NaN)
    still has no bar, and a bounded interval's bars are its bounds."""
    from app.core.figures.common import whiskers

    plus, minus = whiskers([2.0, 5.0, 1.0, 3.0, 4.0], [0.0, 4.0, -np.inf, 1.0, np.nan],
                           [np.inf, 7.0, 3.0, np.nan, np.nan])
    assert np.isposinf(plus[0]) and minus[0] == 2.0
    assert (plus[1], minus[1]) == (2.0, 1.0)
    assert plus[2] == 2.0 and np.isposinf(minus[2])
    assert np.isposinf(plus[3]) and minus[3] == 2.0
    assert np.isnan(plus[4]) and np.isnan(minus[4])
