"""AppTest fixtures: a temporary result store, fresh Streamlit caches, a real cpu bundle, the
worker's environment report probed once per session for each set of inputs.

Every test points ``KPROF_RESULTS_DIR`` and ``KPROF_BUNDLED_DIR`` at temporary directories, so
nothing reads or writes the repository's ``results/`` or the app's own bundled dir (tests that
want recorded H200 jobs point ``KPROF_BUNDLED_DIR`` at ``tests.scenarios.SCENARIOS``).
"""

from __future__ import annotations

import copy
import logging
import shutil
import subprocess
import sys
from collections.abc import Callable, Hashable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import streamlit as st
from streamlit.components.v2.component_manager import BidiComponentManager
from streamlit.testing.v1 import AppTest

from apptest_helpers import (DEFAULT_HEADER, DEFAULT_PAGE, DEFAULT_SET, IMPORTED, JOB_ID,
                             ONE_RUN_JOB_ID, TINY_SPEC, probe_inputs, record_cpu_job)
from app.core.pages import page as page_entry
from app.services import worker_client
from app.sidebar import job_builder
from app.ui import prewarm

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
APP = REPO / "app" / "streamlit_app.py"
TIMEOUT_S = 300  # a script run's bound: generous for a busy 2-core CI machine (load up to 31)


@pytest.fixture(autouse=True)
def fresh_caches() -> Iterator[None]:
    """cache_resource is shared by every AppTest of the process: start and end empty
    (clearing also shuts the job manager down, killing any worker it still runs)."""
    st.cache_resource.clear()
    st.cache_data.clear()
    yield
    st.cache_resource.clear()
    st.cache_data.clear()


@pytest.fixture(autouse=True)
def deliberate_clicks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every Run an AppTest presses is a deliberate click: a second Run answers the question
    the first asked however soon the script runs it (``job_builder.DOUBLE_CLICK_S``, the
    double-click time, is a person's; a test of a double click sets it back)."""
    monkeypatch.setattr(job_builder, "DOUBLE_CLICK_S", 0.0)


@pytest.fixture(scope="session")
def env_reports() -> dict[Hashable, dict[str, Any]]:
    """:func:`probe_inputs` -> the worker's environment report probed for them this session."""
    return {}


@pytest.fixture(autouse=True)
def env_probed_once(monkeypatch: pytest.MonkeyPatch,
                    env_reports: dict[Hashable, dict[str, Any]]) -> list[Hashable]:
    """The first environment probe of each worker interpreter in a test takes the report
    probed for the same :func:`probe_inputs` earlier in the session, as a first page load takes
    the probe ``kernel-dashboard`` began with the server (``prewarm.env_report``); on a miss it
    probes now. Every test's empty caches ran the probe again (0.5 s CPU, ~300 tests).

    A probe the test began itself (``prewarm.start``) wins; later probes in the test ("Probe
    again", caches cleared by the test) run the worker. A report with an ``error`` (the worker
    could not answer) is not kept. Returns the inputs of each probe served from the memo."""
    taken = prewarm.env_report
    asked: set[str] = set()
    served: list[Hashable] = []

    def env_report(worker_python: str) -> dict[str, Any] | None:
        early = taken(worker_python)
        if early is not None or worker_python in asked:
            return early
        asked.add(worker_python)
        key = probe_inputs(worker_python)
        if key in env_reports:
            served.append(key)
            return copy.deepcopy(env_reports[key])
        report = worker_client.probe_environment(worker_python)
        if "error" not in report:
            env_reports[key] = copy.deepcopy(report)
        return report

    monkeypatch.setattr(prewarm, "env_report", env_report)
    return served


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Empty results and bundled dirs, wired into the app's settings."""
    dirs = {"results": tmp_path / "results", "bundled": tmp_path / "bundled"}
    for path in dirs.values():
        path.mkdir()
    monkeypatch.setenv("KPROF_RESULTS_DIR", str(dirs["results"]))
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(dirs["bundled"]))
    monkeypatch.setenv("KPROF_WORKER_PYTHON", sys.executable)
    return dirs


