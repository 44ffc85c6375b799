"""The work kernel-dashboard starts with the server (issue 25): the environment probe and the
first page's imports, in threads; the first script run takes the probe's report."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from app.ui import prewarm
from tests.scenarios import SCENARIOS

REPO = Path(__file__).resolve().parents[3]


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


def test_the_first_page_load_does_not_import_scipy_stats() -> None:
    """scipy.stats took about a second of the first page load (issue 37: a finished sweep's
    first chart); the job panel's sweep watcher imports the sweep's reference-kernel rule,
    which needs it only when a sweep is merged. One real page load in a fresh interpreter:
    the Size sweep of a recorded H200 job, its chart drawn."""
    code = ("import importlib, sys\n"
            "from streamlit.testing.v1 import AppTest\n"
            "from app.ui import prewarm\n"
            "for name in prewarm.MODULES: importlib.import_module(name)\n"
            "at = AppTest.from_file('app/streamlit_app.py', default_timeout=300)\n"
            "at.query_params['job'] = 'h200-ncu-matmul-sweep'\n"
            "at.run()\n"
            "assert not at.exception and at.get('plotly_chart'), at.exception\n"
            "print('scipy.stats' in sys.modules)\n")
    with tempfile.TemporaryDirectory() as results:
        env = {**os.environ, "KPROF_RESULTS_DIR": results, "KPROF_BUNDLED_DIR": str(SCENARIOS),
               "KPROF_WORKER_PYTHON": sys.executable}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             cwd=REPO, env=env, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_the_likely_jobs_are_the_newest_finished_and_the_defaults(tmp_path) -> None:
    from app.services.result_store import list_bundles

    newest = tmp_path / "sweep-just-finished"
    shutil.copytree(SCENARIOS / "h200-ncu-softmax", newest)
    manifest = json.loads((newest / "manifest.json").read_text())
    manifest["created_at"] = "2099-01-01T00:00:00+00:00"
    (newest / "manifest.json").write_text(json.dumps(manifest))
    bundles = list_bundles(tmp_path, SCENARIOS)[0]
    # with a GPU the default is the newest finished job; without one, the guide's sweep
    assert prewarm.likely_jobs(bundles) == ["sweep-just-finished", "h200-ncu-matmul-sweep"]
    assert prewarm.likely_jobs([]) == []


def test_reading_bundles_after_the_imports_imports_nothing_more() -> None:
    """The thread reads the bundles after the first script run may have started importing:
    a module imported by both at once can be seen half initialised (plotly found a pandas
    without Series), so every module the reads need is among MODULES."""
    code = ("import importlib, sys\n"
            "from pathlib import Path\n"
            "from app.ui import prewarm\n"
            "for name in prewarm.MODULES: importlib.import_module(name)\n"
            "from app.services.result_store import list_bundles\n"
            "from profiling_worker.bundle.loader import load_bundle, manifest_mtime\n"
            "before = set(sys.modules)\n"
            f"bundles = list_bundles(Path({str(SCENARIOS)!r}), None)[0]\n"
            "prewarm.likely_jobs(bundles)\n"
            "for b in bundles: manifest_mtime(b.path); load_bundle(b.path)\n"
            "print(sorted(set(sys.modules) - before))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=REPO, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"
