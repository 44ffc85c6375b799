"""Shared pytest setup: markers, the repository root, scenario fixture directories.

Markers (also declared in pyproject.toml):

- ``gpu``: needs the NVIDIA H200; deselected by default (``-m "not gpu"``), run only by
  ``scripts/gpu_check.sh`` on the lent GPU machine, never in CI.
- ``e2e``: starts a real Streamlit server and drives it in headless Chromium.
"""

from __future__ import annotations

import hashlib
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
FIXTURES = REPO_ROOT / "tests" / "fixtures"
ARTIFACTS = REPO_ROOT / "tests" / "artifacts"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "gpu: needs the NVIDIA H200 (never run in CI)")
    config.addinivalue_line("markers", "e2e: real Streamlit server + headless Chromium")


def fixture_dir(name: str) -> Path:
    """Path of the scenario directory ``tests/fixtures/<name>/`` (HTA-style test data).

    Raises:
        FileNotFoundError: naming the missing scenario and the ones that exist.
    """
    path = FIXTURES / name
    if not path.is_dir():
        known = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()) if FIXTURES.is_dir() else []
        raise FileNotFoundError(f"no fixture scenario {name!r} under {FIXTURES} (have: {known})")
    return path


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository root (the directory holding pyproject.toml)."""
    return REPO_ROOT


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    """``tests/artifacts/`` (git-ignored): screenshots and logs that tests leave for people."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


def finished_bundle_hashes(results: Path) -> dict[str, str]:
    """sha256 of every file of every finished (done) bundle under ``results``: compare before
    and after a fault to show that nothing finished was changed or lost."""
    from profiling_worker.bundle.schema.manifest import read_manifest

    out = {}
    for child in sorted(results.iterdir()):
        try:
            if read_manifest(child)["status"] != "done":
                continue
        except Exception:
            continue
        for path in sorted(child.rglob("*")):
            if path.is_file():
                out[str(path.relative_to(results))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.fixture(autouse=True)
def sigterm_handler_restored() -> Iterator[None]:
    """Each test ends with the SIGTERM and SIGINT handlers it began with. ``runner.run_job``
    run in-process installs the worker's own (it raises ``Cancelled``); left in the pytest
    process, a later test's forked pool workers inherited it, so ``Pool.terminate``'s SIGTERM
    no longer killed them, and one that was exiting waited on its result queue for ever (the CI
    beside a hog of session 13: test_fuzz_import timed out after test_probe_in_background).
    The worker's pending cancel too (``backends.base.note_cancel``, which its handler sets): one
    a test's handler call left was raised by every later in-process job's first run (the CI of
    session 26: 18 CUPTI tests "cancelled by Ctrl-C in kernel-sweep" after
    test_sweep_outside_cancel)."""
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    yield
    for sig, handler in before.items():  # SIGINT too: a cancel leaves it ignored (Ctrl-C)
        if signal.getsignal(sig) is not handler:
            signal.signal(sig, handler)
    from profiling_worker.backends import base  # here: the fixture runs for every test

    base.note_cancel(None)
