"""``environment.probe_ncu`` asks ``ncu --version`` once per ncu file and reads the cache after:
a replaced ncu is asked again, a cache that cannot be written or read costs only the question."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from profiling_worker.probes import environment


def counting_ncu(bin_dir: Path, version: str) -> tuple[Path, Path]:
    """An ``ncu`` script that prints ``version`` and appends a line to ``calls`` per call."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    calls, script = bin_dir / "calls", bin_dir / "ncu"
    script.write_text(f'#!/bin/sh\necho x >> "{calls}"\n'
                      f'echo "Version {version} (build 36000000) (public-release)"\n')
    script.chmod(0o755)
    return script, calls


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KPROF_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_the_version_is_asked_once_per_ncu_file(tmp_path: Path, cache_dir: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    ncu, calls = counting_ncu(tmp_path / "bin", "2025.3.1.0")
    monkeypatch.setenv("PATH", str(ncu.parent))
    first = environment.probe_ncu()
    assert environment.probe_ncu() == first == {"path": str(ncu), "version": "2025.3.1.0"}
    assert calls.read_text().count("x") == 1
    assert environment.ncu_version_cache().parent == cache_dir

    ncu.write_text(ncu.read_text().replace("2025.3.1.0", "2026.2.1.0"))  # reinstalled
    os.utime(ncu, ns=(1, 1))
    assert environment.probe_ncu()["version"] == "2026.2.1.0"
    assert calls.read_text().count("x") == 2


def test_an_unwritable_or_broken_cache_only_costs_the_question(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ncu, calls = counting_ncu(tmp_path / "bin", "2025.3.1.0")
    monkeypatch.setenv("PATH", str(ncu.parent))
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("KPROF_CACHE_DIR", str(blocker / "cache"))  # under a file: no directory
    assert environment.probe_ncu()["version"] == "2025.3.1.0"
    assert environment.probe_ncu()["version"] == "2025.3.1.0"
    assert calls.read_text().count("x") == 2

    monkeypatch.setenv("KPROF_CACHE_DIR", str(tmp_path / "c2"))
    (tmp_path / "c2").mkdir()
    environment.ncu_version_cache().write_text("{half")
    assert environment.probe_ncu()["version"] == "2025.3.1.0"
    assert environment.probe_ncu()["version"] == "2025.3.1.0"
    assert calls.read_text().count("x") == 3
