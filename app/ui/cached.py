"""Streamlit caches around the services and the pure loaders.

- :func:`job_manager`: one :class:`JobManager` per server process (``st.cache_resource``),
  shut down (workers killed) when the cache is cleared; :func:`slurm_executor` likewise for
  cluster sweeps, and :func:`executors` both as one.
- :func:`env_report`: the worker's environment report, probed once per worker interpreter.
- :func:`bundle_for`: a loaded bundle, cached on (path, manifest stamp), so a job that finishes
  later (new manifest) is read again; held once per server, each call gets its own copy.
- :func:`view`: a view function's frame for a bundle, cached on the same key and its arguments.
- :func:`figure`: a figure builder's plotly figure, cached on its arguments (frames by content).
- :func:`report_answer`: the worker's rule digest or deep-dive tables of a bundle's report.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import plotly.graph_objects as go
import streamlit as st

from profiling_worker.bundle.schema import backends as B

from app import settings
from app.core.share import job as share_job
from profiling_worker.bundle.loader import Bundle, load_bundle
from profiling_worker.bundle.schema.manifest import manifest_stamp
from app.services import call_time, history_index, report_client, result_store, worker_client
from app.ui import state
from app.services.executor import Executors
from app.services.job_manager import JobManager
from app.services.job_model import Job
from app.services.slurm_executor import SlurmExecutor
from profiling_worker.bundle.schema.manifest import ManifestError


def _release(manager: JobManager | SlurmExecutor) -> None:
    manager.shutdown()


def _index_on_end(results_dir: Path) -> Callable[[Job], None]:
    """What an executor calls when a job ends: the History index follows it."""
    bundled = settings.bundled_dir()

    def index(_job: Job) -> None:
        history_index.sync_quietly(results_dir, bundled)

    return index


@st.cache_resource(on_release=_release, show_spinner=False)
def _job_manager(results_dir: str, worker_python: str) -> JobManager:
    manager = JobManager(Path(results_dir), worker_python, env=settings.worker_env(),
                         warm=settings.warm_worker(), on_end=_index_on_end(Path(results_dir)))
    manager.keep_following()  # jobs other processes queue here: listed read-only
    return manager


def job_manager() -> JobManager:
    """The server's job manager for the current settings."""
    return _job_manager(str(settings.results_dir()), settings.worker_python())


@st.cache_resource(on_release=_release, show_spinner=False)
def _slurm_executor(results_dir: str, worker_python: str) -> SlurmExecutor:
    executor = SlurmExecutor(Path(results_dir), worker_python,
                             on_end=_index_on_end(Path(results_dir)))
    executor.resume()  # the sweeps a stopped dashboard left: watched and merged from here
    executor.keep_resuming()  # and those that appear later (kernel-sweep, another server)
    return executor


def slurm_executor() -> SlurmExecutor:
    """The server's cluster executor (sweeps as Slurm job arrays) for the current settings."""
    return _slurm_executor(str(settings.results_dir()), settings.worker_python())


def executors() -> Executors:
    """This host's job manager and the cluster executor as one (the job panel's jobs)."""
    return Executors(job_manager(), slurm_executor())


@st.cache_resource(show_spinner="Asking the worker what this machine can run…")
def _env_report(worker_python: str) -> dict[str, Any]:
    from app.ui import prewarm  # the probe kernel-dashboard started with the server, if any

    early = prewarm.env_report(worker_python)
    return early if early is not None else worker_client.probe_environment(worker_python)


def env_report() -> dict[str, Any]:
    """The worker's ``env`` report (normalised: always has ``backends``)."""
    return _env_report(settings.worker_python())


def environment() -> dict[str, Any]:
    """This machine's environment from the worker's report (GPUs, drivers, tool versions)."""
    return worker_client.environment_of(env_report())


def backend_reports() -> dict[str, dict[str, Any]]:
    """Backend name -> its entry of the report (``available``, ``reason``, ``fix``) for every
    backend the dashboard knows, in the order it offers them (empty for one the worker left
    out)."""
    backends = env_report().get("backends") or {}
    return {name: backends.get(name) or {} for name in B.NAMES}


def reprobe_environment() -> None:
    """Forget the cached env report (e.g. after installing ncu); the next call probes again."""
    _env_report.clear()


def kernel_catalog() -> tuple[dict[str, Any], list[dict[str, str]]]:
    """Kernel id -> KernelInfo (built-in and user files, from the worker's report) and the
    user files that failed to load."""
    from app.core.kernel_catalog import catalog_from_report

    return catalog_from_report(env_report())


