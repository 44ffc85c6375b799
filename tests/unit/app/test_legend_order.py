"""Legends list a stacked chart's segments in the traces' order (the stack from its base, as the
tables and the hover read), not reversed: plotly's default for stacked bars reversed the Kernels
chart's kernels and put Memory's "written" before "read" (a new user's find)."""

from __future__ import annotations

import plotly.graph_objects as go
from bundled import bundled

from app.core.figures import theme
from app.core.figures.kernels import build_kernels_figure
from app.core.figures.memory import build_memory_figure
from app.core.views.kernels import kernel_time_frame
from app.core.views.memory import MemoryOptions, memory_frame


def test_memory_legend_reads_read_then_written() -> None:
    frame = memory_frame(bundled("h200-ncu-elementwise"), MemoryOptions())
    fig = build_memory_figure(frame[frame["n"] == 2**26])
    assert fig.layout.barmode == "stack" and fig.layout.legend.traceorder == "normal"
    assert [t.name for t in fig.data][:2] == ["DRAM read", "DRAM written"]


def test_kernels_legend_follows_the_stack() -> None:
    for share in (False, True):
        fig = build_kernels_figure(kernel_time_frame(bundled("h200-ncu-matmul-sweep")),
                                   share=share)
        assert fig.layout.barmode == "stack" and fig.layout.legend.traceorder == "normal"


def test_every_figure_sets_its_legend_order() -> None:
    """Any stacked figure finished by apply_layout (a future one too) keeps trace order; one
    with legend groups keeps them together, in trace order."""
    fig = go.Figure([go.Bar(x=["a"], y=[1], name="first"), go.Bar(x=["a"], y=[2], name="second")])
    fig.update_layout(barmode="stack")
    assert theme.apply_layout(fig, "t").layout.legend.traceorder == "normal"
    fig = go.Figure([go.Bar(x=["a"], y=[1], name="x", legendgroup="g"),
                     go.Scatter(x=["a"], y=[1], name="y", fill="tonexty")])
    assert theme.apply_layout(fig, "t").layout.legend.traceorder == "grouped"
