"""Size sweep figure: one line per annotation, log2 x axis, CI95 error bars (plotly)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from profiling_worker.schema import columns as C

from app.core import derived
from app.core.figures import theme


def build_sweep_figure(frame: pd.DataFrame, x: str, host_timer: bool,
                       quantity_label: str = "Time") -> go.Figure:
    """Draw a sweep frame (see :func:`app.core.views.sweep.sweep_frame`).

    Args:
        frame: Annotation, <x>, Unit, AvgValue, CI95_Lower, CI95_Upper, NumRuns.
        x: the size parameter column (x axis).
        host_timer: True for cpu-backend jobs; the title then says "(host wall-clock, not GPU)".
        quantity_label: the y quantity in words (``Time``, ``Throughput``...).

    Returns:
        A figure with x = ``x`` on a log axis with ticks at the sizes (``2^k`` labels for powers
        of two), y = AvgValue in the frame's unit, asymmetric error bars from CI95, hover with
        exact values and units.
    """
    unit = str(frame[C.UNIT].iloc[0]) if not frame.empty else ""
    fig = go.Figure()
    for i, (annotation, group) in enumerate(frame.groupby(C.ANNOTATION, sort=False)):
        fig.add_trace(_trace(group, annotation, x, unit, i))
    sizes = np.sort(frame[x].astype(float).unique()) if not frame.empty else np.array([])
    fig.update_xaxes(type="log", tickvals=sizes, ticktext=[derived.log2_label(s) for s in sizes],
                     title={"text": f"{x} (size parameter, log2 scale)"})
    fig.update_yaxes(title={"text": theme.axis_title(quantity_label, unit)})
    title = theme.titled(f"{quantity_label} vs {x}", host_timer)
    return theme.apply_layout(fig, title)


def _trace(group: pd.DataFrame, annotation: str, x: str, unit: str, i: int) -> go.Scatter:
    xs = group[x].to_numpy(dtype=float)
    avg = group[C.AVG].to_numpy(dtype=float)
    lo = group[C.CI95_LOWER].to_numpy(dtype=float)
    hi = group[C.CI95_UPPER].to_numpy(dtype=float)
    runs = group[C.NUM_RUNS].to_numpy(dtype=float) if C.NUM_RUNS in group else np.full_like(avg, np.nan)
    custom = np.column_stack([lo, hi, runs])
    return go.Scatter(
        x=xs, y=avg, mode="lines+markers", name=str(annotation),
        line={"color": theme.color(i)},
        error_y={"type": "data", "symmetric": False, "array": hi - avg, "arrayminus": avg - lo},
        customdata=custom,
        hovertemplate=(f"<b>{annotation}</b><br>{x} = %{{x:,}}<br>mean = %{{y:.6g}} {unit}"
                       f"<br>CI95 = [%{{customdata[0]:.6g}}, %{{customdata[1]:.6g}}] {unit}"
                       "<br>runs = %{customdata[2]:.0f}<extra></extra>"),
    )
