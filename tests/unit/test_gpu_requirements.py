"""requirements-gpu.txt is complete: every package that profiling_worker/ imports is listed
(scipy was missing: the worker exited 1 without a manifest), and a worker that cannot import
a dependency still ends its job failed, naming the missing module."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

from profiling_worker.bundle.schema.manifest import read_manifest, write_manifest

REPO = Path(__file__).resolve().parents[1].parent
#: import name -> distribution, where they differ (or the package is absent from this venv)
DISTRIBUTION = {"pynvml": "nvidia-ml-py", "nsight": "nsight-python", "ncu_report": "ncu-report",
                "cupti": "cupti-python", "sklearn": "scikit-learn"}
#: installed before the file from the CUDA wheel index (its header says how)
OUTSIDE = {"torch"}


def _imported_packages() -> dict[str, list[str]]:
    """Top-level third-party modules imported anywhere in profiling_worker/ -> importing files."""
    found: dict[str, list[str]] = {}
    for path in sorted((REPO / "profiling_worker").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top == "profiling_worker":
                    continue
                found.setdefault(top, []).append(str(path.relative_to(REPO)))
    return found


def _listed() -> set[str]:
    names = set()
    for line in (REPO / "requirements-gpu.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.add(re.split(r"[<>=!~;\[ ]", line, maxsplit=1)[0].lower().replace("_", "-"))
    return names


def test_every_package_the_worker_imports_is_in_requirements_gpu() -> None:
    imported = _imported_packages()
    assert {"numpy", "pandas", "pyarrow", "scipy", "pynvml"} <= set(imported)  # found at all
    missing = {mod: files for mod, files in imported.items() if mod not in OUTSIDE
               and DISTRIBUTION.get(mod, mod).lower().replace("_", "-") not in _listed()}
    assert missing == {}, f"add to requirements-gpu.txt: {missing}"


def test_a_missing_dependency_ends_the_job_failed_naming_it(tmp_path: Path) -> None:
    """scipy hidden from the worker (a None entry in sys.modules makes its import fail)."""
    job = tmp_path / "20261129-230000-matmul-nodep"
    job.mkdir()
    (job / "spec.json").write_text(json.dumps({"kernels": ["matmul"], "configs": [{"n": 16}],
                                               "runs": 1, "backend": "cpu", "warmup": 0}))
    write_manifest(job, {"job_id": job.name, "status": "running"})  # as the job manager does
    code = ("import sys; sys.modules['scipy'] = None; "
            "from profiling_worker.cli import main; sys.exit(main(['run', sys.argv[1]]))")
    proc = subprocess.run([sys.executable, "-c", code, str(job)], cwd=REPO, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    manifest = read_manifest(job)
    assert manifest["status"] == "failed"
    error = manifest["error"]
    assert error["kind"] == "missing_dependency" and "scipy" in error["message"]
    assert "requirements-gpu.txt" in error["hint"]
    assert json.loads(proc.stdout.strip().splitlines()[-1])["kind"] == "missing_dependency"
