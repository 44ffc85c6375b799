"""The walls of docs/design-notes.md ("Walls between the layers"), checked by reading the imports
of every module (AST).

- No ``streamlit`` import in ``profiling_worker/``, ``app/core/`` or ``app/services/``.
- No ``nsight``, ``torch`` or ``ncu_report`` import anywhere in ``app/`` (the server process must
  never load the Nsight injection, initialise CUDA or need the GPU environment).
- ``nsight`` is imported only under ``profiling_worker/backends/``.
- ``ncu_report`` is imported only by ``profiling_worker/extract/ncu_report_reader.py``.
- ``profiling_worker.catalog`` is imported in ``app/`` only by ``app/core/kernel_catalog.py`` (the
  app reads kernels through what the worker exports).
- ``app/core/figures/`` never imports ``app/core/views/`` (both import ``app/core/frame_columns.py``).
- The agent door (``app/agent_door/``, the MCP server) imports no ``streamlit`` and none of the
  Streamlit layers (``app.ui``, ``app.sidebar``, ``app.app_pages``); nothing else imports it.
- Layers point down only: ``app/core/`` and ``app/services/`` never import ``app.ui``,
  ``app.sidebar`` or ``app.app_pages``; pages (``app/app_pages/``) never import
  ``app.services`` (they talk to ``app/ui``), nor does the sidebar (``app/sidebar/``).
- The app imports the worker only through the packages and modules :data:`APP_MAY_IMPORT` names
  (the shared ``profiling_worker/bundle/``, the catalog, the job-running entry points), each
  with its reason in docs/design-notes.md; ``bundle/`` imports nothing else of the worker.
- Worker packages point down only (:data:`WORKER_LAYERS`): ``extract/`` never imports
  ``backends/`` or ``importing/``, ``bundle/`` and ``catalog/`` import no other package; the
  worker's root holds only its entry points (``__main__``, ``cli``).
- Streamlit's internals (``streamlit.web``, ``streamlit.runtime``, ``streamlit.net_util``,
  ``streamlit.config``) are reached only from ``app/streamlit_patches/`` and the launcher
  ``app/cli.py``; elsewhere only the script-run context (``streamlit.runtime.scriptrunner``).
  A patch of Streamlit (``setattr`` on one of its modules) lives in that package.
- Widget keys are built one way: no ``key="..."`` literal in ``app/`` (``app.ui.state.key``).
- No test imports ``conftest`` by its bare name (a whole-suite run has several).
- Every ``tests/gpu`` module imports in an interpreter without ``plotly`` and ``streamlit``
  (the H200's has neither: ../shared/facts/device-h200.md), imports followed at run time.

Imports inside functions count too. Directories that do not exist yet are simply empty.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _py_files(*parts: str) -> list[Path]:
    base = ROOT.joinpath(*parts)
    if not base.is_dir():
        return []
    return sorted(p for p in base.rglob("*.py") if "__pycache__" not in p.parts)


def imported_roots(path: Path) -> set[str]:
    """Top-level module names imported by a file (``import a.b`` and ``from a.b import c`` give ``a``).

    Relative imports are ignored: they stay inside the package.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and _is_dynamic_import(node):
            roots.add(node.args[0].value.split(".")[0])  # type: ignore[attr-defined]
    return roots


