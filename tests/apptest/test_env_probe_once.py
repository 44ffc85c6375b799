"""The session's memo of the worker's environment report (conftest's ``env_probed_once``):
the report ignores what its key leaves out, the key changes with what the probe reads, and a
page's first probe takes the memo while "Probe again" and a changed input ask the worker."""

from __future__ import annotations

import os
import sys
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import pytest

from apptest_helpers import NOT_PROBED, probe_inputs
from app.services import worker_client
from app.ui import cached

NCU_VERSION = "2025.3.1.0"


@pytest.fixture
def probes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The worker interpreter of every ``profiling_worker env`` the test runs."""
    calls: list[str] = []
    real = worker_client.probe_environment

    def counted(worker_python: str, timeout_s: float = 120.0) -> dict[str, Any]:
        calls.append(worker_python)
        return real(worker_python, timeout_s)

    monkeypatch.setattr(worker_client, "probe_environment", counted)
    return calls


def _fake_ncu(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An ``ncu`` that prints only its version, first on PATH (its version cache in ``folder``)."""
    folder.mkdir()
    ncu = folder / "ncu"
    ncu.write_text(f'#!/bin/sh\necho "Version {NCU_VERSION}"\n', encoding="utf-8")
    ncu.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("KPROF_CACHE_DIR", str(folder / "cache"))
    return ncu


def test_the_report_ignores_what_the_key_leaves_out(store, monkeypatch, tmp_path) -> None:
    first = worker_client.probe_environment(sys.executable)
    for name in NOT_PROBED:
        monkeypatch.setenv(name, str(tmp_path / "elsewhere"))
    assert "error" not in first
    assert worker_client.probe_environment(sys.executable) == first


def test_the_key_changes_with_what_the_probe_reads(store, monkeypatch, tmp_path) -> None:
    key = probe_inputs(sys.executable)
    for name in NOT_PROBED:
        monkeypatch.setenv(name, str(tmp_path / "elsewhere"))
    assert probe_inputs(sys.executable) == key
    keys: list[Hashable] = [key]

    def changed() -> bool:
        keys.append(probe_inputs(sys.executable))
        return keys[-1] not in keys[:-1]

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    assert changed()
    ncu = _fake_ncu(tmp_path / "bin", monkeypatch)
    assert changed()
    ncu.write_text("#!/bin/sh\necho 'Version 1.0'\n", encoding="utf-8")  # replaced in place
    assert changed()
    kernels = tmp_path / "kernels"
    monkeypatch.setenv("KPROF_KERNEL_DIRS", str(kernels))
    assert changed()
    kernels.mkdir()
    (kernels / "mine.py").write_text("x = 1\n", encoding="utf-8")
    assert changed()
    (kernels / "mine.py").write_text("x = 12\n", encoding="utf-8")
    assert changed()
    monkeypatch.chdir(tmp_path)
    assert changed()
    assert probe_inputs(sys.executable + "3") != keys[-1]


def test_a_first_probe_takes_the_memo_and_probe_again_asks_the_worker(
        store, app, probes, env_probed_once, env_reports) -> None:
    key = probe_inputs(sys.executable)
    if key not in env_reports:  # this test alone: nothing probed these inputs yet
        env_reports[key] = worker_client.probe_environment(sys.executable)
        probes.clear()
    at = app("environment")
    assert not at.exception
    assert env_probed_once == [key] and probes == []
    assert cached.env_report() == env_reports[key]
    assert cached.env_report() is not env_reports[key]  # a copy: the page cannot change the memo
    at.button(key="environment-reprobe").click().run()
    assert not at.exception
    assert probes == [sys.executable]  # "Probe again" ran the worker
    assert cached.env_report() == env_reports[key]


def test_a_changed_input_asks_the_worker(store, app, probes, env_probed_once,
                                         monkeypatch, tmp_path) -> None:
    ncu = _fake_ncu(tmp_path / "bin", monkeypatch)
    at = app("environment")
    assert not at.exception
    assert env_probed_once == [] and probes == [sys.executable]
    assert worker_client.environment_of(cached.env_report())["ncu"] == {
        "path": str(ncu), "version": NCU_VERSION}
