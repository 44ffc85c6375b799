"""The work kernel-dashboard starts with the server (issue 25): the environment probe and the
first page's imports, in threads; the first script run takes the probe's report."""

from __future__ import annotations

import importlib
import sys

from app.ui import prewarm


def test_the_early_probe_is_the_workers_report_and_is_taken_once() -> None:
    prewarm.start(sys.executable)
    prewarm.wait_for_imports()  # returns once the thread has imported every module
    assert all(name in sys.modules for name in prewarm.MODULES)
    report = prewarm.env_report(sys.executable)
    assert report is not None and report["backends"]["cpu"]["available"] is True
    assert prewarm.env_report(sys.executable) is None  # a re-probe asks the worker again
    assert prewarm.env_report("/no/such/python") is None  # not started for it


def test_every_module_named_exists() -> None:
    """Import errors are swallowed in the thread (the page reports its own), so a module
    renamed later must fail here instead of leaving the list stale."""
    for name in prewarm.MODULES:
        importlib.import_module(name)
