"""Finishing touches shared by the analysis figures (on top of :mod:`app.core.figures.theme`).

Backgrounds are transparent and grid lines half-transparent grey, so a figure reads on Streamlit's
light and dark themes alike; fonts come from the active theme.
"""

from __future__ import annotations

import plotly.graph_objects as go

from app.core.figures import theme

GRID = "rgba(128,128,128,0.25)"
REFERENCE = "rgba(128,128,128,0.9)"  # reference lines (100 %, 2 %, ratio 1)


def finish(fig: go.Figure, title: str, host_timer: bool = False) -> go.Figure:
    """Shared layout, the host-timer caveat in the title, transparent backgrounds."""
    theme.apply_layout(fig, theme.titled(title, host_timer))
    fig.update_layout(paper_bgcolor="rgba(0,0,0,0)", plot_bgcolor="rgba(0,0,0,0)")
    fig.update_xaxes(gridcolor=GRID, zerolinecolor=GRID)
    fig.update_yaxes(gridcolor=GRID, zerolinecolor=GRID)
    return fig


def empty(title: str, message: str) -> go.Figure:
    """A figure that says why there is nothing to draw."""
    fig = go.Figure()
    fig.add_annotation(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return finish(fig, title)


def hline(fig: go.Figure, y: float, text: str, **kwargs: object) -> None:
    """A dashed reference line with a label at the right."""
    fig.add_hline(y=y, line_dash="dash", line_color=REFERENCE, annotation_text=text,
                  annotation_position="top right", **kwargs)
