"""examples/slurm/profile_array.sbatch submitted to the real local Slurm (cpu backend; the
script's --gres=gpu:1 is overridden on the command line, as a user on a CPU partition would)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from profiling_worker.bundle.loader import load_bundle

pytestmark = pytest.mark.slurm
REPO = Path(__file__).resolve().parents[2]
SPEC = {"kernels": ["matmul"], "configs": [{"n": 16}], "runs": 2, "backend": "cpu", "warmup": 0}


def _squeue(job: str) -> str:
    return subprocess.run(["squeue", "--noheader", "--array", "-j", job, "-o", "%i %T"],
                          capture_output=True, text=True, check=False).stdout.strip()


def test_the_array_recipe_runs_under_slurm(shared_results: Path) -> None:
    spec = shared_results / "matmul-tiny.json"
    spec.write_text(json.dumps(SPEC), encoding="utf-8")
    env_note = f"KPROF_SPEC={spec},KPROF_RESULTS={shared_results / 'res'}," \
               f"KPROF_PYTHON={sys.executable},KPROF_REPO={REPO}"
    out = subprocess.run(["sbatch", "--parsable", "--array=0-1", "--gres=none",
                          "--cpus-per-task=1", f"--export=ALL,{env_note}",
                          f"--output={shared_results}/kprof-%A_%a.out",
                          str(REPO / "examples" / "slurm" / "profile_array.sbatch")],
                         capture_output=True, text=True, check=True, cwd=shared_results)
    job = out.stdout.strip().split(";")[0]
    deadline = time.monotonic() + 180
    while _squeue(job) and time.monotonic() < deadline:
        time.sleep(0.5)
    logs = "\n".join(p.read_text() for p in shared_results.glob("kprof-*.out"))
    bundles = sorted((shared_results / "res").iterdir())
    assert [b.name.rsplit("-", 1)[0] for b in bundles] == ["matmul-tiny-0", "matmul-tiny-1"], logs
    assert all(load_bundle(b).status == "done" for b in bundles), logs
