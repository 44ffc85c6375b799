"""The Slurm job-array recipe, run with bash on the cpu backend (no Slurm, no GPU needed).

The test plays Slurm: it sets SLURM_ARRAY_TASK_ID / SLURMD_NODENAME for two array tasks on
"two nodes", runs examples/slurm/profile_array.sbatch, and checks the bundles it leaves load in
the dashboard and are listed by the result store and the history index.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from profiling_worker.bundle.loader import load_bundle
from app.services import history_index, result_store
from profiling_worker.bundle.schema import columns as C

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "examples" / "slurm" / "profile_array.sbatch"
SPEC = {"kernels": ["matmul"], "configs": [{"n": 16}, {"n": 32}], "runs": 2, "backend": "cpu",
        "warmup": 0, "label": "slurm recipe test"}

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def _task(tmp_path: Path, task: int, node: str, array_job: str = "4242"
          ) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM")}
    env.update(KPROF_SPEC=str(tmp_path / "matmul-tiny.json"), KPROF_RESULTS=str(tmp_path / "res"),
               KPROF_PYTHON=sys.executable, KPROF_REPO=str(REPO),
               SLURM_ARRAY_TASK_ID=str(task), SLURM_ARRAY_JOB_ID=array_job,
               SLURM_JOB_ID=f"{array_job}{task}", SLURMD_NODENAME=node)
    env.pop("PYTHONPATH", None)
    return subprocess.run(["bash", str(SCRIPT)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300, check=False)


def test_array_tasks_write_bundles_the_dashboard_opens(tmp_path: Path) -> None:
    (tmp_path / "matmul-tiny.json").write_text(json.dumps(SPEC), encoding="utf-8")
    for task, node in ((0, "gpu-a01"), (1, "gpu-b.02")):
        proc = _task(tmp_path, task, node)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    results = tmp_path / "res"
    want = ["matmul-tiny-0-gpu-a01", "matmul-tiny-1-gpu-b.02"]
    assert sorted(p.name for p in results.iterdir()) == want
    for name in want:
        bundle = load_bundle(results / name)
        assert bundle.status == "done" and bundle.backend == "cpu"
        assert json.loads((results / name / C.SPEC_FILE).read_text()) == SPEC
        assert not bundle.table(C.TABLE_AGGREGATED).empty
    listed, problems = result_store.list_bundles(results)
    assert sorted(b.job_id for b in listed) == want and problems == []
    assert len({b.manifest.get("spec_hash") for b in listed}) == 1  # same spec everywhere
    history_index.sync(results)
    assert sorted(r.job_id for r in history_index.rows(results)) == want


def test_a_rerun_never_overwrites_a_bundle(tmp_path: Path) -> None:
    (tmp_path / "matmul-tiny.json").write_text(json.dumps(SPEC), encoding="utf-8")
    assert _task(tmp_path, 0, "n1").returncode == 0
    first = (tmp_path / "res" / "matmul-tiny-0-n1" / C.MANIFEST_FILE).read_bytes()
    proc = _task(tmp_path, 0, "n1", array_job="4343")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "res" / "matmul-tiny-0-n1" / C.MANIFEST_FILE).read_bytes() == first
    assert load_bundle(tmp_path / "res" / "matmul-tiny-0-n1-4343").status == "done"


def test_missing_spec_is_a_usage_error(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "KPROF_SPEC"}
    proc = subprocess.run(["bash", str(SCRIPT)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode != 0 and "KPROF_SPEC" in proc.stderr
    assert not (tmp_path / "results").exists()


def test_a_third_run_of_the_same_task_gets_a_folder_of_its_own(tmp_path: Path) -> None:
    """A requeued task keeps its job id: the same task, node and array id run three times."""
    (tmp_path / "matmul-tiny.json").write_text(json.dumps(SPEC), encoding="utf-8")
    for _ in range(3):
        proc = _task(tmp_path, 0, "n1", array_job="4444")
        assert proc.returncode == 0, proc.stdout + proc.stderr
    names = sorted(p.name for p in (tmp_path / "res").iterdir())
    assert names == ["matmul-tiny-0-n1", "matmul-tiny-0-n1-4444", "matmul-tiny-0-n1-4444-2"]
    assert all(load_bundle(tmp_path / "res" / n).status == "done" for n in names)
