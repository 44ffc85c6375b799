"""A running Slurm for the sweep tests: the one ``scripts/local_slurm.sh start`` brings up (its
``SLURM_CONF``), or the cluster this shell already points at.

Without Slurm these tests skip, saying why, so a developer without it still passes; with
``KPROF_SLURM_TEST=1`` (``.ci/run`` sets it after starting Slurm) they fail instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from app.services.job_model import Job
from app.services.slurm_executor import SlurmExecutor

REPO = Path(__file__).resolve().parents[2]
SWEEP_KERNELS = REPO / "tests" / "fixtures" / "kernel_files_sweep"


def _default_conf() -> Path:
    base = os.environ.get("KPROF_SLURM_DIR") or os.path.join(tempfile.gettempdir(), "kprof-slurm")
    return Path(base) / "slurm.conf"


def slurm_down_reason() -> str | None:
    """None when ``sinfo`` answers with an idle or mixed node, else why not."""
    if shutil.which("sbatch") is None:
        return "Slurm is not installed (no sbatch): apt-get install slurm-wlm munge"
    if "SLURM_CONF" not in os.environ and _default_conf().is_file():
        os.environ["SLURM_CONF"] = str(_default_conf())
    try:
        proc = subprocess.run(["sinfo", "--noheader", "--format=%t"], capture_output=True,
                              text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"sinfo did not answer: {exc}"
    states = proc.stdout.split()
    if proc.returncode != 0 or not any(s.rstrip("*") in ("idle", "mix", "alloc") for s in states):
        return (f"no Slurm node up (sinfo: {proc.stdout.strip() or proc.stderr.strip()}): "
                "run `sudo bash scripts/local_slurm.sh start`")
    return None


@pytest.fixture(scope="session")
def slurm() -> str:
    """SLURM_CONF of a running Slurm; skips (fails with KPROF_SLURM_TEST=1) without one."""
    reason = slurm_down_reason()
    if reason is not None:
        if os.environ.get("KPROF_SLURM_TEST") == "1":
            pytest.fail(f"KPROF_SLURM_TEST=1 but {reason}")
        pytest.skip(reason)
    return os.environ.get("SLURM_CONF", "")


@pytest.fixture
def shared_results(slurm: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A results folder the Slurm tasks can write (the node is this host), with the sweep
    kernels on KPROF_KERNEL_DIRS and this checkout on PYTHONPATH (sbatch passes the
    environment on)."""
    monkeypatch.setenv("KPROF_KERNEL_DIRS", str(SWEEP_KERNELS))
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    folder = Path(tempfile.mkdtemp(prefix="kprof-sweep-"))
    folder.chmod(0o777)  # slurmd runs the tasks as the submitting user; root here and in CI
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def executor(shared_results: Path) -> Iterator[SlurmExecutor]:
    """A sweep executor on the shared folder; at the end its sweeps are cancelled and its
    watchers stopped (a failed test leaves no task running)."""
    made = SlurmExecutor(shared_results, sys.executable, poll_s=0.3)
    yield made
    for job in made.snapshot():
        made.cancel(job.job_id)
        made.wait(job.job_id, 60)
    made.shutdown()


def wait_for(executor: SlurmExecutor, job_id: str, test: Callable[[Job], bool],
             timeout_s: float = 120) -> Job:
    """The job once ``test`` holds for it (polled every 0.2 s); fails after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        job = executor.get(job_id)
        assert job is not None
        if test(job):
            return job
        time.sleep(0.2)
    raise AssertionError(f"timed out; last state {executor.get(job_id)}")
