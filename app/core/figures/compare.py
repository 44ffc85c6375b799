"""Compare figure: candidate / baseline ratio per annotation x config with its CI95."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from profiling_worker.bundle.schema import columns as C

from profiling_worker.bundle.gate.judge import NOT_DURATION_WORDS, REASON
from profiling_worker.bundle.gate.verdict import Outcome

from app.core.figures import common, theme
from app.core import frame_columns as F

#: Marker per gate outcome (app/core/views/compare.py's Verdict).
SYMBOLS = {Outcome.REGRESSED.value: "triangle-up", Outcome.IMPROVED.value: "triangle-down",
           NOT_DURATION_WORDS[Outcome.REGRESSED.value]: "triangle-up",
           NOT_DURATION_WORDS[Outcome.IMPROVED.value]: "triangle-down",
           Outcome.SAME.value: "circle-open", Outcome.AMBIGUOUS.value: "square-open",
           Outcome.CLOCK_EXPLAINED.value: "x-open", Outcome.NOT_COMPARABLE.value: "diamond-open"}


def build_compare_figure(frame: pd.DataFrame, title: str = "Candidate / baseline",
                         host_timer: bool = False, table: pd.DataFrame | None = None
                         ) -> go.Figure:
    """Ratios of a :func:`~app.core.views.compare.compare_frame`; ``table``: the page's
    :func:`~app.core.views.compare.compare_table` of it (its rows, unit and Reason), whose
    values the hover says (None: the frame's own, in its unit). The page passes the table it
    shows, so the hover and the table are one (a figure never builds a view: test_boundaries).

    Returns:
        x = config (category), y = ratio (unitless, candidate / baseline), one marker series per
        annotation with asymmetric CI95 error bars; the gate's outcome (Verdict) as the marker:
        filled triangle up regressed (or higher), down improved (or lower), hollow circle same,
        hollow square ambiguous, hollow x clock-explained, hollow diamond not comparable; a
        dashed line at 1. Hover shows both means, the outcome and its why (the Reason) as the
        table shows them (:func:`~app.core.views.compare.compare_table`: in its unit, µs for
        durations, written as its columns are, :func:`~app.core.figures.common.hover_format`);
        a fresh user's hover read "not comparable" without a word why, and "4.12609e+6 ns"
        beside the table's µs (issue 37).
    """
    if frame.empty:
        return common.empty(title, "nothing in common")
    shown = frame if table is None else table  # the table's unit and values
    unit = str(shown[C.UNIT].iloc[0])
    reasons = shown[REASON] if REASON in shown else pd.Series("", index=frame.index)
    means = common.hover_format(shown[[F.BASELINE_AVG, F.CANDIDATE_AVG]].to_numpy(float))
    fig = go.Figure()
    for i, (annotation, group) in enumerate(frame.groupby(C.ANNOTATION, sort=False)):
        ci = common.ratio_ci95_text(group[F.RATIO_CI95_LOWER], group[F.RATIO_CI95_UPPER])
        why, why_lines = common.hover_lines(reasons.reindex(group.index).fillna(""), 6, "why: ")
        custom = np.column_stack([shown.loc[group.index, F.BASELINE_AVG],
                                  shown.loc[group.index, F.CANDIDATE_AVG],
                                  group[F.RATIO_CI95_LOWER], group[F.RATIO_CI95_UPPER],
                                  group[F.VERDICT], ci, why])
        fig.add_trace(common.ratio_trace(
            group, annotation, i, F.RATIO, F.RATIO_CI95_LOWER, F.RATIO_CI95_UPPER,
            marker={"symbol": [SYMBOLS.get(v, "circle") for v in group[F.VERDICT]]},
            customdata=custom,
            hovertemplate=(f"<b>{annotation}</b> %{{x}}<br>ratio = %{{y:.4f}}"
                           "<br>%{customdata[5]}"
                           f"<br>baseline = %{{customdata[0]:{means}}} {unit}"
                           f"<br>candidate = %{{customdata[1]:{means}}} {unit}"
                           "<br>%{customdata[4]}" + why_lines + "<extra></extra>")))
    common.ratio_axes(fig, "candidate / baseline")
    common.open_ends(fig)  # an unbounded CI95: a bar to the chart's edge
    return common.finish(fig, title, host_timer)  # its title wrapped: the job ids in full
