"""Deep-dive bars: speed-of-light throughputs (% of peak) and warp stall reasons."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from app.core.figures import common, theme


def build_bars(frame: pd.DataFrame, label: str, value: str, title: str, unit: str,
               x_max: float | None = None, raw: str | None = None) -> go.Figure:
    """Horizontal bars, largest at the top.

    Args:
        frame: one row per bar; ``label`` names it, ``value`` is its length in ``unit``.
        x_max: fixed end of the axis (100 for % of peak), None = fit the data.
        raw: a column of each bar's raw Nsight Compute name, said in its hover beside the
            label (words: "SM throughput"); None: the label is all.
    """
    if frame.empty:
        return common.empty(title, "not in this report")
    ordered = frame.sort_values(value)
    named = "%{y} (%{customdata})" if raw else "%{y}"
    fig = go.Figure(go.Bar(x=ordered[value], y=ordered[label], orientation="h",
                           customdata=ordered[raw] if raw else None,
                           marker={"color": theme.color(0)},
                           hovertemplate=(f"{named}<br>%{{x:{common.hover_format(ordered[value])}}}"
                                          f" {unit}<extra></extra>")))
    fig.update_xaxes(title={"text": theme.axis_title(value, unit)},
                     range=[0, x_max] if x_max else None, rangemode="tozero")
    fig.update_layout(height=max(220, 28 * len(ordered) + 120), showlegend=False)
    return common.finish(fig, title)
