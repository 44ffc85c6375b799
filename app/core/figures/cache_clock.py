"""Figure of the cache x clock control matrix: time, GB/s and SM clock against the working set."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from profiling_worker.bundle.schema import columns as C

from app.core.figures import common, theme
from app.core import derived, frame_columns as F

_DASHES = ("solid", "dash", "dot", "dashdot")
#: Column, hover label, unit, scale, short axis title, the panel's title above it. The long
#: descriptions sit above the panels, where they have the width: as vertical axis titles they
#: ran past their 210 px panels into the one above (issue 25).
ROWS = ((F.TIME_NS, "Time", "µs", 1e-3, "Time", "Kernel time"),
        (F.GBPS, "Bandwidth", "GB/s", 1.0, "Bandwidth",
         "Bandwidth: DRAM bytes (measured, else analytic) / time"),
        (F.SM_CLOCK_MHZ, "SM clock", "MHz", 1.0, "SM clock", "SM clock the kernel ran at"))


def build_cache_clock_figure(frame: pd.DataFrame, l2_bytes: float | None, l2_source: str,
                             host_timer: bool = False) -> go.Figure:
    """Stacked panels sharing a log2 x axis (working set, bytes): time (µs), GB/s (MB/s where
    the values are below 1 GB/s) and SM clock (MHz), each only where the frame has a value of
    it (a CUPTI or cpu job records no SM clock: its panel was an empty axis from -1 to 4 MHz);
    colour = annotation, dash = variant; a vertical line at the L2 size."""
    rows = [_fitted(row, frame[row[0]]) for row in ROWS
            if row[0] in frame and frame[row[0]].notna().any()] or [ROWS[0]]
    fig = make_subplots(rows=len(rows), cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=[row[5] for row in rows])
    annotations = list(dict.fromkeys(frame[C.ANNOTATION]))
    variants = list(dict.fromkeys(frame[F.VARIANT]))
    for (annotation, variant), part in frame.groupby([C.ANNOTATION, F.VARIANT], sort=False):
        part = part.sort_values(F.WORKING_SET_BYTES)
        x = part[F.WORKING_SET_BYTES].to_numpy(dtype=float)
        for row, (column, label, unit, scale, axis, _title) in enumerate(rows, start=1):
            y = part[column].to_numpy(dtype=float) * scale
            fig.add_trace(go.Scatter(
                x=x, y=y, mode="lines+markers", name=f"{annotation} · {variant}",
                legendgroup=f"{annotation} · {variant}", showlegend=row == 1,
                meta=theme.tag(annotation),
                line={"color": theme.color(annotations.index(annotation)),
                      "dash": _DASHES[variants.index(variant) % len(_DASHES)]},
                # a point whose runs failed the run audit: an x, larger, as on the Size sweep
                marker=common.audit_marker(part, 6),
                customdata=np.stack([part[F.CONFIG_LABEL].to_numpy(), common.audit_cells(part)],
                                    axis=-1),
                hovertemplate=f"{annotation} · {variant}<br>%{{customdata[0]}}<br>working set "
                              f"%{{x:,.0f}} B<br>{label}: %{{y:,.3f}} {unit}"
                              + common.audit_hover(part, 1) + "<extra></extra>"),
                row=row, col=1)
            fig.update_yaxes(title_text=theme.axis_title(axis, unit), row=row, col=1)
    if l2_bytes:
        _l2_line(fig, l2_bytes, l2_source)
    fig.update_xaxes(**theme.LOG_AXIS)  # every row: the L2 line must sit at the same x in each
    fig.update_xaxes(title_text="Working set (bytes, analytic, log scale)", row=len(rows), col=1)
    fig.update_yaxes(**theme.LOG_AXIS, row=1, col=1)  # times span three orders of magnitude
    theme.apply_layout(fig, theme.titled("Cache and clock control", host_timer))
    fig.update_layout(height=180 + 200 * len(rows))  # 780 for three panels
    return fig


def _fitted(row: tuple[str, str, str, float, str, str], values: pd.Series
            ) -> tuple[str, str, str, float, str, str]:
    """The GB/s row in the unit its values' median fits (a cpu job's 0.1-0.45 GB/s in MB/s:
    :func:`app.core.derived.median_rate_step`, as the table's); any other row as it is."""
    if row[2] != "GB/s":
        return row
    factor, unit = derived.median_rate_step(values, "GB/s")
    return row[0], row[1], unit, row[3] * factor, row[4], row[5]


def _l2_line(fig: go.Figure, l2_bytes: float, l2_source: str) -> None:
    """A dotted line at the L2 size in every row, labelled at the foot of the top row. Placed
    by hand: on a log axis an annotation's x is log10 of the value (``add_vline``'s own label
    used the raw bytes and landed far right of the plot, so the line went unlabelled)."""
    fig.add_vline(x=l2_bytes, line_dash="dot", line_color="gray")
    # at the foot of the time panel: right of the L2 size times rise, so its top right holds
    # the largest working sets' points, which the label ran over
    fig.add_annotation(x=float(np.log10(l2_bytes)), xref="x", y=0, yref="y domain",
                       text=f"L2 {l2_bytes / 2**20:.0f} MiB ({l2_source})", showarrow=False,
                       xanchor="left", yanchor="bottom", font={"color": "gray"})
