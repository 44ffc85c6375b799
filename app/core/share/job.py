"""The sections of a job's report, built by the dashboard's own view functions and figure
builders with the options each page opens on (absolute time in µs, the duration metric, the
page's default latency threshold, the largest config on the memory page, Share % on the kernels
page), so the report shows the numbers the pages show. A view that cannot draw for this job
(:class:`~app.core.metrics.MissingData`) becomes a note saying why and how to get it."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pandas as pd

from profiling_worker.schema import columns as C, intervals
from profiling_worker.schema.spec import JobSpec

from app.core import derived
from app.core.bundle_loader import HOST_TIMER_NOTE, Bundle
from app.core.environment import environment_rows, gpu_name
from app.core.figures import theme
from app.core.figures.bound import build_bound_figure, build_roofline_figure
from app.core.figures.clocks import build_trace_figure
from app.core.figures.kernels import build_kernels_figure
from app.core.figures.memory import build_memory_figure
from app.core.figures.stability import build_stability_figure
from app.core.figures.sweep import build_sweep_figure, wants_log_y
from app.core.metrics import MissingData
from app.core.provenance import import_banner, is_imported, profiled_scope
from app.core.share import document as H
from app.core.views.bound import LATENCY_THRESHOLD_PCT, BoundOptions, bound_frame
from app.core.views.clocks import max_sm_clock_mhz, trace_frame
from app.core.views.kernels import kernel_counts_frame, kernel_time_frame
from app.core.views.memory import MemoryOptions, memory_frame
from app.core.views.roofline import RooflineOptions, roofline_ceilings, roofline_frame
from app.core.views.stability import StabilityOptions, stability_frame
from app.core.views.sweep import SweepOptions, sweep_frame, sweep_x

Build = Callable[[Bundle, H.Section], None]


def job_colors(bundle: Bundle) -> dict[str, str]:
    """Annotation -> colour for the job (:func:`theme.annotation_colors` over the annotations
    of its aggregated table, else its per-run table, in table order): the same in every view
    and in the report."""
    for name in (C.TABLE_AGGREGATED, C.TABLE_RUNS):
        table = bundle.tables.get(name)
        if table is not None and C.ANNOTATION in table:
            return theme.annotation_colors(table[C.ANNOTATION].dropna())
    return {}


def caption(bundle: Bundle) -> str:
    """The pages' one line about the job: id, status, backend, GPU, what durations measure."""
    env = bundle.manifest.get("environment") or {}
    gpu = gpu_name(env, bundle.gpu_index) or (
        "GPU not named in the files" if is_imported(bundle.manifest) else "no GPU")
    return (f"Job {bundle.job_id} · {bundle.status.value} · backend {bundle.backend} · {gpu} · "
            f"durations: {bundle.measurement}")


def provenance(bundle: Bundle) -> H.Section:
    """Where the numbers come from: the import's files or the worker's recording, the
    environment table of the environment page, the spec and the manifest's provenance."""
    manifest = bundle.manifest
    backend = {k: v for k, v in (manifest.get("backend") or {}).items()
               if k != "device_attributes"}
    origin = (import_banner(manifest) if is_imported(manifest)
              else "Recorded by this project's worker.")
    times = ", ".join(f"{k.replace('_', ' ')} {manifest[k]}"
                      for k in ("created_at", "started_at", "finished_at") if manifest.get(k))
    section = H.Section(f"Provenance: {bundle.job_id}").add(
        H.paragraph(caption(bundle), "verdict"), H.paragraph(origin), H.paragraph(times),
        H.paragraph(profiled_scope(manifest)),
        H.table(pd.DataFrame(environment_rows(manifest.get("environment") or {}, backend,
                                              bundle.gpu_index)), "Environment of the job"))
    if bundle.host_timer:
        section.add(H.note(f"This job used the cpu backend: every time here is "
                           f"{HOST_TIMER_NOTE}.", "warning"))
    for name, value in (("Spec", spec_json(bundle)), ("Provenance", manifest.get("provenance")),
                        ("Backend", backend)):
        if value:
            section.add(H.paragraph(name), H.preformatted(json.dumps(value, indent=1,
                                                                     default=str)))
    return section


def spec_json(bundle: Bundle) -> dict[str, Any] | None:
    """The job's spec as recorded (manifest ``spec``), else the validated one; None without."""
    recorded = bundle.manifest.get("spec")
    if isinstance(recorded, dict) and recorded:
        return recorded
    return bundle.spec.to_json() if isinstance(bundle.spec, JobSpec) else None


