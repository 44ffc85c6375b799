"""What the first page load after a server start would wait for, started with the server.

``kernel-dashboard`` (:mod:`app.cli`) calls :func:`start` just before Streamlit's server: one
thread runs the worker's environment probe (``python -m profiling_worker env``, a subprocess of
1.6-1.9 s on the 2-core machine) and another imports the modules of the app frame and its
first page (2.0 s of a cold first script run, against 0.6 s for a bare page: issue 25). Both
overlap with the browser loading Streamlit's JavaScript; the first script run then finds the
modules imported and takes the probe's report (:func:`env_report`) instead of probing again.
After the imports, the same thread reads the bundles the first page most likely shows (the
newest finished job, and the job a page without ``?job=`` opens on a machine with or without
a GPU: :func:`likely_jobs`); the script run that asks for one of them takes that read
(:func:`bundle`) instead of reading it again (issue 37: a finished 1,000-config sweep's first
chart). In the order the first script run needs them: it maps every loaded module to its file
for :mod:`inspect` (:func:`_map_module_files`), which Streamlit's first element of a process
does otherwise, reads the bundles, then computes each one's Size sweep frame and chart as the
page opens (:func:`app.ui.sweep_chart.compute_default`) into the caches, where the page's
first run finds them. Everything stays drawn as before; only the order of the work changes.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import threading
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the thread imports them; this module stays light for app.cli
    from app.services.result_store import BundleInfo
    from profiling_worker.bundle.loader import Bundle

#: The modules of the app frame and the first page (Size sweep), heaviest first, those a bundle's
#: read and its Size sweep chart import on first use (pyarrow's dataset reader and pandas
#: conversion; plotly's figure parts, which it imports as a figure first uses them: the thread
#: reads bundles and computes charts after the first script run may have begun importing), and
#: the Streamlit loads on first use: its emoji table (330 ms; any non-ASCII alert or segmented
#: control option, e.g. "µs", looks it up), its icon names and Pillow with the image readers
#: its first open loads (``Image.preinit``: ``st.set_page_config`` reads the page icon,
#: ``app/assets/icon.png``). Not ``scipy.special`` (0.1 s of CPU): the Size sweep's CI95 takes
#: its t quantiles from the worker's table (``t_table``); pages that need scipy import it.
MODULES = ("pandas", "pandas.core.reshape.reshape",  # the Size sweep's run audit marks
           "pyarrow.parquet", "pyarrow.dataset", "pyarrow.pandas_compat",
           "pandas.core.arrays.arrow.extension_types", "plotly.graph_objects", "plotly.io",
           "plotly.animation", "plotly.graph_objs._deprecations",
           "plotly.graph_objs.layout._legend", "plotly.graph_objs.layout._margin",
           "plotly.graph_objs.layout._title", "plotly.graph_objs.layout._xaxis",
           "plotly.graph_objs.layout._yaxis",
           "plotly.graph_objs.layout.legend._title", "plotly.graph_objs.layout.xaxis._title",
           "plotly.graph_objs.layout.yaxis._title", "plotly.graph_objs.scatter._error_x",
           "plotly.graph_objs.scatter._error_y", "plotly.graph_objs.scatter._line",
           "narwhals._interchange.dataframe",
           "streamlit.emojis", "streamlit.material_icon_names", "PIL.Image",
           "PIL.BmpImagePlugin", "PIL.GifImagePlugin", "PIL.JpegImagePlugin",
           "PIL.PngImagePlugin", "PIL.PpmImagePlugin",
           "app.ui.cached", "app.ui.panels", "app.ui.analysis", "app.ui.deep_dive_action",
           "app.ui.notes", "app.ui.navigation", "app.ui.job_status", "app.core.provenance",
           "app.sidebar.job_selector", "app.sidebar.job_builder", "app.sidebar.job_panel",
           "app.core.derived", "app.core.metric_roles", "app.core.figures.sweep",
           "app.core.views.sweep", "app.core.spec_form", "app.core.table_text",
           "app.ui.energy", "app.ui.time_unit", "app.core.auto_runs", "app.ui.prefetch",
           "app.ui.sweep_chart", "app.ui.run_audit",
           "profiling_worker.bundle.schema.t_table")
_probes: dict[str, Future[dict[str, Any]]] = {}
#: bundle path (as :func:`app.ui.cached.bundle_for` names it) -> (manifest stamp, its read)
_reads: dict[str, tuple[str, Future["Bundle"]]] = {}
_lock = threading.Lock()
_imported = threading.Event()
_imported.set()  # nothing to wait for until start()


def start(worker_python: str) -> None:
    """Start the environment probe for ``worker_python`` and the imports, then the reads of
    the likely bundles (:func:`likely_jobs`), each in a daemon thread; returns at once."""
    future: Future[dict[str, Any]] = Future()
    with _lock:
        _probes[worker_python] = future
    _imported.clear()
    threading.Thread(target=_probe, args=(worker_python, future), name="kprof-env-probe",
                     daemon=True).start()
    threading.Thread(target=_import_all, name="kprof-imports", daemon=True).start()


def _probe(worker_python: str, future: Future[dict[str, Any]]) -> None:
    try:
        from app.services import worker_client

        future.set_result(worker_client.probe_environment(worker_python))
    except BaseException as exc:  # handed to the first page load, which reports it
        future.set_exception(exc)


def _import_all() -> None:
    reads: list[tuple[str, str, Future[Bundle]]] = []
    try:
        for name in MODULES:
            importlib.import_module(name)
        reads = _register_likely()  # before the first script run may ask for them
    except Exception:  # the page's own import or read says what is wrong, where it is shown
        pass
    finally:
        _imported.set()
    _map_module_files()
    _read(reads)


def _map_module_files() -> None:
    """Fill :mod:`inspect`'s map of loaded modules to their files (``inspect.getmodule``'s
    cache), which the first script run would otherwise build on its critical path: the first
    element Streamlit sends in a process calls ``inspect.stack()`` (its check for a REPL,
    ``delta_generator._maybe_print_use_warning``), which resolves the real path of every
    loaded module's file once, about 1,800 of them here (issue 37: 180-270 ms of a cold first
    script run on the busy 2-core machine, between the page config and the navigation; 3 ms
    in a warm one). Later look-ups only map the modules loaded since."""
    try:
        inspect.getmodule(sys._getframe())  # a frame has no __module__: it maps them all
    except Exception:  # Streamlit's own look-up meets it again and reports it
        pass


def _register_likely() -> list[tuple[str, str, Future[Bundle]]]:
    """(job id, path, pending read) for each bundle of :func:`likely_jobs`, in their order;
    each read is registered under the path and manifest stamp that
    :func:`app.ui.cached.bundle_for` will key it by."""
    from app import settings
    from app.services import result_store
    from profiling_worker.bundle.schema.manifest import manifest_stamp

    results, bundled = settings.results_dir(), settings.bundled_dir()
    paths = {job_id: result_store.find_bundle(job_id, results, bundled)
             for job_id in likely_jobs(result_store.list_bundles(results, bundled)[0])}
    keys = [(job_id, str(path), manifest_stamp(path)) for job_id, path in paths.items()
            if path is not None]
    # registered together, after anything here could raise: a registered read is always done
    pending: list[tuple[str, str, str, Future[Bundle]]] = [
        (job_id, path, stamp, Future()) for job_id, path, stamp in keys]
    with _lock:
        _reads.update({path: (stamp, future) for _job, path, stamp, future in pending})
    return [(job_id, path, future) for job_id, path, _stamp, future in pending]


def likely_jobs(bundles: list[BundleInfo]) -> list[str]:
    """The jobs the first page most likely shows, of ``bundles`` (``BundleInfo``, newest
    first): the one a page without ``?job=`` opens with a GPU and without one
    (:func:`app.sidebar.job_selector.default_job`: the result store's last job to finish, a
    sweep that just finished, which ``kernel-sweep``'s link opens too, else a bundled example;
    the probe that tells GPU and none apart may still be running). At most two, each once."""
    from app.sidebar.job_selector import default_job

    picks = [default_job(bundles, True), default_job(bundles, False)]
    return list(dict.fromkeys(p.job_id for p in picks if p is not None))


def _read(reads: list[tuple[str, str, Future[Bundle]]]) -> None:
    """Read each bundle, then compute its Size sweep's first chart into the caches, job by
    job in their order. The read is handed over through :func:`bundle` (the page's first
    :func:`app.ui.cached.bundle_for` takes it), never through ``bundle_for`` here: its cache
    shows a spinner on a miss, and a spinner outside a script run logged "Thread
    'kprof-imports': missing ScriptRunContext!" once per job at every server start (issue
    37). The frame and figure caches show none and are keyed by the bundle's path and the
    options, so the page finds them all the same."""
    from app.ui import cached, sweep_chart
    from profiling_worker.bundle.loader import load_bundle

    for _job_id, path, future in reads:
        try:
            future.set_result(load_bundle(path))
        except BaseException as exc:  # the page reads it again and shows its own error
            future.set_exception(exc)
            continue
        try:  # on a copy, as a page's: the read itself goes to the page unchanged
            sweep_chart.compute_default(cached._own_copy(future.result()))
        except Exception:  # the page computes it again and shows what went wrong
            pass


def bundle(path: str, stamp: str) -> Bundle | None:
    """The bundle at ``path`` that :func:`start`'s thread read (waiting for the read to end),
    once; None when it read none there, its manifest has changed since (``stamp`` differs) or
    its read failed: the caller then reads it itself (and shows its own error)."""
    with _lock:
        early = _reads.pop(path, None)
    if early is None or early[0] != stamp:
        return None
    try:
        return early[1].result()
    except BaseException:  # whatever stopped the thread's read (set by _read), not this run
        return None


def wait_for_imports() -> None:
    """Block until the imports :func:`start` began are done (at once if none were begun).

    The first script run calls it before importing anything itself: a module half imported by
    the thread is seen in ``sys.modules`` by code that looks there directly (plotly's
    ``optional_imports`` found a partly initialised pandas without ``Series``), so the two
    must not import side by side."""
    _imported.wait()


def env_report(worker_python: str) -> dict[str, Any] | None:
    """The report of the probe :func:`start` began for ``worker_python`` (waiting for it to
    end), once; None when none was started, so the caller probes itself (a later re-probe,
    AppTests, ``streamlit run`` without the console script)."""
    with _lock:
        future = _probes.pop(worker_python, None)
    return None if future is None else future.result()
