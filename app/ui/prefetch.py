"""The charts a click on the link bar most likely opens next, computed while this page is read.

A page's first visit on a server computes its frames and figures for the job (once per job and
options per server, :mod:`app.ui.cached`): on the matmul sweep 65-85 ms of the script run
before the chart on Stability, Kernels and One kernel (AppTest script thread, 2-core machine,
2026-12-05), against 1-5 ms on a later visit; three of the four clicks of
``benchmarks/page_speed.py`` are such first visits (issue 40). After a script run has drawn its
page, :func:`start` computes, in a daemon thread and once per job (path + manifest stamp) and
server, what those pages compute before their chart with their controls at their defaults,
through the same caches, so that the page's own calls find them. Nothing drawn changes; a page
whose controls were changed computes as before. ``kernel-dashboard`` turns it on
(:func:`enable`); AppTests and a plain ``streamlit run`` compute on the visit, as before. The
first prefetch of a server then freezes what the server holds (:mod:`app.ui.gc_freeze`).
"""

from __future__ import annotations

import functools
import importlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

import streamlit as st

if TYPE_CHECKING:
    from app.services.result_store import BundleInfo
    from profiling_worker.bundle.loader import Bundle

#: The most configs a job may have for :func:`start` to prefetch it. The prefetch holds the
#: GIL for as long as it computes, and a page load that starts meanwhile waits for it: on the
#: 2-core machine it took 0.5 s of CPU at 100 configs of 10 runs and 3.0 s at 1,000, which made
#: the 1,000-config sweep's next load 1.22x slower (CI95 1.14-1.30, 5 rounds, 2026-12-05,
#: ``big_sweep_page.py`` against the same tree without it) than computing on the visit.
MAX_CONFIGS = 100
_enabled = threading.Event()

#: What each page that :func:`charts` serves computes through :mod:`app.ui.cached` on its first
#: visit with its controls at their defaults (module, function): before its chart, then the
#: frames of no options below it (not the run audit's per-run evidence, ``flagged_frame``,
#: drawn only once its fold is opened). The one list: :func:`charts` computes these, and
#: tests/apptest/test_page_prefetch.py checks, page by page, that a visit computes these and
#: no other, so a page that stops (or starts) drawing one fails there by its name.
BEFORE_CHART = {
    "stability": (("app.core.views.stability", "stability_frame"),
                  ("app.core.figures.stability", "build_stability_figure")),
    "kernels": (("app.core.views.kernels", "kernel_time_frame"),
                ("app.core.figures.kernels", "build_kernels_figure")),
    "one_kernel": (("app.core.views.one_kernel", "one_kernel_frame"),
                   ("app.core.views.one_kernel", "one_kernel_launches_frame"),
                   ("app.core.figures.one_kernel", "build_one_kernel_figure")),
}
BELOW_CHART = {
    "stability": (("app.core.views.run_audit", "badge_frame"),),
    "kernels": tuple(("app.core.views.kernels", name) for name in (
        "kernel_counts_frame", "unattributed_frame", "combine_rules_frame", "launches_frame")),
    "one_kernel": (),
}


def enable() -> None:
    """Turn :func:`start` on for this server (``kernel-dashboard`` calls it at start-up)."""
    _enabled.set()


def start(info: BundleInfo | None) -> None:
    """Compute :func:`charts` of the finished job ``info`` (the one the page showed) in a daemon
    thread, unless it was started for this job and manifest before, :func:`enable` was not
    called, or its spec records no configs or more than :data:`MAX_CONFIGS`; returns at once.
    A job folder gone meanwhile is skipped."""
    from profiling_worker.bundle.schema.manifest import manifest_stamp
    from profiling_worker.bundle.schema.manifest import JobStatus

    if not _enabled.is_set() or info is None or info.status != JobStatus.DONE:
        return
    if not 0 < len(getattr(info.spec, "configs", None) or ()) <= MAX_CONFIGS:
        return  # too large to compute while the user reads, or its size is not recorded
    try:
        stamp = manifest_stamp(info.path)
    except OSError:
        return
    _start_once(str(info.path), stamp, info.job_id)


@st.cache_resource(max_entries=256, show_spinner=False)
def _start_once(path: str, stamp: str, job_id: str) -> threading.Thread:
    """The prefetch thread of the job at ``path`` with manifest ``stamp``, started on the
    first call for them in this server (Streamlit runs one call per key at a time; a job
    changed since is another key), with the job's bundle read by the calling script run."""
    from app.ui import cached

    del path, stamp  # the cache key
    # read here, in the script run (a hit: the page read it): a miss (the bundle left the
    # cache) shows its spinner, which a thread without a ScriptRunContext logged as a warning
    bundle = cached.bundle_for(job_id)
    thread = threading.Thread(target=_run, args=(bundle,), name="kprof-prefetch", daemon=True)
    thread.start()
    return thread


def _run(bundle: Bundle | None) -> None:
    from app.ui import gc_freeze

    if bundle is not None:
        charts(bundle)
    gc_freeze.freeze_once()  # what the server now holds, out of later full collections


def charts(bundle: Bundle) -> None:
    """Compute, through :mod:`app.ui.cached`, the frames and figures that Stability, Kernels
    and One kernel compute before their chart when they open on ``bundle`` (their controls at
    their defaults), then the frames of no options they show below it (:func:`_below`: the
    browser draws the chart while the page computes them). A page that cannot draw one (e.g.
    ``MissingData``) is skipped: its visit shows its own message."""
    for part in (_stability, _kernels, _one_kernel, *_below()):
        try:
            part(bundle)
        except Exception:  # the page's own visit raises it again and shows it
            continue


def _below() -> list[Callable[[Bundle], object]]:
    """Each frame of :data:`BELOW_CHART`, page by page, as a call through the cache."""
    from app.ui import cached

    return [functools.partial(cached.view, getattr(importlib.import_module(module), name))
            for views in BELOW_CHART.values() for module, name in views]


def _stability(bundle: Bundle) -> None:
    from app.core.figures.stability import build_stability_figure
    from app.core.views.stability import opening_options, stability_frame
    from app.ui import cached

    summary = cached.view(stability_frame, bundle, opening_options(bundle))
    cached.figure(build_stability_figure, summary, bundle.host_timer)


def _kernels(bundle: Bundle) -> None:
    from app.core.figures.kernels import build_kernels_figure
    from app.core.views.kernels import kernel_time_frame
    from app.ui import cached

    times = cached.view(kernel_time_frame, bundle)
    cached.figure(build_kernels_figure, times, bundle.host_timer, share=True)  # Bars: share


def _one_kernel(bundle: Bundle) -> None:
    from app.core.figures.one_kernel import build_one_kernel_figure, chart_title
    from app.core.views.one_kernel import (one_kernel_frame, one_kernel_launches_frame,
                                           one_kernel_summary, opening_options)
    from app.ui import cached

    options = opening_options(bundle)
    summary = one_kernel_summary(bundle, cached.view(one_kernel_frame, bundle, options))
    cached.figure(build_one_kernel_figure, cached.view(one_kernel_launches_frame, bundle, options),
                  chart_title(str(options.annotation), summary.config_label), bundle.host_timer)
