"""Backends figure: Nsight Compute / CUPTI duration ratio per annotation x config."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from profiling_worker.bundle.schema import columns as C

from app.core.figures import common
from app.core import frame_columns as F


def build_backends_figure(frame: pd.DataFrame) -> go.Figure:
    """Ratios of a :func:`~app.core.views.backends.backends_frame`.

    Returns:
        x = config (category), y = ncu duration / CUPTI duration (ratio) per annotation with CI95
        error bars, a dashed line at 1; hover shows the CI95 (:func:`common.ratio_ci95_text`),
        both durations (µs) and RSDs (%).
    """
    title = "Nsight Compute / CUPTI kernel duration"
    if frame.empty:
        return common.empty(title, "no common configs")
    fig = go.Figure()
    for i, (annotation, group) in enumerate(frame.groupby(C.ANNOTATION, sort=False)):
        custom = np.column_stack([group[F.NCU_US], group[F.CUPTI_US], _rsd(group[F.NCU_RSD]),
                                  _rsd(group[F.CUPTI_RSD]), group[F.VERDICT],
                                  common.ratio_ci95_text(group[F.RATIO_CI95_LOWER],
                                                         group[F.RATIO_CI95_UPPER])])
        us = common.hover_format(group[[F.NCU_US, F.CUPTI_US]].to_numpy(float))
        fig.add_trace(common.ratio_trace(
            group, annotation, i, F.RATIO_NCU_OVER_CUPTI, F.RATIO_CI95_LOWER, F.RATIO_CI95_UPPER,
            customdata=custom,
            hovertemplate=(f"<b>{annotation}</b> %{{x}}<br>ncu / cupti = %{{y:.4f}}"
                           "<br>%{customdata[5]}"
                           f"<br>ncu = %{{customdata[0]:{us}}} µs (%{{customdata[2]}})"
                           f"<br>cupti = %{{customdata[1]:{us}}} µs (%{{customdata[3]}})"
                           "<br>%{customdata[4]}<extra></extra>")))
    common.ratio_axes(fig, "ncu / cupti duration")
    common.open_ends(fig)  # an unbounded CI95: a bar to the chart's edge
    return common.finish(fig, title)


def _rsd(values: pd.Series) -> list[str]:
    """``RSD 1.23 %`` per point, or ``no RSD`` where it is missing (one run)."""
    return [f"RSD {v:.2f} %" if pd.notna(v) else "no RSD" for v in values]
