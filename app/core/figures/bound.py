"""Bound figure (SM % vs DRAM % bars, 100 % line, "limited by" labels) and roofline figure
(log-log, ceilings per dtype, one trajectory per annotation across sizes)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from profiling_worker.bundle.schema import columns as C

from app.core.figures import common, theme
from app.core import derived, frame_columns as F


#: Marker above each SM/DRAM pair per limiter (the text label collided with its neighbours).
#: Open grey symbols: in the legend they must not look like the filled SM / DRAM bars.
LIMITER_MARKS = (("compute", "limited by compute (SM)", "triangle-up-open"),
                 ("memory", "limited by memory (DRAM)", "square-open"),
                 ("latency", "latency / launch bound", "circle-open"))
LIMITER_COLOR = "rgba(90,90,90,0.95)"


def build_bound_figure(frame: pd.DataFrame, threshold_pct: float, host_timer: bool = False
                       ) -> go.Figure:
    """SM and DRAM throughput (% of peak) per annotation x config.

    Returns:
        Grouped bars: x = ``annotation · config``, SM % and DRAM % side by side, a dashed line at
        100 % and a dotted one at the latency threshold (named in the legend), and above each
        pair one small marker for what limits it (a symbol per limiter, named in the legend; a
        marker never collides with its neighbours as text labels did); hover shows the exact %,
        time (µs), achieved GB/s, SM clock (MHz) and the full "limited by" label.
    """
    title = "SM vs DRAM throughput (% of peak)"
    if frame.empty:
        return common.empty(title, "no values")
    x = [f"{a} · {c}" for a, c in zip(frame[C.ANNOTATION], frame[F.CONFIG_LABEL])]
    custom = np.column_stack([frame[F.TIME_NS] / 1e3, frame[F.ACHIEVED_GBPS], frame[F.SM_CLOCK_MHZ],
                              frame[F.LIMITED_BY], common.audit_cells(frame)])
    fig = go.Figure()
    for i, (col, name) in enumerate(((F.SM_PCT, "SM throughput"), (F.DRAM_PCT, "DRAM throughput"))):
        fig.add_trace(go.Bar(
            x=x, y=frame[col], name=name, marker_color=theme.BOUND_COLORS[i], customdata=custom,
            hovertemplate=(f"<b>%{{x}}</b><br>{name} = %{{y:.2f}} % of peak"
                           f"<br>time = %{{customdata[0]:{common.hover_format(custom[:, 0])}}} µs"
                           "<br>DRAM = %{customdata[1]:,.1f} GB/s "
                           "(measured bytes / time)"
                           "<br>SM clock = %{customdata[2]:.0f} MHz"
                           "<br>limited by: %{customdata[3]}" + common.audit_hover(frame, 4)
                           + "<extra></extra>")))
    top = np.maximum(frame[F.SM_PCT].to_numpy(float), frame[F.DRAM_PCT].to_numpy(float))
    limited = frame[F.LIMITED_BY].astype(str).to_numpy()
    xs = np.asarray(x, dtype=object)
    pcts = np.column_stack([frame[F.SM_PCT], frame[F.DRAM_PCT], limited])
    for prefix, name, symbol in LIMITER_MARKS:
        hit = np.char.startswith(limited.astype(str), prefix)
        if not hit.any():
            continue
        fig.add_trace(go.Scatter(
            x=xs[hit], y=top[hit] + 5, mode="markers", name=name,
            marker={"symbol": symbol, "size": 11, "color": LIMITER_COLOR,
                    "line": {"width": 2, "color": LIMITER_COLOR}},
            customdata=pcts[hit],
            hovertemplate=("<b>%{x}</b><br>limited by: %{customdata[2]}"
                           "<br>SM = %{customdata[0]:.2f} %, DRAM = %{customdata[1]:.2f} %"
                           "<extra></extra>")))
    # a pair whose runs failed the run audit: an x above its limiter's marker
    if (marks := common.audit_bar_marks(xs, top + 12, frame)) is not None:
        fig.add_trace(marks)
    fig.add_hline(y=100.0, line_dash="dash", line_color=common.REFERENCE,
                  annotation_text="100 % of peak", annotation_position="top left")
    fig.add_hline(y=threshold_pct, line_dash="dot", line_color=common.REFERENCE)
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", hoverinfo="skip",
                             name=f"latency threshold {threshold_pct:g} %",
                             line={"dash": "dot", "color": common.REFERENCE}))
    fig.update_layout(barmode="group")
    fig.update_xaxes(title={"text": "annotation · config"}, type="category")
    fig.update_yaxes(title={"text": theme.axis_title("Throughput", "% of peak")},
                     range=[0, 118])
    return common.finish(fig, title, host_timer)


def build_roofline_figure(frame: pd.DataFrame, ceilings: pd.DataFrame, host_timer: bool = False
                          ) -> go.Figure:
    """Achieved FLOP/s against arithmetic intensity (FLOP/byte), log-log: in TFLOP/s beside
    the datasheet roofs; without roofs (a host-timed job) in the FLOP/s unit the points' median
    fits (:func:`app.core.numbers.rate_step`).

    Args:
        frame: :func:`~app.core.views.roofline.roofline_frame`.
        ceilings: :func:`~app.core.views.roofline.roofline_ceilings` (datasheet roofs).

    Returns:
        One line+marker trace per annotation joined across sizes in size order (the trajectory),
        the DRAM roof (TFLOP/s = GB/s x AI / 1000) and a flat roof per dtype, each clipped where it
        meets the DRAM roof and named with its source in the hover.
    """
    title = "Roofline: achieved FLOP/s vs arithmetic intensity"
    points = drawn_points(frame)
    if points.empty:
        return common.empty(title, "no FLOP and byte counts")
    ai_all = points[F.ARITHMETIC_INTENSITY].to_numpy(float)
    lo, hi = ai_all.min() / 4, ai_all.max() * 4
    fig = go.Figure()
    _ceilings(fig, ceilings, lo, hi)
    # without roofs (a host-timed job) the points alone set the unit: a cpu job's 0.05 TFLOP/s
    # read as two ticks, 0.05 and 0.1; with roofs, TFLOP/s as the datasheet gives them
    # (the table's and the CSV's unit too: app.core.views.roofline.roofline_table)
    factor, unit = derived.roofline_rate_step(points, with_roofs=not ceilings.empty)
    labels, positions = trajectory_labels(points)
    for i, (annotation, group) in enumerate(points.groupby(C.ANNOTATION, sort=False)):
        custom = np.column_stack([group[F.CONFIG_LABEL], group[F.PCT_OF_DATASHEET],
                                  group[F.PCT_OF_CLOCK_PEAK], group[F.FLOPS_SOURCE],
                                  group[F.BYTES_SOURCE], group[F.TIME_NS] / 1e3,
                                  common.audit_cells(group)])
        # the hover's numbers as the roofline table writes them (one format per trace)
        ai, rate, time_us = (common.hover_format(v) for v in (
            group[F.ARITHMETIC_INTENSITY], group[F.ACHIEVED_TFLOPS] * factor,
            group[F.TIME_NS] / 1e3))
        fig.add_trace(go.Scatter(
            x=group[F.ARITHMETIC_INTENSITY], y=group[F.ACHIEVED_TFLOPS] * factor,
            mode="lines+markers+text",
            name=str(annotation), meta=theme.tag(annotation), text=labels.loc[group.index],
            textposition=positions.loc[group.index],
            textfont={"color": theme.color(i)},
            line={"color": theme.color(i)}, customdata=custom,
            # a point whose runs failed the run audit: an x, larger, as on the Size sweep
            marker=common.audit_marker(group, 9) or {"size": 9},
            hovertemplate=(f"<b>{annotation}</b> %{{customdata[0]}}"
                           f"<br>AI = %{{x:{ai}}} FLOP/byte<br>achieved = %{{y:{rate}}} {unit}"
                           "<br>= %{customdata[1]:.1f} % of datasheet peak"
                           "<br>= %{customdata[2]:.1f} % of clock-adjusted peak"
                           f"<br>time = %{{customdata[5]:{time_us}}} µs"
                           "<br>FLOPs: %{customdata[3]}<br>bytes: %{customdata[4]}"
                           + common.audit_hover(group, 6) + "<extra></extra>")))
    fig.update_xaxes(**theme.LOG_AXIS, title={"text": theme.axis_title("Arithmetic intensity",
                                                                       "FLOP/byte")})
    fig.update_yaxes(**theme.LOG_AXIS, title={"text": theme.axis_title("Achieved throughput",
                                                                       unit)})
    return common.finish(fig, title, host_timer)


def drawn_points(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of a roofline frame :func:`build_roofline_figure` draws: those with an
    achieved FLOP/s and an arithmetic intensity."""
    return frame.dropna(subset=[F.ACHIEVED_TFLOPS, F.ARITHMETIC_INTENSITY])


