"""The work kernel-dashboard starts with the server (issue 25): the environment probe and the
first page's imports, in threads; the first script run takes the probe's report."""

from __future__ import annotations

import functools
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


@functools.lru_cache(maxsize=1)
def _first_page_load_imports() -> frozenset[str]:
    """The modules one real page load imports in a fresh interpreter after MODULES: the Size
    sweep of a recorded H200 job, its chart drawn."""
    code = ("import importlib, json, sys\n"
            "from streamlit.testing.v1 import AppTest\n"
            "from app.ui import prewarm\n"
            "for name in prewarm.MODULES: importlib.import_module(name)\n"
            "before = set(sys.modules)\n"
            "at = AppTest.from_file('app/streamlit_app.py', default_timeout=300)\n"
            "at.query_params['job'] = 'h200-ncu-matmul-sweep'\n"
            "at.run()\n"
            "assert not at.exception and at.get('plotly_chart'), at.exception\n"
            "print(json.dumps(sorted(set(sys.modules) - before)))\n")
    with tempfile.TemporaryDirectory() as results:
        env = {**os.environ, "KPROF_RESULTS_DIR": results, "KPROF_BUNDLED_DIR": str(SCENARIOS),
               "KPROF_WORKER_PYTHON": sys.executable}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             cwd=REPO, env=env, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    return frozenset(json.loads(out.stdout.strip().splitlines()[-1]))


def test_the_first_page_load_does_not_import_scipy_stats() -> None:
    """scipy.stats took about a second of the first page load (issue 37: a finished sweep's
    first chart); the job panel's sweep watcher imports the sweep's reference-kernel rule,
    which needs it only when a sweep is merged."""
    assert "scipy.stats" not in _first_page_load_imports()


def test_the_first_page_load_does_not_import_scipy_special() -> None:
    """Nor scipy.special (0.1 s of CPU, which the thread imported before the first script run
    could start): the Size sweep's CI95 takes its t quantiles from the worker's table, so the
    thread no longer imports it."""
    assert "scipy.special" not in prewarm.MODULES
    assert "scipy.special" not in _first_page_load_imports()


def test_the_first_page_load_imports_none_of_the_apps_own_modules() -> None:
    """Every module of the app, the worker's schema and Pillow (the page icon) that the first
    page needs is among MODULES, so the first script run imports none of them itself (issue
    37: the Size sweep's energy and time-unit controls, the t table and Pillow were imported
    there). The entry script imports app.streamlit_patches itself, before its first page
    (kernel-dashboard: with the server)."""
    own = {name for name in _first_page_load_imports()
           if name.split(".")[0] in ("app", "profiling_worker", "PIL")}
    assert own <= {"app.streamlit_patches", "app.streamlit_patches.server_guard"}, own


def _last_line(code: str) -> str:
    """The last line a fresh interpreter prints running ``code`` in the repository root."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=REPO, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.strip().splitlines()[-1]


def test_the_thread_maps_the_loaded_modules_to_their_files_for_inspect() -> None:
    """The first element Streamlit sends calls ``inspect.stack()``, which maps every loaded
    module to its file once per process: the thread does it first. In a fresh interpreter,
    as kernel-dashboard starts: before, the map lacks the imported modules; after, it has
    every one."""
    code = ("import importlib, inspect, json\n"
            "from app.ui import prewarm\n"
            "mods = [importlib.import_module(name) for name in prewarm.MODULES]\n"
            "files = [inspect.getabsfile(m) for m in mods]\n"
            "before = sum(f in inspect.modulesbyfile for f in files)\n"
            "prewarm._map_module_files()\n"
            "print(json.dumps([before, sum(f in inspect.modulesbyfile for f in files),"
            " len(files)]))\n")
    before, after, count = json.loads(_last_line(code))
    assert before == 0 and after == count


def test_the_likely_jobs_are_the_defaults(tmp_path) -> None:
    from app.services.result_store import list_bundles

    newest = tmp_path / "sweep-just-finished"
    shutil.copytree(SCENARIOS / "h200-ncu-softmax", newest)
    manifest = json.loads((newest / "manifest.json").read_text())
    manifest["created_at"] = "2099-01-01T00:00:00+00:00"
    (newest / "manifest.json").write_text(json.dumps(manifest))
    bundles = list_bundles(tmp_path, SCENARIOS)[0]
    # GPU or none, a tab opens where the user left off: the store's last job to finish
    assert prewarm.likely_jobs(bundles) == ["sweep-just-finished"]
    examples = list_bundles(tmp_path / "none-yet", SCENARIOS)[0]
    newest = next(b.job_id for b in examples if b.status == "done")
    # no job of the store: with a GPU the newest example; without one, the guide's sweep
    assert prewarm.likely_jobs(examples) == [newest, "h200-ncu-matmul-sweep"]
    assert prewarm.likely_jobs([]) == []


def test_reading_bundles_after_the_imports_imports_nothing_more() -> None:
    """The thread reads the bundles and computes their Size sweep's first chart after the
    first script run may have started importing: a module imported by both at once can be
    seen half initialised (plotly found a pandas without Series), so every module the reads
    and the charts need (plotly imports a figure's parts as it first uses them) is among
    MODULES."""
    code = ("import importlib, sys\n"
            "from pathlib import Path\n"
            "from app.ui import prewarm\n"
            "for name in prewarm.MODULES: importlib.import_module(name)\n"
            "from app.services.result_store import list_bundles\n"
            "from app.ui import sweep_chart\n"
            "from profiling_worker.bundle.loader import load_bundle\n"
            "from profiling_worker.bundle.schema.manifest import manifest_stamp\n"
            "before = set(sys.modules)\n"
            f"bundles = list_bundles(Path({str(SCENARIOS)!r}), None)[0]\n"
            "prewarm.likely_jobs(bundles)\n"
            "for b in bundles:\n"
            "    manifest_stamp(b.path)\n"
            "    sweep_chart.compute_default(load_bundle(b.path))\n"
            "print(sorted(set(sys.modules) - before))\n")
    assert _last_line(code) == "[]"
