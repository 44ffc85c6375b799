"""The environment probe finds an ``ncu_report`` that is importable without its PyPI package:
Nsight Compute's own copy in ``<install>/extras/python`` (a lone ``ncu_report.py``, no package
metadata), as on the device machine's Nsight Compute 2025.3.1, and names it; the ncu backend says
why it does not run on that copy alone."""

import sys

from profiling_worker.backends import ncu
from profiling_worker.probes import environment
from profiling_worker.bundle.schema import tools as T


def _extras(tmp_path):
    extras = tmp_path / "nsight-compute" / "2025.3.1" / "extras" / "python"
    extras.mkdir(parents=True)
    (extras / "ncu_report.py").write_text("raise ImportError('the probe must not import it')\n")
    return extras


def _package_metadata(site, record_paths):
    """An ncu-report 2026.3.1 install's metadata in ``site``, its RECORD listing ``record_paths``."""
    info = site / "ncu_report-2026.3.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ncu-report\nVersion: 2026.3.1\n")
    (info / "RECORD").write_text("".join(f"{p},,\n" for p in record_paths))


def _first_on_path(monkeypatch, *folders):
    monkeypatch.setattr(sys, "path", [*map(str, folders), *sys.path])
    # find_spec answers from sys.modules first: an ncu_report an earlier test imported (the
    # package in the venv) would hide the folders
    monkeypatch.delitem(sys.modules, "ncu_report", raising=False)


def test_a_module_without_package_metadata_is_found_and_named_by_its_folder(tmp_path, monkeypatch):
    extras = _extras(tmp_path)
    _first_on_path(monkeypatch, extras)
    monkeypatch.setattr(environment.md, "distribution", _no_distribution)
    assert environment.ncu_report_version() == f"module at {extras}"
    assert "ncu_report" not in sys.modules or sys.modules["ncu_report"].__file__ != str(
        extras / "ncu_report.py")


def _no_distribution(name):
    raise environment.md.PackageNotFoundError(name)


def test_package_metadata_beside_a_module_it_does_not_hold_names_the_module(tmp_path, monkeypatch):
    """A wheel unpacked with its ``.data/purelib`` left in place (scripts/gpu_wheels.sh before
    session 23) has the package's metadata but no importable package: the worker imported
    Nsight Compute's own copy and died of SIGSEGV (device run "gpu 2026-12-07-ncu2") while the
    probe named the package's version, so the backend's refusal of that copy never came."""
    site, extras = tmp_path / "site", _extras(tmp_path)
    stranded = site / "ncu_report-2026.3.1.data" / "purelib" / "ncu_report"
    stranded.mkdir(parents=True)
    (stranded / "__init__.py").write_text("")
    _package_metadata(site, ["ncu_report-2026.3.1.data/purelib/ncu_report/__init__.py"])
    _first_on_path(monkeypatch, site, extras)
    assert environment.ncu_report_version() == f"module at {extras}"


def test_the_installed_package_is_named_by_its_version(tmp_path, monkeypatch):
    site, extras = tmp_path / "site", _extras(tmp_path)
    (site / "ncu_report").mkdir(parents=True)
    (site / "ncu_report" / "__init__.py").write_text("")
    _package_metadata(site, ["ncu_report/__init__.py"])
    _first_on_path(monkeypatch, site, extras)
    assert environment.ncu_report_version() == "2026.3.1"


def test_neither_package_nor_module_is_missing_with_both_fixes_named(monkeypatch):
    monkeypatch.setattr(environment.importlib.util, "find_spec", lambda name: None)
    assert environment.ncu_report_version() is None
    env = {"gpus": [{"index": 0, "name": "H200"}], T.NSIGHT_PYTHON.key: "1.1.0",
           T.NCU.key: {"path": "/usr/local/cuda/bin/ncu", "version": "2026.3.1.0"},
           "ncu_report": None}
    status = ncu.NcuBackend().probe(env)
    assert not status.available
    assert "ncu-report package is missing" in status.reason
    assert status.fix == "pip install ncu-report"


def test_nsight_computes_own_copy_alone_is_named_and_not_used(monkeypatch):
    """The ncu backend does not run on the module alone: with it, the worker's reader died of
    SIGSEGV on the device (device run "gpu 1206-s18cold"), where the package's reader works."""
    extras = "/opt/nvidia/nsight-compute/2025.3.1/extras/python"
    env = {"gpus": [{"index": 0, "name": "H200"}], T.NSIGHT_PYTHON.key: "0.9.6",
           T.NCU.key: {"path": "/usr/local/cuda/bin/ncu", "version": "2025.3.1.0"},
           "ncu_report": f"{environment.MODULE_AT}{extras}"}
    status = ncu.NcuBackend().probe(env)
    assert not status.available and status.fix == "pip install ncu-report"
    assert "extras/python" in status.reason and "crashed" in status.reason
    env["ncu_report"] = "2026.3.1"
    assert ncu.NcuBackend().probe(env).available
