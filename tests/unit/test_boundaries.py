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
- The app imports from the worker its ``schema/`` and only the modules :data:`APP_MAY_IMPORT`
  names, each with its reason in docs/design-notes.md.
- Worker packages point down only (:data:`WORKER_LAYERS`): ``extract/`` never imports
  ``backends/`` or ``importing/``, ``schema/`` and ``catalog/`` import no other package.
- Streamlit's internals (``streamlit.web``, ``streamlit.runtime``, ``streamlit.net_util``,
  ``streamlit.config``) are reached only from ``app/streamlit_patches/`` and the launcher
  ``app/cli.py``; elsewhere only the script-run context (``streamlit.runtime.scriptrunner``).
  A patch of Streamlit (``setattr`` on one of its modules) lives in that package.
- Widget keys are built one way: no ``key="..."`` literal in ``app/`` (``app.ui.state.key``).
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


#: Worker modules outside ``schema/`` that the app may import; the reason for each is in
#: docs/design-notes.md ("Walls between the layers"). A new one needs its line there and here.
APP_MAY_IMPORT = frozenset({
    "profiling_worker.bundle_path",
    "profiling_worker.catalog.builtin",
    "profiling_worker.catalog.declare",
    "profiling_worker.catalog.registry",
    "profiling_worker.errors",
    "profiling_worker.extract.aggregated_repair",
    "profiling_worker.gate.command",
    "profiling_worker.gate.context",
    "profiling_worker.gate.judge",
    "profiling_worker.gate.replication",
    "profiling_worker.gate.report",
    "profiling_worker.gate.sides",
    "profiling_worker.gate.verdict",
    "profiling_worker.importing.how_read",
    "profiling_worker.importing.sniff",
    "profiling_worker.inflate",
    "profiling_worker.spreadsheet",
    "profiling_worker.sweep_merge",
    "profiling_worker.sweep_task",
    "profiling_worker.timeline",
})


def _is_module(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def worker_modules_imported(path: Path) -> set[str]:
    """Worker modules a file imports: ``from a.b import c`` gives ``a.b.c`` when ``c`` is a
    module, else ``a.b``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            out.update(a.name for a in n.names)
        elif isinstance(n, ast.ImportFrom) and n.level == 0 and n.module:
            leaves = {f"{n.module}.{a.name}" for a in n.names}
            out.update(m if _is_module(m) else n.module for m in leaves)
    return {m for m in out if m.split(".")[0] == "profiling_worker"}


def test_app_imports_only_the_allowed_worker_modules() -> None:
    found = {m: p for p in _py_files("app") for m in worker_modules_imported(p)}
    outside = {m: str(p.relative_to(ROOT)) for m, p in found.items()
               if not m.startswith("profiling_worker.schema") and m not in APP_MAY_IMPORT}
    assert outside == {}, "add each to APP_MAY_IMPORT with its reason in docs/design-notes.md"
    assert sorted(APP_MAY_IMPORT - set(found)) == [], "no longer imported: drop from the list"


def test_each_allowed_worker_module_has_its_reason() -> None:
    notes = (ROOT / "docs" / "design-notes.md").read_text(encoding="utf-8")
    assert "## Walls between the layers" in notes
    section = notes.split("## Walls between the layers", 1)[1].split("\n## ", 1)[0]
    assert [m for m in sorted(APP_MAY_IMPORT) if f"`{m.split('.', 1)[1]}`" not in section] == []


#: Worker packages by layer: a package imports only packages of a lower layer.
WORKER_LAYERS = {"schema": 0, "catalog": 0, "extract": 1, "gate": 2, "importing": 2,
                 "backends": 2}


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
