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

import contextlib
import functools
import importlib
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import streamlit as st

if TYPE_CHECKING:
    import pandas as pd

    from app.services.result_store import BundleInfo
    from profiling_worker.bundle.loader import Bundle

#: The most configs a job may have for :func:`start` to prefetch it. The prefetch holds the
#: GIL for as long as it computes, and a page load that starts meanwhile waits for it: on the
#: 2-core machine it took 0.5 s of CPU at 100 configs of 10 runs and 3.0 s at 1,000, which made
#: the 1,000-config sweep's next load 1.22x slower (CI95 1.14-1.30, 5 rounds, 2026-12-05,
#: ``big_sweep_page.py`` against the same tree without it) than computing on the visit.
MAX_CONFIGS = 100
_enabled = threading.Event()

#: Script runs in progress in this server (:func:`script_run`), and its condition: the prefetch
#: computes its next part only when there is none, so that a page load that starts meanwhile
#: (another tab, page_speed's warm load right after its cold one) does not share the GIL with
#: it for the 0.4-0.8 s of CPU a 40-config job's prefetch takes on the 2-core machine.
_runs = 0
_quiet = threading.Condition()
#: The longest the prefetch waits for a moment with no script run before a part (seconds): a
#: server whose sessions keep running (a job panel polling) still gets its next clicks' frames.
QUIET_WAIT_S = 5.0

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
                ("app.core.figures.kernels", "build_kernels_figure"),
                ("app.core.views.run_audit", "chart_audit_notes")),  # the note under the chart
    "one_kernel": (("app.core.views.one_kernel", "one_kernel_frame"),
                   ("app.core.views.one_kernel", "one_kernel_launches_frame"),
                   ("app.core.figures.one_kernel", "build_one_kernel_figure")),
}
BELOW_CHART = {
    "stability": (("app.core.views.run_audit", "badge_frame"),
                  ("app.core.views.run_audit", "slow_configs_text"),
                  # the per-run chart at the first config (_stability_runs)
                  ("app.core.views.stability", "stability_runs_frame"),
                  ("app.core.figures.stability", "build_runs_figure")),
    "kernels": tuple(("app.core.views.kernels", name) for name in (
        "kernel_counts_frame", "unattributed_frame", "combine_rules_frame", "launches_frame")),
    "one_kernel": (("app.core.views.run_audit", "pair_failed_text"),),
}


@contextlib.contextmanager
def script_run() -> Iterator[None]:
    """Count a script run as in progress while in the block (``app/streamlit_app.run``)."""
    global _runs
    with _quiet:
        _runs += 1
    try:
        yield
    finally:
        with _quiet:
            _runs -= 1
            _quiet.notify_all()


def _wait_for_quiet(limit_s: float = QUIET_WAIT_S) -> bool:
    """Wait until no script run is in progress, at most ``limit_s`` seconds; True if none is."""
    with _quiet:
        return _quiet.wait_for(lambda: _runs == 0, timeout=limit_s)


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
    browser draws the chart while the page computes them), then the tables of
    :func:`table_frames`, prepared as their first draw would (:func:`app.ui.panels.prepare_ahead`);
    each part once no script run is in progress (:func:`script_run`), up to
    :data:`QUIET_WAIT_S` of waiting.
    A page that cannot draw one (e.g. ``MissingData``) is skipped: its visit shows its own
    message."""
    for part in (_stability, _kernels, _one_kernel, *_below(), _tables):
        _wait_for_quiet()  # a page load first
        try:
            part(bundle)
        except Exception:  # the page's own visit raises it again and shows it
            continue


def _below() -> list[Callable[[Bundle], object]]:
    """Each frame of :data:`BELOW_CHART`, page by page, as a call through the cache."""
    return [functools.partial(_view_below, getattr(importlib.import_module(module), name))
            for views in BELOW_CHART.values() for module, name in views
            if name not in _STABILITY_RUNS] + [_stability_runs]


#: What :func:`_stability_runs` computes of :data:`BELOW_CHART` (not views of the bundle alone).
_STABILITY_RUNS = ("stability_runs_frame", "build_runs_figure")


def _stability_runs(bundle: Bundle) -> None:
    """Stability's per-run chart at the config its picker opens on (the first of the chart's
    table), as the page computes it."""
    import dataclasses

    from app.core.figures.stability import build_runs_figure
    from app.core.views.stability import (opening_options, runs_label, stability_frame,
                                          stability_runs_frame)
    from app.ui import cached
    from profiling_worker.bundle.schema import columns as C

    options = opening_options(bundle)  # the page's metric: the first of its choices
    summary = cached.view(stability_frame, bundle, options)
    if summary.empty:
        return
    runs = cached.view(stability_runs_frame, bundle,
                       dataclasses.replace(options, config=next(iter(summary[C.CONFIG]))))
    if not runs.empty:
        cached.figure(build_runs_figure, runs, runs_label(bundle.manifest, str(options.metric)),
                      bundle.host_timer)


def _view_below(view: Callable[..., object], bundle: Bundle) -> object:
    """``view`` of ``bundle`` through the cache, with the arguments its page passes at its
    controls' defaults (:data:`_BELOW_ARGS`; none for most)."""
    from app.ui import cached

    args = _BELOW_ARGS[view.__name__](bundle) if view.__name__ in _BELOW_ARGS else ()
    return cached.view(view, bundle, *args)


