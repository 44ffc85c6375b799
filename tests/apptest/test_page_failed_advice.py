"""A job whose spec the worker refused (an unknown kernel, sizes over the memory check): its
pages give the error's fix, not "Run it again", and Files offers no replication (issue 37,
28_two_kernel_job.png)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from apptest_helpers import texts
from app.core.failure_advice import RUN_AGAIN, next_step
from app.core.metrics import DURATIONS, REPORT_VALUES, no_values_text
from profiling_worker.bundle.schema.manifest import JobStatus

SPECS = {"20261207-130000-nope-0001": {"kernels": ["nope"], "configs": [{"n": 64}]},
         "20261207-130100-matmul-0002": {"kernels": ["matmul"],
                                         "configs": [{"n": 64}, {"n": 1 << 22}]}}


def refused(results: Path, job_id: str) -> dict:
    """Run the worker on ``job_id``'s spec in ``results``; the error its manifest records."""
    job = results / job_id
    job.mkdir()
    (job / "spec.json").write_text(json.dumps({**SPECS[job_id], "runs": 3, "backend": "cpu"}),
                                   encoding="utf-8")
    subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(job)],
                   capture_output=True, check=False, timeout=120)
    manifest = json.loads((job / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["status"] == "failed" and manifest["error"]["kind"] == "spec_invalid"
    return manifest["error"]


@pytest.mark.parametrize("job_id", SPECS)
def test_a_refused_spec_gives_its_fix(store, app, job_id) -> None:
    error = refused(store["results"], job_id)
    at = app(query={"job": job_id})
    assert not at.exception
    shown = texts(at)
    assert no_values_text(DURATIONS, JobStatus.FAILED, error=error) in shown
    assert next_step(error) in shown and RUN_AGAIN not in shown
    at.switch_page("app_pages/files.py").run()
    assert not at.exception
    assert no_values_text(REPORT_VALUES, JobStatus.FAILED, "its report", error) in texts(at)
    assert "Replicate this job" not in [h.value for h in at.subheader]
    assert not [b for b in at.button if b.key and b.key.endswith("replicate")]
