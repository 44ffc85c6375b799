"""``CI=true bash .ci/run`` beside the README's first command: CI never deletes the ``.venv``
a dashboard is served from (issue 25), nor any venv it did not make itself."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _checkout(tmp_path: Path) -> Path:
    """The script and the README it checks, in a scratch checkout, with a user's .venv."""
    (tmp_path / ".ci").mkdir()
    shutil.copy(REPO / ".ci" / "run", tmp_path / ".ci" / "run")
    shutil.copy(REPO / "README.md", tmp_path / "README.md")
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "kernel-dashboard").write_text("serving")
    return tmp_path


def _run_ci(checkout: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """Run .ci/run with CI=true up to its venv step: PYTHON=false stops it when it would make
    a new venv (nothing is installed)."""
    return subprocess.run(["bash", str(checkout / ".ci" / "run")], capture_output=True,
                          text=True, timeout=60, check=False,
                          env={**os.environ, "CI": "true", "PYTHON": "false", **env})


def test_ci_uses_its_own_venv_and_leaves_the_readme_one(tmp_path: Path) -> None:
    checkout = _checkout(tmp_path)
    proc = _run_ci(checkout)
    assert "=== venv (.venv-ci)" in proc.stdout, proc.stdout + proc.stderr
    assert (checkout / ".venv" / "bin" / "kernel-dashboard").read_text() == "serving"


def test_ci_true_rebuilds_only_a_venv_it_made(tmp_path: Path) -> None:
    checkout = _checkout(tmp_path)
    proc = _run_ci(checkout, VENV=".venv")
    assert ".venv was not made by .ci/run" in proc.stderr
    assert (checkout / ".venv" / "bin" / "kernel-dashboard").read_text() == "serving"
    made = checkout / ".venv-ci"
    (made / "bin").mkdir(parents=True)
    (made / ".created-by-ci").touch()
    _run_ci(checkout)
    assert not (made / "bin").exists(), "CI=true rebuilds the venv it made"