def _one_kernel_pair(bundle: Bundle) -> tuple[str, object]:
    """One kernel's (annotation, config) at its defaults, for ``pair_failed_text``, which the
    page reads only where the chart reads the run audit.

    Raises:
        LookupError: the page does not read it for this job.
        MissingData: the job has no aggregated rows."""
    from app.core.views.one_kernel import opening_options
    from app.core.views.run_audit import PAGE_EVIDENCE, audit_not_read_note

    if audit_not_read_note(bundle, PAGE_EVIDENCE) is not None:
        raise LookupError("the run audit is not read for this job")
    options = opening_options(bundle)
    return str(options.annotation), options.config


#: The arguments after the bundle of a :data:`BELOW_CHART` view that takes some.
_BELOW_ARGS: dict[str, Callable[[Bundle], tuple[object, ...]]] = {
    "pair_failed_text": _one_kernel_pair}


def _stability(bundle: Bundle) -> None:
    from app.core.figures.stability import build_stability_figure
    from app.core.views.stability import opening_options, stability_frame
    from app.ui import cached

    summary = cached.view(stability_frame, bundle, opening_options(bundle))
    cached.figure(build_stability_figure, summary, bundle.host_timer)


def _kernels(bundle: Bundle) -> None:
    from app.core.figures.kernels import build_kernels_figure
    from app.core.views.kernels import kernel_time_frame
    from app.ui import cached, run_audit

    times = cached.view(kernel_time_frame, bundle)
    run_audit.chart_note(bundle, times)  # an argument of the chart's panel: before its message
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



def table_frames(bundle: Bundle) -> list[pd.DataFrame]:
    """The frames that Stability, Kernels and One kernel draw as tables when they open on
    ``bundle`` (controls at their defaults), built as the pages build them; a page that cannot
    draw them (``MissingData``) is left out. Their first preparation was 100-240 ms of CPU a
    page on the 2-core machine (AppTest, the matmul sweep, One kernel's table of every value
    the most; 2026-12-07, issue 40), paid on the page's first visit while the browser drew its
    chart. Not the tables of a control's other value (Stability's per-run table is per
    config), nor those a job may lack. tests/apptest/test_page_prefetch.py checks that each is
    a table a visit draws."""
    frames: list[pd.DataFrame] = []
    for page in (_stability_tables, _kernels_tables, _one_kernel_tables):
        try:
            frames += page(bundle)
        except Exception:  # the page's own visit raises it again and shows it
            continue
    return frames


def _stability_tables(bundle: Bundle) -> list[pd.DataFrame]:
    import dataclasses

    from app.core.metric_roles import with_words
    from profiling_worker.bundle.schema import columns as C
    from app.core.views import stability
    from app.ui import cached, panels

    options = stability.opening_options(bundle)
    summary = cached.view(stability.stability_frame, bundle, options)
    frames = [panels.table_rows(with_words(summary, bundle.manifest), lead=stability.OWN_COLUMNS,
                                parameters=bundle.parameters)[0]]
    runs = cached.view(stability.stability_runs_frame, bundle,
                       dataclasses.replace(options, config=next(iter(summary[C.CONFIG]))))
    if not runs.empty:  # the per-run chart's table, at the first config
        frames.append(panels.table_rows(runs, lead=stability.RUN_COLUMNS,
                                        parameters=bundle.parameters)[0])
    return frames


def _kernels_tables(bundle: Bundle) -> list[pd.DataFrame]:
    from app.core.views import kernels
    from app.core.views.chart_units import kernels_table
    from app.ui import cached

    return [kernels_table(cached.view(kernels.kernel_time_frame, bundle)),
            *(cached.view(view, bundle) for view in (kernels.kernel_counts_frame,
                                                     kernels.combine_rules_frame,
                                                     kernels.launches_frame))]


def _one_kernel_tables(bundle: Bundle) -> list[pd.DataFrame]:
    from app.core.metric_roles import with_words
    from app.core.views import one_kernel
    from app.ui import cached

    options = one_kernel.opening_options(bundle)
    launches = cached.view(one_kernel.one_kernel_launches_frame, bundle, options)
    every = with_words(cached.view(one_kernel.one_kernel_frame, bundle, options), bundle.manifest)
    return [*([launches] if not launches.empty else []), every]


def _tables(bundle: Bundle) -> None:
    from app.ui import panels

    for frame in table_frames(bundle):
        panels.prepare_ahead(frame)
