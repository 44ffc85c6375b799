"""A job's analysis sections, one per analysis of :data:`app.core.pages.ANALYSES` (the list the
link bar and the agent door read too), each built from the table its page opens on and drawn by
the dashboard's own figure builders, so the report shows the numbers the pages show. Charts
beside the first table open as their page does: the last config on the memory page, the first
config on the stability and clocks per-run charts, Share % on the kernels page, the first
fusion pair. A view that cannot draw for this job (:class:`~app.core.metrics.MissingData`)
becomes a note saying why and what the dashboard offers to get it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial

import pandas as pd

from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.schema import columns as C, interval_words as W, intervals

from app.core import derived, frame_columns as F
from profiling_worker.bundle.loader import Bundle
from app.core.figures.bound import build_bound_figure, build_roofline_figure, drawn_points
from app.core.figures.clocks import (build_correlation_figure, build_drift_figure,
                                     build_kernel_clock_figure, build_trace_figure)
from app.core.figures.kernels import build_kernels_figure
from app.core.figures.memory import build_fusion_figure, build_memory_figure
from app.core.figures.stability import build_runs_figure, build_stability_figure
from app.core.figures.sweep import build_sweep_figure, drawn_rows, wants_log_y
from app.core.figures.timeline import build_timeline_figure
from app.core.kernel_catalog import builtin_kernels
from app.core.metrics import DURATIONS, MissingData, no_values_text
from app.core.pages import ANALYSES, COLLECTORS, STABILITY
from app.core.share import document as H
from app.core.share.launches import RULES_TITLE
from app.core.share.job import job_colors
from app.core.views.bound import LATENCY_THRESHOLD_PCT
from app.core.views.clocks import (collector_runs_frame, correlation_frame, max_sm_clock_mhz,
                                   throttle_frame)
from app.core.views.kernels import kernel_counts_frame
from app.core.views.chart_units import kernels_table, memory_table
from app.core.views.memory import MemoryOptions, fusion_frame, fusion_pairs
from app.core.views.roofline import roofline_ceilings, roofline_table
from app.core.views.run_audit import (REPORT_EVIDENCE, badge_frame, chart_audit_notes,
                                      points_of)
from app.core.views.stability import stability_runs_frame, stable_text
from app.core.views.sweep import sweep_x
from app.core.views.timeline import timeline_view

#: Draws an analysis's section from the bundle and ``table``, which builds the table the page
#: opens on (:meth:`app.core.pages.Analysis.table`; it may raise MissingData).
Table = Callable[[], pd.DataFrame]
Draw = Callable[[Bundle, Table, H.Section], None]


def few_runs_text(frame: pd.DataFrame) -> str | None:
    """The sweep and stability pages' note (Markdown) when rows of ``frame`` (an aggregated-style
    frame with NumRuns) have fewer than ``intervals.MIN_RUNS`` runs: their StdDev, CI95 and
    relative std dev are empty (undefined with n - 1 = 0), not 0; and when rows of at least
    that many runs read one value each (:func:`~profiling_worker.bundle.schema.intervals.
    constant`): their spread is 0, said so. None when neither."""
    if C.NUM_RUNS not in frame:
        return None
    rows = counted(len(frame), "row")
    few = int((frame[C.NUM_RUNS] < intervals.MIN_RUNS).sum())
    same = int(intervals.constant(frame[C.NUM_RUNS], frame[C.STD]).sum()) if C.STD in frame \
        else 0
    said = []
    if few:
        said.append(f"**{intervals.ONE_RUN_NOTE}** ({few} of {rows}): StdDev, CI95 and "
                    "relative std dev are missing (a dash in the tables, empty in the CSV) and no "
                    "error bar or band is drawn; such a measurement is never called stable. Run "
                    "the job with 2 or more runs.")
    if same:
        said.append(f"**{intervals.CONSTANT_NOTE[:1].upper()}{intervals.CONSTANT_NOTE[1:]}** "
                    f"({same} of {rows}): the runs did not vary at the values' resolution (a "
                    "timer's step, a counter's unit), so the interval has no width to give.")
    return " ".join(said) or None


def _few_runs(section: H.Section, frame: pd.DataFrame) -> None:
    text = few_runs_text(frame)
    if text:
        section.add(H.note(text.replace("**", "")))


def _sweep(bundle: Bundle, table: Table, section: H.Section) -> None:
    frame = table()
    x = sweep_x(bundle)
    if frame.empty:
        raise MissingData(no_values_text(DURATIONS, bundle.status, error=bundle.error))
    fig = build_sweep_figure(frame, x, bundle.host_timer,
                             quantity_label=derived.QUANTITY_LABELS[derived.TIME].split(" (")[0],
                             log_y=wants_log_y(frame))
    _few_runs(section, frame)
    section.add(H.figure(fig, "sweep", job_colors(bundle)))
    _audit_notes(bundle, section, drawn_rows(frame))
    section.add(H.table(frame.assign(Measurement=bundle.measurement)),
                H.paragraph(f"Error bars and CI95 columns: {intervals.CI_METHOD}. "
                            + W.line(W.MEAN, bundle.host_timer)))


def _audit_notes(bundle: Bundle, section: H.Section, points: pd.DataFrame) -> None:
    """Under a chart of annotation x config points (``points``: the rows drawn), the points
    marked × named, or that the audit was not read, as under the page's chart
    (:func:`~app.core.views.run_audit.chart_audit_notes`)."""
    for note in chart_audit_notes(bundle, points_of(points), REPORT_EVIDENCE):
        section.add(H.paragraph(note))


def _stability(bundle: Bundle, table: Table, section: H.Section) -> None:
    frame = table()
    _few_runs(section, frame)
    section.add(H.paragraph(f"{stable_text(bundle, frame, badge_frame(bundle))} {C.CI95_HALF_PCT} "
                            "beside each flag is the CI95's half-width in % of the mean. "
                            + W.line(W.MEAN, bundle.host_timer)),
                H.figure(build_stability_figure(frame, bundle.host_timer), "stability",
                         job_colors(bundle)), H.table(frame))
    first = frame[C.CONFIG].iloc[0]  # the page's per-run chart opens on the first config
    runs = stability_runs_frame(bundle, replace(STABILITY.opening(bundle), config=first))
    if runs.empty:
        section.add(H.note("This job has no per-run table (plain nsight-python output keeps "
                           "only the aggregated values)."))
        return
    label = "Duration" if bundle.duration_metric in C.DURATION_METRICS else bundle.duration_metric
    section.add(f"<h3>Per run, in run order: {H.text(frame[F.CONFIG_LABEL].iloc[0])}</h3>",
                H.figure(build_runs_figure(runs, label, bundle.host_timer), "stability-runs",
                         job_colors(bundle)), H.table(runs))


def _bound(bundle: Bundle, table: Table, section: H.Section) -> None:
    frame = table()
    section.add(H.figure(build_bound_figure(frame, LATENCY_THRESHOLD_PCT, bundle.host_timer),
                         "bound", job_colors(bundle)))
    _audit_notes(bundle, section, frame)
    section.add(H.table(frame))


def _roofline(bundle: Bundle, table: Table, section: H.Section) -> None:
    points = table()
    ceilings = roofline_ceilings(points)
    section.add(H.figure(build_roofline_figure(points, ceilings, bundle.host_timer),
                         "roofline", job_colors(bundle)))
    _audit_notes(bundle, section, drawn_points(points))
    section.add(H.table(roofline_table(points, ceilings)),  # in the chart's FLOP/s unit
                H.table(ceilings, "Ceilings drawn"))


def _memory(bundle: Bundle, table: Table, section: H.Section) -> None:
    try:
        frame = table()
    except MissingData as exc:  # no DRAM byte counters: the fusion's time ratio still shows
        section.add(H.missing(exc, exc.hint))
    else:
        last = frame[C.CONFIG].iloc[-1]  # the page opens on the last config
        shown = frame[frame[C.CONFIG] == last]
        section.add(H.figure(build_memory_figure(shown, bundle.host_timer), "memory",
                             job_colors(bundle)))
        _audit_notes(bundle, section, shown)
        section.add(H.table(memory_table(frame), "Every config (the chart shows the last one, "
                                                 "as the page opens)"))
    pairs = fusion_pairs(bundle, builtin_kernels())
    if pairs:
        unfused, fused = pairs[0]
        fusion = fusion_frame(bundle, MemoryOptions(unfused=unfused, fused=fused))
        if not fusion.empty:
            section.add(f"<h3>Fusion: {H.text(unfused)} → {H.text(fused)}</h3>",
                        H.figure(build_fusion_figure(fusion, sweep_x(bundle), bundle.host_timer),
                                 "fusion", job_colors(bundle)), H.table(fusion))


def _kernels(bundle: Bundle, table: Table, section: H.Section) -> None:
    times = table()
    section.add(H.figure(build_kernels_figure(times, bundle.host_timer, share=True), "kernels",
                         job_colors(bundle)))
    _audit_notes(bundle, section, times)
    section.add(H.table(kernels_table(times)),
                H.table(kernel_counts_frame(bundle), "Kernel counts per annotation × config"))


def _nvml(bundle: Bundle, table: Table, section: H.Section) -> None:
    trace = table()
    reasons = throttle_frame(trace)
    section.add(H.figure(build_trace_figure(trace, max_sm_clock_mhz(bundle)), "nvml-trace"),
                H.paragraph(f"{len(trace):,} NVML samples; the bundle's tables/nvml_trace.csv "
                            "(on its Files page) holds them all."),
                H.table(reasons, "Throttle reasons set during the job") if not reasons.empty
                else H.paragraph("Throttle reasons: none, the clocks were never held back."))


def _timeline(bundle: Bundle, _table: Table, section: H.Section) -> None:
    view = timeline_view(bundle)  # the launches table and, for the figure, counters and starts
    section.add(H.figure(build_timeline_figure(view.launches, view.counters,
                                               view.measured_starts, max_sm_clock_mhz(bundle),
                                               view.host_timer),
                         "timeline"), H.paragraph(view.note), H.table(view.launches))


def _kernel_clocks(bundle: Bundle, table: Table, section: H.Section) -> None:
    clocks = table()
    section.add(H.figure(build_kernel_clock_figure(clocks, bundle.host_timer), "kernel-clocks",
                         job_colors(bundle)), H.table(clocks))


def _collectors(bundle: Bundle, table: Table, section: H.Section) -> None:
    every = table()
    first = every[C.CONFIG].iloc[0]  # the page opens on the first config
    runs = collector_runs_frame(bundle, replace(COLLECTORS.opening(bundle), config=first))
    corr = correlation_frame(every)
    section.add(H.paragraph("Info collectors are sampled once before each run, not during it."),
                H.figure(build_drift_figure(runs), "collectors-drift"), H.table(runs),
                H.figure(build_correlation_figure(corr), "collectors-correlation"),
                H.table(corr))


#: Analysis key (:data:`app.core.pages.ANALYSES`) -> how its section is drawn.
DRAW: dict[str, Draw] = {
    "sweep": _sweep, "stability": _stability, "bound": _bound, "roofline": _roofline,
    "memory": _memory, "kernels": _kernels, "nvml_trace": _nvml, "timeline": _timeline,
    "kernel_clocks": _kernel_clocks, "collectors": _collectors}


def left_out(bundle: Bundle) -> list[str]:
    """Titles of the sections a job that ran on no GPU (``bundle.host_timer``) does not get:
    the ``gpu_only`` analyses, the deep dive and the Nsight Compute rules; [] for a GPU job."""
    if not bundle.host_timer:
        return []
    return [*(a.title for a in ANALYSES if a.gpu_only), "Deep dive", RULES_TITLE]


def analysis_sections(bundle: Bundle) -> list[H.Section]:
    """One section per analysis of :data:`app.core.pages.ANALYSES`, in its order, drawn from
    the table its page opens on; a view the job cannot feed says why. A job that ran on no GPU
    (``bundle.host_timer``) gets none of the ``gpu_only`` ones (:func:`left_out`)."""
    sections = []
    for analysis in ANALYSES:
        if analysis.gpu_only and bundle.host_timer:
            continue
        section = H.Section(analysis.title)
        try:
            DRAW[analysis.key](bundle, partial(analysis.table, bundle), section)
        except (MissingData, derived.MissingWork) as exc:
            section.parts.clear()
            section.add(H.missing(exc, getattr(exc, "hint", "")))
        sections.append(section)
    return sections
