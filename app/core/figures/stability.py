"""Stability figures: RSD per annotation x config (2 % line), and per-run values with the CI95
band over the run index (drift)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from profiling_worker.bundle.schema import columns as C, intervals

from app.core.figures import common, theme
from app.core import frame_columns as F
from app.core.numbers import fmt


def build_stability_figure(frame: pd.DataFrame, host_timer: bool = False) -> go.Figure:
    """RSD overview of a :func:`~app.core.views.stability.stability_frame`.

    Returns:
        Grouped bars: x = config (``n=512``), one bar group per annotation, y = relative standard
        deviation (%), a dashed line at the 2 % StableMeasurement threshold; hover shows mean,
        CI95 (with unit), runs and the note. A row without RSD (one run) has no bar; with no
        RSD at all, the figure says why instead.
    """
    title = "Run-to-run spread (RSD) per annotation and config"
    if frame.empty:
        return common.empty(title, "no values")
    if frame[C.RSD].isna().all():
        few = (frame[C.NUM_RUNS] < intervals.MIN_RUNS).all()
        return common.empty(title, intervals.ONE_RUN_NOTE if few else "no relative std dev")
    unit = theme.first_unit(frame[C.UNIT]) if C.UNIT in frame else ""
    fig = go.Figure()
    for i, (annotation, group) in enumerate(frame.groupby(C.ANNOTATION, sort=False)):
        custom = np.column_stack([group[C.AVG], common.ci95_text(
            group[C.CI95_LOWER], group[C.CI95_UPPER], unit), group[C.NUM_RUNS],
                                  group[F.NOTE].fillna("")])
        fig.add_trace(go.Bar(
            x=group[F.CONFIG_LABEL], y=group[C.RSD], name=str(annotation),
            meta=theme.tag(annotation), marker_color=theme.color(i), customdata=custom,
            hovertemplate=(f"<b>{annotation}</b> %{{x}}<br>RSD = %{{y:.3f}} %"
                           f"<br>mean = %{{customdata[0]:{common.hover_format(group[C.AVG])}}}"
                           f" {unit}<br>%{{customdata[1]}}"
                           "<br>runs = %{customdata[2]}<br>%{customdata[3]}<extra></extra>")))
    common.rsd_axes(fig)
    return common.finish(fig, title, host_timer)


def build_runs_figure(runs: pd.DataFrame, metric_label: str, host_timer: bool = False
                      ) -> go.Figure:
    """Per-run values over the run index, with each annotation's mean and CI95 band.

    Args:
        runs: :func:`~app.core.views.stability.stability_runs_frame` (best for one config).
        metric_label: the y quantity in words (``Duration``).

    Returns:
        x = run index (0-based, run order), y = value in the frame's unit; one marker line per
        annotation x config, a shaded band from CI95_Lower to CI95_Upper (none without a CI95:
        one run; an open side, +inf or NaN beside a finite bound, runs to the chart's edge and
        ends in an arrow: :func:`common.open_ends`) and a dotted mean line.
    """
    title = f"{metric_label} per run (run order: drift shows as a slope)"
    if runs.empty:
        return common.empty(title, "this job has no per-run rows")
    unit = theme.first_unit(runs[C.UNIT]) if C.UNIT in runs else ""
    fig = go.Figure()
    groups = runs.groupby([C.ANNOTATION, F.CONFIG_LABEL], sort=False)
    for i, ((annotation, label), group) in enumerate(groups):
        name = f"{annotation} · {label}" if runs[F.CONFIG_LABEL].nunique() > 1 else str(annotation)
        color = theme.color(i)
        x = group[C.RUN].to_numpy(float)
        lo, hi, avg = (float(group[c].iloc[0]) for c in (C.CI95_LOWER, C.CI95_UPPER, C.AVG))
        xs = [x.min() - 0.3, x.max() + 0.3]
        plus, minus = (float(w[0]) for w in common.whiskers([avg], [lo], [hi]))
        if not (np.isnan(plus) and np.isnan(minus)):  # a CI95; an open side: to the chart's edge
            top, bottom = avg + plus, avg - minus
            fig.add_trace(go.Scatter(x=xs + xs[::-1], y=[top, top, bottom, bottom],
                                     fill="toself", mode="lines", fillcolor=color,
                                     opacity=0.15, line={"width": 0}, name=f"{name} CI95",
                                     legendgroup=name, showlegend=False, hoverinfo="skip"))
        ci = common.ci95_text([lo], [hi], unit)[0]
        fig.add_trace(go.Scatter(x=xs, y=[avg, avg], mode="lines", legendgroup=name,
                                 line={"color": color, "dash": "dot"}, showlegend=False,
                                 hovertemplate=(f"<b>{name}</b><br>mean = {fmt(avg)} {unit}<br>"
                                                f"{ci}<extra></extra>")))
        fig.add_trace(theme.points_trace(
            x, group[C.VALUE].to_numpy(float), name, mode="lines+markers", legendgroup=name,
            line={"color": color, "width": 1}, marker={"color": color},
            hovertemplate=(f"<b>{name}</b><br>run %{{x}}<br>value = "
                           f"%{{y:{common.hover_format(group[C.VALUE])}}} {unit}"
                           "<extra></extra>")))
    first, last = float(runs[C.RUN].min()), float(runs[C.RUN].max())
    fig.update_xaxes(title={"text": "run index (0 = first run)"}, range=[first - 0.5, last + 0.5],
                     dtick=1 if last - first < 20 else None)
    fig.update_yaxes(title={"text": theme.axis_title(metric_label, unit)})
    common.open_ends(fig)  # an unbounded CI95: the band runs to the chart's edge
    return common.finish(fig, title, host_timer)
