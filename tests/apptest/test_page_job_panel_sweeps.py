"""The job panel of a second dashboard server on the same results folder: a sweep that another
server watches (it holds the sweep's watch lock) is listed read-only, without Cancel. The sweep
is real: submitted in another process on submitit's local executor (no Slurm needed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from apptest_helpers import texts
from app.ui import cached

SWEEP_KERNELS = Path(__file__).resolve().parents[1] / "fixtures" / "kernel_files_sweep"
# The other server: submits a 60 s sweep, says its id, and holds the sweep until its stdin
# closes; then it cancels it (the task process ends) and waits for the merge.
OTHER_SERVER = """
import sys
from pathlib import Path
from app.services.slurm_executor import SlurmExecutor
from app.services.sweep_plan import SweepOptions
from profiling_worker.bundle.schema.spec import validate_spec
ex = SlurmExecutor(Path(sys.argv[1]), sys.executable, poll_s=0.3)
spec = validate_spec({"kernels": ["sweep_sleep"], "configs": [{"ms": 60000}], "runs": 1,
                      "backend": "cpu", "warmup": 0})
job_id = ex.submit(spec, SweepOptions(cluster="local", reference=False, retries=0))
print(job_id, flush=True)
sys.stdin.read()
ex.cancel(job_id)
print(ex.wait(job_id, 600), flush=True)  # generous: a busy machine ends the task slowly
ex.shutdown()
"""


def test_a_sweep_another_server_watches_is_shown_read_only(store, app, monkeypatch) -> None:
    monkeypatch.setenv("KPROF_KERNEL_DIRS", str(SWEEP_KERNELS))
    other = subprocess.Popen([sys.executable, "-c", OTHER_SERVER, str(store["results"])],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert other.stdin is not None and other.stdout is not None
    try:
        job_id = other.stdout.readline().strip()
        assert job_id, "the other server submitted nothing"
        at = app()  # this server's first page load resumes what no one watches
        assert not at.exception
        text = texts(at)
        assert f"Read-only here: watched by the dashboard server pid {other.pid}" in text
        assert job_id in text
        assert all(b.key != f"panel-cancel-{job_id}" for b in at.button)  # not ours to cancel
        assert cached.slurm_executor().get(job_id).watched_by
    finally:
        other.stdin.close()
        ended = other.stdout.readline().strip()
        other.wait(120)
        assert ended == "cancelled", f"the other server's sweep ended {ended!r}, not cancelled"
