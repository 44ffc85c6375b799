"""Fixtures of the app unit tests: a real cpu-backend bundle made once by the real worker."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

#: The tiny job every test bundle comes from (host timer, seconds on any machine).
TINY_SPEC = {"kernels": ["matmul"], "configs": [{"n": 32}, {"n": 64}], "runs": 3,
             "backend": "cpu", "warmup": 1}


def run_real_worker(job_dir: Path, spec: dict) -> subprocess.CompletedProcess:
    """Run ``python -m profiling_worker run job_dir`` for ``spec`` (the real worker)."""
    job_dir.mkdir(parents=True, exist_ok=True)
    (job_dir / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(job_dir)],
                          cwd=REPO, capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture(scope="session")
def cpu_bundle_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A done bundle of TINY_SPEC written by the real worker (made once per session)."""
    path = tmp_path_factory.mktemp("worker") / "20261129-230000-matmul-0001"
    proc = run_real_worker(path, TINY_SPEC)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return path


@pytest.fixture
def cpu_bundle(cpu_bundle_src: Path, tmp_path: Path) -> Path:
    """A private copy of the real cpu bundle (tests may change it)."""
    dest = tmp_path / "results" / cpu_bundle_src.name
    shutil.copytree(cpu_bundle_src, dest)
    return dest