def notes(bundle: Bundle) -> H.Section:
    """Every plausibility note, damaged part, recomputed column and error of the bundle."""
    section = H.Section("Notes on the values")
    err = bundle.error
    if err:
        section.add(H.note(f"{err.get('kind') or 'error'}: {err.get('message', '')}"
                           + (f" Fix: {err['hint']}" if err.get("hint") else ""), "error"))
    for problem in bundle.problems:
        section.add(H.note(f"Part of this bundle is damaged: {problem}.", "warning"))
    for sentence in bundle.recomputed:
        section.add(H.note(sentence))
    if bundle.notes:
        frame = pd.DataFrame(list(bundle.notes), columns=["severity", "check", "annotation",
                                                          "config", "metric", "message"])
        section.add(H.table(frame, f"Plausibility checks: {len(frame)} note(s) on the values"))
    if not section.parts:
        section.add(H.paragraph("No plausibility note, damaged part or error: every check "
                                "passed."))
    return section


def _sweep(bundle: Bundle, section: H.Section) -> None:
    x = sweep_x(bundle)
    frame = sweep_frame(bundle, SweepOptions(quantity=derived.TIME, time_unit="µs", x=x))
    if frame.empty:
        raise MissingData(f"This job has no {bundle.duration_metric} values to plot.")
    fig = build_sweep_figure(frame, x, bundle.host_timer,
                             quantity_label=derived.QUANTITY_LABELS[derived.TIME].split(" (")[0],
                             log_y=wants_log_y(frame))
    section.add(H.figure(fig, "sweep", job_colors(bundle)),
                H.table(frame.assign(Measurement=bundle.measurement)),
                H.paragraph(f"Error bars and CI95 columns: {intervals.CI_METHOD}."))


def _stability(bundle: Bundle, section: H.Section) -> None:
    frame = stability_frame(bundle, StabilityOptions(time_unit="µs"))
    stable = int(frame[C.STABLE].astype(bool).sum())
    section.add(H.paragraph(f"{stable} of {len(frame)} annotation × config pairs are stable "
                            f"(RSD < {C.STABLE_RSD_PCT:g} %)."),
                H.figure(build_stability_figure(frame, bundle.host_timer), "stability",
                         job_colors(bundle)), H.table(frame))


def _bound(bundle: Bundle, section: H.Section) -> None:
    frame = bound_frame(bundle, BoundOptions(latency_threshold_pct=LATENCY_THRESHOLD_PCT))
    section.add(H.figure(build_bound_figure(frame, LATENCY_THRESHOLD_PCT, bundle.host_timer),
                         "bound", job_colors(bundle)), H.table(frame))


def _roofline(bundle: Bundle, section: H.Section) -> None:
    points = roofline_frame(bundle, RooflineOptions())
    ceilings = roofline_ceilings(points)
    section.add(H.figure(build_roofline_figure(points, ceilings, bundle.host_timer),
                         "roofline", job_colors(bundle)), H.table(points),
                H.table(ceilings, "Ceilings drawn"))


def _memory(bundle: Bundle, section: H.Section) -> None:
    frame = memory_frame(bundle, MemoryOptions())
    last = frame[C.CONFIG].iloc[-1]  # the page opens on the last config
    shown = frame[frame[C.CONFIG] == last]
    section.add(H.figure(build_memory_figure(shown, bundle.host_timer), "memory",
                         job_colors(bundle)),
                H.table(frame, "Every config (the chart shows the last one, as the page opens)"))


def _kernels(bundle: Bundle, section: H.Section) -> None:
    times = kernel_time_frame(bundle)
    section.add(H.figure(build_kernels_figure(times, bundle.host_timer, share=True), "kernels",
                         job_colors(bundle)), H.table(times),
                H.table(kernel_counts_frame(bundle), "Kernel counts per annotation × config"))


def _clocks(bundle: Bundle, section: H.Section) -> None:
    trace = trace_frame(bundle)
    section.add(H.figure(build_trace_figure(trace, max_sm_clock_mhz(bundle)), "nvml-trace"),
                H.paragraph(f"{len(trace):,} NVML samples; the bundle's tables/nvml_trace.csv "
                            "holds them all."))


#: Page title -> how its section is built, in the dashboard's page order.
ANALYSES: tuple[tuple[str, Build], ...] = (
    ("Size sweep", _sweep), ("Stability", _stability), ("Bound", _bound),
    ("Roofline", _roofline), ("Memory traffic", _memory), ("Kernels", _kernels),
    ("Clocks: NVML trace of the whole job", _clocks))


def analysis_sections(bundle: Bundle) -> list[H.Section]:
    """One section per view of :data:`ANALYSES`; a view the job cannot feed says why."""
    sections = []
    for title, build in ANALYSES:
        section = H.Section(title)
        try:
            build(bundle, section)
        except (MissingData, derived.MissingWork) as exc:
            section.parts.clear()
            hint = getattr(exc, "hint", "")
            section.add(H.note(f"{exc}" + (f" To get it: {hint}" if hint else "")))
        sections.append(section)
    return sections