#: Size of a point label ("n=1024") as a fraction of the decades shown on each log axis.
LABEL_BOX = (0.07, 0.06)
_POSITIONS = ("top left", "bottom right")


def trajectory_labels(points: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """Text and text position beside each roofline point.

    Only the first and the last point of each annotation's trajectory get their config
    (``n=1024``), "top left" of the point, else "bottom right" where that would overlap a label
    already placed; a label that fits in neither place, or repeats the same text at the same
    spot (fp16 and bf16 trajectories that coincide), is left out. Every point keeps its hover.
    """
    x = np.log10(points[F.ARITHMETIC_INTENSITY].to_numpy(float))
    y = np.log10(points[F.ACHIEVED_TFLOPS].to_numpy(float))
    width = LABEL_BOX[0] * (np.ptp(x) + 1.2)  # the x axis shows AI / 4 .. AI x 4
    height = LABEL_BOX[1] * max(np.ptp(y), 1.0)
    where = dict(zip(points.index, zip(x, y)))
    text = pd.Series("", index=points.index, dtype=object)
    position = pd.Series(_POSITIONS[0], index=points.index, dtype=object)
    placed: list[tuple[float, float, float, float, str, float, float]] = []
    for _, group in points.groupby(C.ANNOTATION, sort=False):
        for idx in dict.fromkeys((group.index[0], group.index[-1])):
            px, py = where[idx]
            label = str(points.at[idx, F.CONFIG_LABEL])
            if any(t == label and abs(px - qx) < width / 2 and abs(py - qy) < height / 2
                   for *_, t, qx, qy in placed):
                continue
            for pos in _POSITIONS:
                x0, y0 = (px - width, py) if pos == "top left" else (px, py - height)
                box = (x0, x0 + width, y0, y0 + height)
                if not any(box[0] < b[1] and b[0] < box[1] and box[2] < b[3] and b[2] < box[3]
                           for b in placed):
                    placed.append((*box, label, px, py))
                    text[idx], position[idx] = label, pos
                    break
    return text, position


_ROOF_DASHES = ("dot", "dashdot", "longdash", "longdashdot")


def _ceilings(fig: go.Figure, ceilings: pd.DataFrame, lo: float, hi: float) -> None:
    memory = ceilings[ceilings[F.KIND] == "memory"]
    gbps = float(memory[C.VALUE].iloc[0]) if len(memory) else None
    compute = ceilings[ceilings[F.KIND] == "compute"]
    top = float(compute[C.VALUE].max()) if len(compute) else None
    if gbps:
        end = min(hi, top * 1e3 / gbps) if top else hi
        xs = np.geomspace(lo, max(end, lo * 1.01), 20)
        fig.add_trace(go.Scatter(
            x=xs, y=gbps * xs / 1e3, mode="lines", name=f"DRAM roof {gbps:,.0f} GB/s",
            line={"color": common.REFERENCE, "dash": "dash"},
            hovertemplate=(f"DRAM roof {gbps:,.0f} GB/s<br>AI = %{{x:{common.hover_format(xs)}}}"
                           f" FLOP/byte<br>%{{y:{common.hover_format(gbps * xs / 1e3)}}} TFLOP/s"
                           f"<br>{memory[F.SOURCE].iloc[0]}<extra></extra>")))
    for j, (_, roof) in enumerate(compute.iterrows()):
        start = max(lo, roof[C.VALUE] * 1e3 / gbps) if gbps else lo
        fig.add_trace(go.Scatter(
            x=[start, max(hi, start * 1.01)], y=[roof[C.VALUE]] * 2, mode="lines",
            name=f"{roof[F.CEILING]} {roof[C.VALUE]:,.1f} TFLOP/s",
            line={"color": common.REFERENCE, "dash": _ROOF_DASHES[j % len(_ROOF_DASHES)],
                  "width": 1.5},  # grey: annotation colours belong to the trajectories
            hovertemplate=(f"{roof[F.CEILING]}<br>{roof[C.VALUE]:,.1f} TFLOP/s"
                           f"<br>{roof[F.SOURCE]}<extra></extra>")))
