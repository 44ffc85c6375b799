"""The environment probe finds an ``ncu_report`` that is importable without its PyPI package:
Nsight Compute's own copy in ``<install>/extras/python`` (a lone ``ncu_report.py``, no package
metadata), as on the device machine's Nsight Compute 2025.3.1, and names it; the ncu backend says
why it does not run on that copy alone."""

import sys

from profiling_worker.backends import ncu
from profiling_worker.probes import environment
from profiling_worker.bundle.schema import tools as T


def test_a_module_without_package_metadata_is_found_and_named_by_its_folder(tmp_path, monkeypatch):
    extras = tmp_path / "nsight-compute" / "2025.3.1" / "extras" / "python"
    extras.mkdir(parents=True)
    (extras / "ncu_report.py").write_text("raise ImportError('the probe must not import it')\n")
    monkeypatch.setattr(sys, "path", [str(extras), *sys.path])
    # find_spec answers from sys.modules first: an ncu_report an earlier test imported (the
    # package in the venv) would hide the folder
    monkeypatch.delitem(sys.modules, "ncu_report", raising=False)
    monkeypatch.setattr(environment, "_dist_version",
                        lambda name: None if name == "ncu-report" else "1.0")
    assert environment.ncu_report_version() == f"module at {extras}"
    assert "ncu_report" not in sys.modules or sys.modules["ncu_report"].__file__ != str(
        extras / "ncu_report.py")


def test_neither_package_nor_module_is_missing_with_both_fixes_named(monkeypatch):
    monkeypatch.setattr(environment, "_dist_version", lambda name: None)
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
