"""The environment probe's host CPU (environment.cpu): the model a cpu job's times depend on,
its logical CPU count and architecture, from /proc/cpuinfo or the platform module."""

from __future__ import annotations

import os
import platform
from pathlib import Path

import pytest

from profiling_worker.probes import environment


def test_the_model_is_cpuinfos_first_model_name(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nvendor_id\t: GenuineIntel\n"
                       "model name\t: Intel(R) Xeon(R) Platinum 8480+  \n\n"
                       "processor\t: 1\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n")
    assert environment.probe_cpu(cpuinfo) == {"model": "Intel(R) Xeon(R) Platinum 8480+",
                                              "count": os.cpu_count(),
                                              "machine": platform.machine()}


@pytest.mark.parametrize("processor", ["arm", ""])
def test_without_a_model_name_the_platform_module_says_or_none(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, processor: str) -> None:
    """An arm64 kernel's cpuinfo may name no model (CPU part numbers only), macOS has no
    /proc: platform.processor() where it says something, else None (never "")."""
    monkeypatch.setattr(platform, "processor", lambda: processor)
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd4f\n")
    for path in (cpuinfo, tmp_path / "absent"):
        assert environment.probe_cpu(path)["model"] == (processor or None)


def test_every_job_records_the_host_cpu() -> None:
    """probe_environment is what the worker writes into every manifest's environment."""
    cpu = environment.probe_environment()["cpu"]
    assert cpu == environment.probe_cpu() and cpu["count"] == os.cpu_count()