def user_collectors() -> dict[str, dict[str, Any]]:
    """User info collectors by name (the worker's report of the user files)."""
    from app.core.kernel_catalog import collectors_from_report

    return collectors_from_report(env_report())


def gpu_here() -> bool:
    """True when ncu or cupti can run on this machine."""
    return worker_client.gpu_backend_available(env_report())


def list_bundles() -> tuple[list[result_store.BundleInfo], list[result_store.StoreProblem]]:
    """Bundles of the results dir and the bundled dir, newest first (not cached: cheap; each
    bundle's entry is remembered by :func:`app.services.result_store.scan_root`), kept as
    this session's last listing (:func:`last_listing`)."""
    listed = result_store.list_bundles(settings.results_dir(), settings.bundled_dir())
    st.session_state[state.LAST_LISTING] = listed[0]
    return listed


def last_listing() -> list[result_store.BundleInfo]:
    """The jobs of :func:`list_bundles` as this session's page last listed them, listed now
    where none was: a Run click's callback runs before its page run lists the store, so the
    click reads the listing its page was drawn from (a job that ended since counts from the
    next click), not the whole store once more."""
    listed = st.session_state.get(state.LAST_LISTING)
    return listed if listed is not None else list_bundles()[0]


@st.cache_data(max_entries=1024, show_spinner=False)
def _job_rates(path: str, stamp: str) -> call_time.Rates:
    return call_time.job_rates(Path(path))


def job_rates(path: Path) -> call_time.Rates:
    """:func:`app.services.call_time.job_rates` of the job at ``path``, read once per manifest
    (path, its stamp), as :func:`bundle_for` reads a bundle.

    Raises:
        OSError: the job's folder went away."""
    return _job_rates(str(path), manifest_stamp(path))


@st.cache_resource(max_entries=32, show_spinner="Loading results…")
def _load(path: str, stamp: str) -> Bundle:
    from app.ui import prewarm  # the read kernel-dashboard started with the server, if any

    early = prewarm.bundle(path, stamp)
    return early if early is not None else load_bundle(path)


def _own_copy(bundle: Bundle) -> Bundle:
    """A copy of the one cached bundle that a page may change without changing it for any
    other: its own manifest (deep) and tables (shallow: pandas' copy-on-write copies a column
    on its first write). As ``st.cache_data``'s unpickled copy was, without unpickling the
    whole bundle on every call (a 10,000-config sweep: 243 MB, about 1 s, twice a page).
    The manifest is copied by :func:`_plain_copy`, not ``copy.deepcopy`` (2-4 times a script
    run, 0.5-2 ms each for a bundled job on the 2-core machine; 2026-12-07, issue 40): a pickle
    round trip is faster still, but the app never imports a pickle module
    (tests/unit/test_security_surface.py)."""
    manifest = _plain_copy(bundle.manifest)
    return dataclasses.replace(bundle, manifest=manifest,
                               tables={k: v.copy(deep=False) for k, v in bundle.tables.items()})


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _plain_copy(value: Any) -> Any:
    """A deep copy of ``value``, a manifest read from JSON: dicts and lists rebuilt, their str,
    int, float, bool and None shared (immutable), anything else through ``copy.deepcopy``. About
    3x faster than ``copy.deepcopy`` of the whole, which keeps a memo of every object; JSON
    data has no object twice, so there is nothing for the memo to keep."""
    kind = type(value)
    if kind is dict:
        return {key: _plain_copy(item) for key, item in value.items()}
    if kind is list:
        return [_plain_copy(item) for item in value]
    return value if kind in _SCALARS else copy.deepcopy(value)


T = TypeVar("T")


@st.cache_data(max_entries=256, show_spinner=False)
def _view(name: str, path: str, stamp: str, args: tuple[Any, ...],
          _fn: Callable[..., T], _bundle: Bundle) -> T:
    del name, path, stamp  # the cache key (the underscored arguments are not hashed)
    return _fn(_bundle, *args)