def _is_dynamic_import(node: ast.Call) -> bool:
    """``importlib.import_module("x")`` / ``__import__("x")`` with a literal name."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return (name in ("import_module", "__import__") and bool(node.args)
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str))


def _offenders(files: list[Path], banned: set[str]) -> list[str]:
    return [f"{p.relative_to(ROOT)} imports {sorted(imported_roots(p) & banned)}"
            for p in files if imported_roots(p) & banned]


def _all_py() -> list[Path]:
    return _py_files("app") + _py_files("profiling_worker")


def test_no_streamlit_in_worker_core_services() -> None:
    files = _py_files("profiling_worker") + _py_files("app", "core") + _py_files("app", "services")
    assert _offenders(files, {"streamlit"}) == []


def test_app_never_imports_gpu_libraries() -> None:
    assert _offenders(_py_files("app"), {"nsight", "torch", "ncu_report"}) == []


def test_nsight_only_in_worker_backends() -> None:
    backends = ROOT / "profiling_worker" / "backends"
    files = [p for p in _all_py() if backends not in p.parents]
    assert _offenders(files, {"nsight"}) == []


def test_ncu_report_only_in_its_reader() -> None:
    reader = ROOT / "profiling_worker" / "extract" / "ncu_report_reader.py"
    files = [p for p in _all_py() if p != reader]
    assert _offenders(files, {"ncu_report"}) == []


def imported_modules(path: Path) -> set[str]:
    """Dotted names of the absolute imports of a file (``from a.b import c`` gives ``a.b``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    return names | {n.module for n in ast.walk(tree)
                    if isinstance(n, ast.ImportFrom) and n.level == 0 and n.module}


def test_app_reads_the_kernel_catalog_in_one_module() -> None:
    gateway = ROOT / "app" / "core" / "kernel_catalog.py"
    offenders = [str(p.relative_to(ROOT)) for p in _py_files("app") if p != gateway
                 and any(m.startswith("profiling_worker.catalog") for m in imported_modules(p))]
    assert offenders == []


def test_figures_never_import_views() -> None:
    # Figures draw what a view built; names both need live in app/core/frame_columns.py.
    offenders = [str(p.relative_to(ROOT)) for p in _py_files("app", "core", "figures")
                 if any(m.startswith("app.core.views") for m in imported_modules(p))]
    assert offenders == []


def _imported_names(path: Path) -> set[str]:
    """:func:`imported_modules` plus ``a.b.c`` for ``from a.b import c`` (``c`` may be a module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return imported_modules(path) | {f"{n.module}.{a.name}" for n in ast.walk(tree)
                                     if isinstance(n, ast.ImportFrom) and n.level == 0
                                     and n.module for a in n.names}


def _importing(files: list[Path], banned: tuple[str, ...]) -> list[str]:
    """``file imports module`` for each import of a module under one of the ``banned`` packages."""
    return [f"{p.relative_to(ROOT)} imports {m}" for p in files for m in sorted(_imported_names(p))
            if any(m == b or m.startswith(b + ".") for b in banned)]


def test_core_and_services_never_import_the_streamlit_layers() -> None:
    files = _py_files("app", "core") + _py_files("app", "services")
    assert _importing(files, ("app.ui", "app.sidebar", "app.app_pages")) == []


def test_agent_door_stays_outside_streamlit() -> None:
    door = _py_files("app", "agent_door")
    assert door, "app/agent_door/ is missing"
    assert _offenders(door, {"streamlit"}) == []
    assert _importing(door, ("app.ui", "app.sidebar", "app.app_pages")) == []
    others = [p for p in _all_py() if (ROOT / "app" / "agent_door") not in p.parents]
    assert _importing(others, ("app.agent_door",)) == []


def test_pages_never_import_services() -> None:
    assert _importing(_py_files("app", "app_pages"), ("app.services",)) == []


def test_sidebar_goes_through_ui() -> None:
    assert _importing(_py_files("app", "sidebar"), ("app.services",)) == []


#: What the app may import of the worker: a package (with everything below it) or a module, each
#: with its reason; docs/design-notes.md ("Walls between the layers") gives each its line.
APP_MAY_IMPORT = {
    "profiling_worker.bundle": "what both sides share: the schema, statistics, gate, paths, "
                               "inflation, writers and the one Bundle loader",
    "profiling_worker.catalog": "the kernels the form offers (app/core/kernel_catalog.py only)",
    "profiling_worker.sweep": "job-running entry point: submitit pickles sweep.task.run_task for "
                              "the nodes; the app merges a sweep's finished tasks",
    "profiling_worker.importing.how_read": "the Import page shows how each field is read",
    "profiling_worker.importing.kinds": "the Import page lists the supported formats and the "
                                        "import banner names each file's kind, from the registry",
    "profiling_worker.importing.sniff": "the Import page lists the formats the importer reads",
}


def _allowed(module: str) -> bool:
    return any(module == a or module.startswith(a + ".") for a in APP_MAY_IMPORT)


def _is_module(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _worker_imports(files: list[Path]) -> dict[str, str]:
    """Worker module -> a file importing it (``from a.b import c`` gives ``a.b.c`` when ``c`` is a
    module, and ``a.b`` always)."""
    return {m: str(p.relative_to(ROOT)) for p in files for m in _imported_names(p)
            if m.split(".")[0] == "profiling_worker" and _is_module(m)}


def test_app_imports_the_worker_only_through_the_allowed_packages() -> None:
    found = _worker_imports(_py_files("app"))
    assert {m: p for m, p in found.items() if not _allowed(m)} == {}, (
        "the app imports the worker through profiling_worker.bundle; a new entry point needs "
        "its line in APP_MAY_IMPORT and in docs/design-notes.md")
    assert [a for a in APP_MAY_IMPORT if not any(m == a or m.startswith(a + ".") for m in found)
            ] == [], "no longer imported: drop from the list"


def test_each_allowed_worker_package_has_its_reason() -> None:
    notes = (ROOT / "docs" / "design-notes.md").read_text(encoding="utf-8")
    assert "## Walls between the layers" in notes
    section = notes.split("## Walls between the layers", 1)[1].split("\n## ", 1)[0]
    assert [a for a in APP_MAY_IMPORT if f"`{a.split('.', 1)[1]}`" not in section] == []


def test_the_shared_package_imports_nothing_else_of_the_worker() -> None:
    # No arrow back up: the app imports profiling_worker.bundle without the rest of the worker.
    shared = _py_files("profiling_worker", "bundle")
    assert [f"{p} imports {m}" for m, p in _worker_imports(shared).items()
            if not m.startswith("profiling_worker.bundle")] == []
    assert _importing(shared, ("app",)) == []


def test_the_worker_root_holds_only_its_entry_points() -> None:
    # Each module lives in the package of its concern (running a job, sweeps, probes, ...).
    loose = sorted(p.name for p in (ROOT / "profiling_worker").glob("*.py"))
    assert loose == ["__init__.py", "__main__.py", "cli.py"]


#: Worker packages by layer: a package imports only packages of a lower layer.
WORKER_LAYERS = {"bundle": 0, "catalog": 1, "extract": 1, "probes": 1, "importing": 2,
                 "backends": 2, "job": 3, "sweep": 3}


def test_worker_packages_point_down() -> None:
    offenders = []
    for package, layer in WORKER_LAYERS.items():
        for p in _py_files("profiling_worker", package):
            for m in sorted(_imported_names(p)):
                parts = m.split(".")
                other = parts[1] if parts[0] == "profiling_worker" and len(parts) > 1 else ""
                if other in WORKER_LAYERS and other != package and WORKER_LAYERS[other] >= layer:
                    offenders.append(f"{p.relative_to(ROOT)} imports {m}")
    assert offenders == []


STREAMLIT_INTERNALS = ("streamlit.web", "streamlit.runtime", "streamlit.net_util",
                       "streamlit.config")


def test_streamlit_internals_only_in_the_patches_package() -> None:
    # One room for what depends on Streamlit's private layout (app/streamlit_patches/__init__.py
    # says why each patch exists and which Streamlit it was checked against).
    patches = ROOT / "app" / "streamlit_patches"
    files = [p for p in _py_files("app") if patches not in p.parents
             and p != ROOT / "app" / "cli.py"]
    reached = [hit for hit in _importing(files, STREAMLIT_INTERNALS)
               if not hit.split(" imports ")[1].startswith("streamlit.runtime.scriptrunner")]
    assert reached == []
    assert [hit for p in files for hit in streamlit_patched(p)] == []
    assert streamlit_patched(patches / "server_guard.py")  # the check sees a patch where it is


def streamlit_patched(path: Path) -> list[str]:
    """``file:line`` of each patch of Streamlit in a file: ``setattr(x, ...)`` or ``x.a = ...``
    where ``x`` is a name the file imported from ``streamlit`` (``st`` too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {a.asname or a.name.split(".")[0] for n in ast.walk(tree)
             if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names
             if ((n.module or "") if isinstance(n, ast.ImportFrom) else a.name)
             .split(".")[0] == "streamlit"}
    hits = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "setattr" and n.args:
            target = n.args[0]
        elif isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Attribute):
            target = n.targets[0].value
        else:
            continue
        if isinstance(target, ast.Name) and target.id in names:
            hits.append(f"{path.relative_to(ROOT)}:{n.lineno}")
    return hits


def test_widget_keys_are_built_one_way() -> None:
    # Keys go through app.ui.state.key (or a constant of app/ui/state.py): e2e tests find
    # widgets by the rendered "<page>-<field>", so one builder keeps them in step.
    offenders = [f"{p.relative_to(ROOT)}:{i}" for p in _py_files("app")
                 for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                 if "key=\"" in line or "key=f\"" in line or "key='" in line]
    assert offenders == []


@pytest.mark.parametrize("source, expected", [
    ("import nsight", {"nsight"}),
    ("import nsight.analyze as na", {"nsight"}),
    ("from torch import nn", {"torch"}),
    ("def f():\n    import ncu_report\n", {"ncu_report"}),
    ("import importlib\nimportlib.import_module('streamlit.web')", {"importlib", "streamlit"}),
    ("from . import nsight", set()),
    ("import nsight_helpers", {"nsight_helpers"}),
])
def test_imported_roots_reads_every_import_form(tmp_path: Path, source: str, expected: set[str]) -> None:
    f = tmp_path / "m.py"
    f.write_text(source)
    assert imported_roots(f) == expected


_BARE_IMPORT = """
import importlib.util, sys
sys.modules["plotly"] = sys.modules["streamlit"] = None  # absent, as on the H200
for path in sys.argv[1:]:
    spec = importlib.util.spec_from_file_location("gpu_test_" + str(len(sys.modules)), path)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
"""


def test_gpu_tests_import_without_the_app_s_plotting_packages() -> None:
    gpu_tests = sorted(str(p) for p in (ROOT / "tests" / "gpu").glob("test_*.py"))
    assert gpu_tests
    done = subprocess.run([sys.executable, "-c", _BARE_IMPORT, *gpu_tests], cwd=ROOT,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]


def test_tests_never_import_a_conftest_by_its_bare_name() -> None:
    """``import conftest`` / ``from conftest import x`` resolves to whichever ``conftest`` a
    whole-suite run imported last (tests/apptest's and tests/unit/app's share the bare name):
    shared helpers live in a module of their own name, or are imported package-qualified
    (``tests.e2e.conftest``)."""
    assert _offenders(_py_files("tests"), {"conftest"}) == []
