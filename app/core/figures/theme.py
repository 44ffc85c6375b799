"""Shared look of every figure: colours, axis titles with units, the host-timer caveat."""

from __future__ import annotations

import plotly.graph_objects as go

HOST_TIMER_SUFFIX = "(host wall-clock, not GPU)"
COLORS = ("#76b900", "#1f77b4", "#ff7f0e", "#d62728", "#9467bd", "#8c564b", "#e377c2",
          "#17becf", "#7f7f7f", "#bcbd22")  # NVIDIA green first


def color(i: int) -> str:
    """The i-th series colour (cycles)."""
    return COLORS[i % len(COLORS)]


def titled(title: str, host_timer: bool) -> str:
    """``title`` plus the host-timer caveat for cpu-backend jobs."""
    return f"{title} {HOST_TIMER_SUFFIX}" if host_timer else title


def axis_title(label: str, unit: str) -> str:
    """``Label (unit)``, or the label alone for a unitless axis."""
    return f"{label} ({unit})" if unit else label


def apply_layout(fig: go.Figure, title: str) -> go.Figure:
    """Common layout: title, legend above the plot, compact margins, hover per point."""
    fig.update_layout(title={"text": title}, hovermode="closest", template="plotly_white",
                      legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0},
                      margin={"l": 60, "r": 20, "t": 80, "b": 60})
    return fig