def view(fn: Callable[..., T], bundle: Bundle, *args: Any) -> T:
    """``fn(bundle, *args)``, computed once per job (path + manifest stamp) and arguments:
    a page shown again (another click, another session) reuses the frame (a copy; errors such
    as MissingData are raised again, not cached). ``args`` must be hashable by Streamlit; the
    key holds every positional argument with ``fn``'s defaults filled in, so a call that leaves
    a default out (the prefetch) and one that passes it (a page) are one entry."""
    try:
        stamp = manifest_stamp(bundle.path)
    except OSError:  # the job folder went away meanwhile: compute, do not cache
        return fn(bundle, *args)
    return _view(f"{fn.__module__}.{fn.__qualname__}", str(bundle.path), stamp,
                 _with_defaults(fn, args), fn, bundle)


def _with_defaults(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, ...]:
    """``args`` (after the bundle) with the defaults of ``fn``'s later positional parameters."""
    return args + _defaults_after(fn, len(args))


@functools.lru_cache(maxsize=512)
def _defaults_after(fn: Callable[..., Any], given: int) -> tuple[Any, ...]:
    """The defaults of ``fn``'s positional parameters after the bundle and ``given`` more, in
    order (those without a default left out). Read once per function and count: :func:`view`
    runs many times on every rerun of a page, and ``inspect.signature`` builds a Signature
    object on each call (review, session 23). A function's defaults are fixed when it is
    defined, so the key is the one an uncached read gives."""
    params = list(inspect.signature(fn).parameters.values())[1 + given:]
    return tuple(p.default for p in params
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                 and p.default is not p.empty)


@st.cache_data(max_entries=128, show_spinner=False)
def _figure(name: str, args: tuple[Any, ...], kwargs: dict[str, Any],
            _build: Callable[..., go.Figure]) -> dict[str, Any]:
    del name  # the cache key with the arguments (the underscored one is not hashed)
    spec: dict[str, Any] = _build(*args, **kwargs).to_dict()
    return spec


def figure(build: Callable[..., go.Figure], *args: Any, **kwargs: Any) -> go.Figure:
    """``build(*args, **kwargs)``, built once per arguments (data frames hashed by content) in
    any session: a page shown again skips plotly's figure assembly (15-55 ms a figure on this
    project's 2-core machine, 2026-11-30) and gets its own copy to colour.

    The cache holds the figure's dict (``to_dict``: plain data, unpickled in well under a
    millisecond) and each copy is made from it without plotly's validation, which the figure
    passed when it was built: a cached ``go.Figure`` was unpickled through its constructor,
    validating every property again (about 25 ms a figure, the Stability page's two charts on
    every visit; 2026-12-05, issue 40). The copy's JSON, what the browser draws, is the same."""
    return go.Figure(_figure(f"{build.__module__}.{build.__qualname__}", args, kwargs, build),
                     _validate=False)


def _shared(job_id: str | None) -> Bundle | None:
    """The one cached bundle of ``job_id`` (never to be changed: :func:`bundle_for` copies
    it), or None when there is none (or the id is unsafe)."""
    if not job_id:
        return None
    try:
        path = result_store.find_bundle(job_id, settings.results_dir(), settings.bundled_dir())
        if path is None:
            return None
        return _load(str(path), manifest_stamp(path))
    except (result_store.InvalidJobId, ManifestError, OSError):
        return None


def bundle_for(job_id: str | None) -> Bundle | None:
    """The loaded bundle of ``job_id``, or None when there is none (or the id is unsafe)."""
    bundle = _shared(job_id)
    return None if bundle is None else _own_copy(bundle)


def job_colors(job_id: str | None) -> dict[str, str]:
    """Annotation -> colour of ``job_id`` (:func:`app.core.share.job.job_colors`), {} when
    there is no such job. Read from the one cached bundle, which it does not change: a page's
    own copy (:func:`bundle_for`) deep-copies the manifest, 10 ms of CPU at 10,000 configs,
    and every chart of every run asked for one just for its colours (issue 37)."""
    bundle = _shared(job_id)
    return {} if bundle is None else share_job.job_colors(bundle)


@st.cache_data(max_entries=32, show_spinner="Reading the Nsight Compute report…")
def _report_answer(command: str, path: str, stamp: str,
                   worker_python: str) -> report_client.ReportAnswer:
    del stamp  # part of the cache key only
    return report_client.ask(worker_python, command, Path(path), settings.worker_env())


def report_answer(command: str, bundle: Bundle) -> report_client.ReportAnswer:
    """The worker's ``rules`` or ``deepdive`` answer for a bundle's report, once per job
    (path + manifest stamp)."""
    try:
        stamp = manifest_stamp(bundle.path)
    except OSError:
        stamp = ""
    return _report_answer(command, str(bundle.path), stamp, settings.worker_python())
