"""AppTest fixtures: a temporary result store, fresh Streamlit caches, a real cpu bundle.

Every test points ``KPROF_RESULTS_DIR`` and ``KPROF_BUNDLED_DIR`` at temporary directories, so
nothing reads or writes the repository's ``results/`` or the app's own bundled dir (tests that
want recorded H200 jobs point ``KPROF_BUNDLED_DIR`` at ``tests.scenarios.SCENARIOS``).
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from apptest_helpers import JOB_ID, ONE_RUN_JOB_ID, TINY_SPEC, record_cpu_job

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


@pytest.fixture
def seeded(store: dict[str, Path], cpu_bundle_src: Path) -> dict[str, Path]:
    """The store with the real cpu bundle in the results dir."""
    shutil.copytree(cpu_bundle_src, store["results"] / JOB_ID)
    return store


@pytest.fixture
def app() -> Callable[..., AppTest]:
    """Factory: the app, optionally switched to a page (``app_pages/<name>.py``) and run."""

    def make(page: str | None = None, query: dict[str, str] | None = None) -> AppTest:
        at = AppTest.from_file(str(APP), default_timeout=TIMEOUT_S)
        for key, value in (query or {}).items():
            at.query_params[key] = value
        at.run()
        if page:
            at.switch_page(f"app_pages/{page}.py").run()
        return at

    return make
