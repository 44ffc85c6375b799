"""What the first page load after a server start would wait for, started with the server.

``kernel-dashboard`` (:mod:`app.cli`) calls :func:`start` just before Streamlit's server: one
thread runs the worker's environment probe (``python -m profiling_worker env``, a subprocess of
1.6-1.9 s on the 2-core machine) and another imports the modules of the app frame and its
first page (2.0 s of a cold first script run, against 0.6 s for a bare page: issue 25). Both
overlap with the browser loading Streamlit's JavaScript; the first script run then finds the
modules imported and takes the probe's report (:func:`env_report`) instead of probing again.
Everything stays drawn as before; only the order of the work changes.
"""

from __future__ import annotations

import importlib
import threading
from concurrent.futures import Future
from typing import Any

#: The modules of the app frame and the first page (Size sweep), heaviest first, and the two
#: Streamlit loads on first use: its emoji table (330 ms; any non-ASCII alert or segmented
#: control option, e.g. "µs", looks it up) and its icon names.
MODULES = ("pandas", "pyarrow.parquet", "plotly.graph_objects", "plotly.io", "scipy.special",
           "streamlit.emojis", "streamlit.material_icon_names",
           "app.ui.cached", "app.ui.panels", "app.ui.analysis", "app.ui.deep_dive_action",
           "app.ui.notes", "app.ui.navigation", "app.ui.job_status", "app.core.provenance",
           "app.sidebar.job_selector", "app.sidebar.job_builder", "app.sidebar.job_panel",
           "app.core.derived", "app.core.metric_roles", "app.core.figures.sweep",
           "app.core.views.sweep", "app.core.spec_form", "app.core.table_text")
_probes: dict[str, Future[dict[str, Any]]] = {}
_lock = threading.Lock()
_imported = threading.Event()
_imported.set()  # nothing to wait for until start()


def start(worker_python: str) -> None:
    """Start the environment probe for ``worker_python`` and the imports, each in a daemon
    thread; returns at once."""
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
    try:
        for name in MODULES:
            importlib.import_module(name)
    except Exception:  # the page's own import says what is wrong, where it is shown
        pass
    finally:
        _imported.set()


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
