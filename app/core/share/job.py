"""What a report says about a job besides its analyses: the pages' caption line, the annotation
colours, the notes on the values and the provenance (environment, spec, import)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pandas as pd

from profiling_worker.bundle.number_text import when_text
from profiling_worker.bundle.schema import backends as B, columns as C
from profiling_worker.bundle.schema.manifest import JobStatus
from profiling_worker.bundle.schema.spec import JobSpec

from profiling_worker.bundle.loader import Bundle
from app.core import numbers
from app.core.environment import environment_rows, gpu_name
from app.core.figures import theme
from app.core.metrics import annotation_order
from app.core.provenance import (host_timer_warning, import_banner, is_imported,
                                 profiled_scope)
from app.core.share import document as H
from app.core.views.run_audit import failed_text


def job_colors(bundle: Bundle) -> dict[str, str]:
    """Annotation -> colour for the job (:func:`theme.annotation_colors` over the annotations
    in the job's order, :func:`app.core.metrics.annotation_order`): the same in every view
    and in the report."""
    return theme.annotation_colors(annotation_order(bundle))


def caption(bundle: Bundle) -> str:
    """The pages' one line about the job: id, status, backend, GPU, what durations measure."""
    env = bundle.manifest.get("environment") or {}
    gpu = gpu_name(env, bundle.gpu_index) or (
        "GPU not named in the files" if is_imported(bundle.manifest) else "no GPU")
    return (f"Job {bundle.job_id} · {bundle.status.value} · backend {bundle.backend} · {gpu} · "
            f"durations: {bundle.measurement}")


def host_timer_note(bundle: Bundle, status: JobStatus | None = None) -> str | None:
    """The warning every page of a cpu job shows under its caption (None for a GPU timer), in
    the tense of ``status``: the state the page names (the pages pass
    :func:`app.ui.job_status.shown_status`, the job manager's, which the manifest's
    ``bundle.status`` lags: a page drawn in that lag said "will be" under a caption reading
    running, and the next page "here is", issue 37); None: the manifest's."""
    if not bundle.host_timer:
        return None
    return host_timer_warning(bundle.status if status is None else status, bundle.cpu_threads)


def contention_note(bundle: Bundle, escape: Callable[[str], str] = str,
                    words: Callable[[str], str] = str) -> str | None:
    """The second warning every page of a cpu job timed on a contended CPU shows (manifest
    ``backend.host_contention``, said from its figures by
    :func:`~profiling_worker.bundle.schema.backends.contention_text`), with the advice the
    worker stored; None when the job was not warned. ``escape`` is applied to the words read
    from the manifest (the pages pass :func:`app.core.markdown.esc`); plain text by default.
    ``words`` rewrites the advice first (the pages pass
    :func:`app.core.spec_form.in_form_words`: the form's label for the spec's key)."""
    if not bundle.host_timer:
        return None
    backend = bundle.manifest.get("backend") or {}
    warning = B.contention_text(backend)  # from the figures: an older job's words differ
    if not warning:
        return None
    # a bundle recorded before the advice was a field of its own holds it in its warning
    advice = str((backend.get("host_contention") or {}).get("advice") or "")
    advice = words(advice)
    advice = f" {escape(advice[:1].upper() + advice[1:])}." if advice else ""
    return f"{CONTENDED}: {escape(warning)}.{advice}"


#: How every warning of a contended CPU begins (said once on a page: :func:`contention_line`).
CONTENDED = "Timed on a contended CPU"
#: The one line over a page's chart for a cpu job timed on a contended CPU
#: (:func:`contention_line`; the README's five minutes quote it)
CONTENDED_LINE = f"{CONTENDED}: these times may include waiting for a CPU."


def contention_figures(bundle: Bundle, escape: Callable[[str], str] = str,
                       words: Callable[[str], str] = str) -> str | None:
    """:func:`contention_note` without its first words (:data:`CONTENDED`): what a page folds
    under :func:`contention_line`, which says them (a fresh user of session 23 read the
    contention three times over a Size sweep); None when the job was not warned."""
    note = contention_note(bundle, escape, words)
    if note is None:
        return None
    rest = note.removeprefix(f"{CONTENDED}: ")
    return rest[:1].upper() + rest[1:]


def contention_line(bundle: Bundle) -> str | None:
    """The one line a page shows over its chart for a cpu job timed on a contended CPU (None
    when the job was not warned); how long its threads waited and what to do are
    :func:`contention_title` and :func:`contention_note`'s, folded under it."""
    if contention_note(bundle) is None:
        return None
    return CONTENDED_LINE


def contention_title(bundle: Bundle) -> str:
    """The one line a page shows over its chart for a cpu job timed on a contended CPU, the
    label of the fold that holds the timer's warning (:func:`host_timer_note`) and
    :func:`contention_figures`: :func:`contention_line`, which states no figure. Two lines in a
    box over the fold put the first chart of Size sweep and Stability below the fold at
    1000x700 (issue 37); a fold labelled "The contention's figures and what to do" under them
    said the contention a second time (session 23's fresh user). "" when the job was not
    warned."""
    return contention_line(bundle) or ""


def provenance(bundle: Bundle) -> H.Section:
    """Where the numbers come from: the import's files or the worker's recording, the
    environment table of the environment page, the spec and the manifest's provenance."""
    manifest = bundle.manifest
    backend = {k: v for k, v in (manifest.get("backend") or {}).items()
               if k != "device_attributes"}
    origin = (H.from_markdown(import_banner(manifest)) if is_imported(manifest)
              else "Recorded by this project's worker.")
    times = ", ".join(f"{k.replace('_', ' ')} {when_text(manifest[k])}"
                      for k in ("created_at", "started_at", "finished_at") if manifest.get(k))
    section = H.Section(f"Provenance: {bundle.job_id}").add(
        H.paragraph(caption(bundle), "verdict"), H.paragraph(origin), H.paragraph(times),
        H.paragraph(profiled_scope(manifest, bundle.backend)),
        H.table(pd.DataFrame(environment_rows(manifest.get("environment") or {}, backend,
                                              bundle.gpu_index)), "Environment of the job"))
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
    """Every caveat the pages show on the job: the cpu backend's timer and contention
    warnings, plausibility notes, damaged parts, recomputed columns, the error, and what the
    run audit failed; "every check passed" only when none of them applies."""
    section = H.Section("Notes on the values")
    for warning in (host_timer_note(bundle), contention_note(bundle)):
        if warning:
            section.add(H.note(warning, "warning"))
    err = bundle.error
    if err:
        section.add(H.note(f"{err.get('kind') or 'error'}: {err.get('message', '')}"
                           + (f" Fix: {err['hint']}" if err.get("hint") else ""), "error"))
    for problem in bundle.problems:
        section.add(H.note(f"Part of this bundle is damaged: {problem}.", "warning"))
    for sentence in (*bundle.recomputed, *bundle.restated):
        section.add(H.note(sentence))
    if bundle.notes:
        frame = pd.DataFrame(list(bundle.notes), columns=["severity", "check", "annotation",
                                                          "config", "metric", "message"])
        section.add(H.table(frame, f"Plausibility checks: {numbers.counted(len(frame), 'note')} on "
                                   f"the values"))
    failed = failed_text(bundle)
    if failed:
        section.add(H.note(f"{failed[:1].upper()}{failed[1:]} (the run audit's section "
                           "lists them with the evidence).", "warning"))
    if not section.parts:
        section.add(H.paragraph("No plausibility note, damaged part or error, and every run "
                                "passed the run audit."))
    return section