@pytest.fixture(scope="session")
def cpu_bundle_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A done bundle of TINY_SPEC written once by the real worker (cpu backend)."""
    return record_cpu_job(tmp_path_factory.mktemp("worker") / JOB_ID, TINY_SPEC)


@pytest.fixture(scope="session")
def cpu_one_run_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """TINY_SPEC with one run per config, written once by the real worker (cpu backend)."""
    return record_cpu_job(tmp_path_factory.mktemp("worker") / ONE_RUN_JOB_ID,
                          {**TINY_SPEC, "runs": 1})


@pytest.fixture(scope="session")
def default_set_import(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The H200 default-set report (``DEFAULT_SET``) imported once by the worker as
    ``IMPORTED``; tests copy it (each import was a worker process of 6-10 s at load 18)."""
    out = tmp_path_factory.mktemp("imported") / IMPORTED
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "import", str(DEFAULT_SET),
                           "--out", str(out)], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


@pytest.fixture
def seeded(store: dict[str, Path], cpu_bundle_src: Path) -> dict[str, Path]:
    """The store with the real cpu bundle in the results dir."""
    shutil.copytree(cpu_bundle_src, store["results"] / JOB_ID)
    return store


def opens_directly(page: str) -> bool:
    """Whether a first run can open ``app_pages/<page>.py`` (a page other than the default).

    Before its first run AppTest knows no page registry, so ``switch_page`` names the page by
    its file name (``AppTest.switch_page``'s docstring) while ``st.Page`` hashes its
    ``url_path``: the two agree for the pages whose URL path is their file's stem (``files``),
    not for ``one-kernel`` (``one_kernel.py``) and the like, which Streamlit would silently
    replace by the default page."""
    return page_entry(f"{page}.py").url_path == page


@pytest.fixture(scope="session")
def bidi_components() -> BidiComponentManager:
    """Streamlit's registry of the installed v2 components, scanned once per session: an
    AppTest's first run scans every installed distribution's metadata for component manifests
    (0.08 s CPU; none here) and keeps the registry for its later runs, and the installed
    packages do not change during the session."""
    manager = BidiComponentManager()
    manager.discover_and_register_components(start_file_watching=False)
    return manager


@pytest.fixture
def app(bidi_components: BidiComponentManager) -> Callable[..., AppTest]:
    """Factory: the app, optionally switched to a page (``app_pages/<name>.py``) and run.

    The default page and a page that :func:`opens_directly` are the first run's page, as a
    browser opening their URL (one script run); any other is switched to after a run of the
    default page (two). Every AppTest takes the session's :func:`bidi_components`."""

    def make(page: str | None = None, query: dict[str, str] | None = None) -> AppTest:
        at = AppTest.from_file(str(APP), default_timeout=TIMEOUT_S)
        # AppTest._run scans for components while this is None (Streamlit 1.67); a renamed
        # attribute must fail here, not silently scan again in every test
        assert getattr(at, "_bidi_component_manager", ()) is None, "AppTest changed: see conftest"
        at._bidi_component_manager = bidi_components
        for key, value in (query or {}).items():
            at.query_params[key] = value
        if page in (None, DEFAULT_PAGE):
            return at.run()
        if opens_directly(page):
            at.switch_page(f"app_pages/{page}.py").run()
            shown = [h.value for h in at.header]
            assert DEFAULT_HEADER not in shown, \
                f"asked for {page}, the first run showed the default page ({shown})"
            return at
        at.run()
        return at.switch_page(f"app_pages/{page}.py").run()

    return make


@pytest.fixture
def one_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine's worker report, with the ncu backend available on one visible GPU (the
    report of a one-GPU node); everything else (the kernel catalog) as probed."""
    from app.ui import cached

    probed = cached.env_report

    def report() -> dict[str, Any]:
        out = copy.deepcopy(probed())
        out["backends"]["ncu"] = {"available": True, "nsight_mode": "attach"}
        out.setdefault("environment", {})["visible_gpus"] = [
            {"index": 0, "name": "NVIDIA H200", "uuid": "GPU-0"}]
        return out

    monkeypatch.setattr(cached, "env_report", report)


@pytest.fixture
def no_session_state_warning(monkeypatch: pytest.MonkeyPatch,
                             caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Fails the test where Streamlit logs "created with a default value but also had its value
    set via the Session State API" (a widget given its value twice: the browser may show
    either). Streamlit 1.67 checks this only where a server runs, which AppTest has not: its
    check is made to run here."""
    from streamlit.elements.lib import policies

    monkeypatch.setattr(policies, "_shown_default_value_warning", False)  # logged once a process
    monkeypatch.setattr(policies, "runtime", SimpleNamespace(exists=lambda: True))
    policies._LOGGER.addHandler(caplog.handler)
    try:
        yield
    finally:
        policies._LOGGER.removeHandler(caplog.handler)
    assert not [r for r in caplog.get_records("call") if r.levelno >= logging.WARNING
                and "Session State API" in r.getMessage()]
