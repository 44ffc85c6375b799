"""Every module, function or file of the project that the docs or a docstring names in full still
exists: dotted names (``profiling_worker.bundle.loader.load_bundle``, ``app.core.x``) and paths
(``profiling_worker/bundle/report_walk.py``, ``app/core/views/compare.gate_side``) in docs/*.md,
README.md and the .py files of app/ and profiling_worker/ (docstrings and comments included).
Names are resolved by reading the source (modules, top-level names, a class's members), never
by importing it, so a module that needs the GPU is checked too. A codemod that moves modules
rewrites imports, not prose: this test finds the prose it left behind."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("profiling_worker", "app")
_NAME = r"[A-Za-z_]\w*"
#: ``profiling_worker.a.b`` or ``app.a.b``, not inside another dotted name or path.
DOTTED = re.compile(rf"(?<![\w./-])((?:{'|'.join(PACKAGES)})(?:\.{_NAME})+)")
#: ``profiling_worker/a/b.py``, ``app/a/b``, ``app/a/b.name``.
PATH = re.compile(rf"(?<![\w./-])((?:{'|'.join(PACKAGES)})/[\w./-]*\w)")
#: A last segment that is a file's extension (``python3 app.py``: a user's program, not ours).
FILE_ENDINGS = {"py", "md", "toml", "json", "log", "csv", "txt", "html", "sh"}
#: Names the design notes give as they were before a change (a dated record, not a claim about
#: the code now): name -> where and why.
HISTORY = {
    "app/core/bundle_loader.read_table": "design-notes, issue 38's 'before' column",
    "app/core/provenance.KIND_WORDS": "design-notes, issue 38: named as removed",
}


def _documents() -> list[Path]:
    docs = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
    code = sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))
    return docs + code


@functools.cache
def _members(source: Path) -> dict[str, set[str] | None]:
    """Top-level names of a module -> the member names of a class (None: not a class)."""
    tree = ast.parse(source.read_text(encoding="utf-8"))
    names: dict[str, set[str] | None] = {}
    for node in tree.body:
        for name in _bound(node):
            names[name] = None
        if isinstance(node, ast.ClassDef):
            names[node.name] = {n for child in node.body for n in _bound(child)}
    return names


def _bound(node: ast.stmt) -> list[str]:
    """The names a top-level statement binds (under ``if TYPE_CHECKING`` / ``try`` too)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    if isinstance(node, (ast.If, ast.Try)):
        return [n for child in [*node.body, *node.orelse] for n in _bound(child)]
    return []


def resolves(name: str) -> bool:
    """Whether the dotted ``name`` is a module, package or a (class member of a) top-level name
    of one, by the files under :data:`ROOT`."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:cut])
        source = base.with_suffix(".py") if base.with_suffix(".py").is_file() else \
            base / "__init__.py" if base.is_dir() else None
        if source is None:
            continue
        rest = parts[cut:]
        if not rest:
            return True
        members = _members(source) if source.is_file() else {}
        if rest[0] not in members:
            return False
        inner = members[rest[0]]
        return len(rest) == 1 or inner is None or rest[1] in inner
    return False


def _path_resolves(path: str) -> bool:
    if (ROOT / path).exists():
        return True
    dotted = path.removesuffix(".py").replace("/", ".")
    return "." in path.rsplit("/", 1)[-1] and resolves(dotted)


def _stale(text: str) -> list[str]:
    found = [m.group(1) for m in DOTTED.finditer(text)
             if m.group(1).rsplit(".", 1)[-1] not in FILE_ENDINGS and not resolves(m.group(1))]
    found += [m.group(1) for m in PATH.finditer(text)
              if not re.search(r"[*<{]", m.group(1)) and not _path_resolves(m.group(1))]
    return [name for name in found if name not in HISTORY]


def test_every_project_name_in_full_resolves() -> None:
    stale = {str(doc.relative_to(ROOT)): names for doc in _documents()
             if (names := _stale(doc.read_text(encoding="utf-8")))}
    assert not stale, (f"names of what no longer exists: {stale}; write the module's path now "
                       "(or, for a dated record, add it to HISTORY)")


def test_the_check_tells_a_moved_name_from_a_present_one() -> None:
    assert resolves("profiling_worker.bundle.loader.load_bundle")
    assert resolves("profiling_worker.bundle.gate.sides.GateSide.load")
    assert _path_resolves("app/core/views/compare.gate_side")
    assert _path_resolves("profiling_worker/bundle/report_walk.py")
    assert _stale("`profiling_worker.bundle_writer.finish_bundle` and "
                  "`profiling_worker/bundle/loader.no_such_name`, `python3 app.py`") == [
        "profiling_worker.bundle_writer.finish_bundle", "profiling_worker/bundle/loader.no_such_name"]
    assert all(_stale(name) == [] for name in HISTORY)
