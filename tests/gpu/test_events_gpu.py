"""The CUDA-events backend on the H200 against CUPTI (issue 22), on job J1 (fp16 matmul,
n = 1024..8192, 10 runs, L2 flushed before each region on both) recorded in the same device
call by scripts/record_h200.py: ``h200-events-j1-fp16`` and ``h200-cupti-j1-fp16``.

Events time the whole region from an idle stream (start event, the region's launches, end
event); CUPTI adds up the region's kernel durations. So per region and config the events time is
at least CUPTI's, and the difference is the host's launch time of the region (measured in the
events job, start mark to end mark) plus, where the kernels end first, the end event's record
call: the backends page's attribution leaves a residual under 5 % of the events time (issue 22).

Run: ``SEED=1 PYTEST_K=events BARE_BACKENDS=none EVENTS=0 bash scripts/gpu_check.sh
h200-ncu-j1-fp16 h200-cupti-j1-fp16 h200-events-j1-fp16``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from profiling_worker.bundle.schema import backends as B, columns as C
from profiling_worker.bundle.schema.manifest import read_manifest

pytestmark = pytest.mark.gpu
RESULTS = Path(os.environ.get("KPROF_GPU_RESULTS", "/nonexistent"))
EVENTS_JOB, CUPTI_JOB = "h200-events-j1-fp16", "h200-cupti-j1-fp16"
#: Two jobs of one device call differ by clock and run-to-run noise (J1's RSD: 0.1-5.8 %,
#: issue 22), so events may read below CUPTI by this much on the long configs.
BETWEEN_JOBS = 0.02
#: The attribution's target (issue 22): what launch time and kernels leave unexplained, in %
#: of the events time.
RESIDUAL_PCT = 5.0


def _per_run(job: str) -> pd.DataFrame:
    """Per annotation, n and run: the region's summed duration (ns) and its launch count."""
    if not (RESULTS / job / C.MANIFEST_FILE).exists():
        pytest.skip(f"{job} was not recorded in this device call")
    launches = pd.read_parquet(RESULTS / job / C.TABLES_DIR / "launches.parquet")
    timed = launches[launches[C.METRIC].isin([C.GPU_TIME, C.EVENTS_TIME])]  # CUPTI's, events' own
    return (timed.groupby([C.ANNOTATION, "n", C.RUN])[C.VALUE].agg(["sum", "count"])
            .rename(columns={"sum": "ns", "count": "launches"}).reset_index())


def test_events_backend_j1_is_at_least_cupti_per_region_by_its_launch_overhead() -> None:
    events, cupti = _per_run(EVENTS_JOB), _per_run(CUPTI_JOB)
    manifest = read_manifest(RESULTS / EVENTS_JOB)
    assert manifest["status"] == "done", manifest.get("error")
    assert manifest["backend"]["measurement"] == B.EVENTS_BACKEND.measures
    assert manifest["backend"]["cache_flush"]["flushes"] == len(events)  # one per region run
    assert (events["launches"] == 1).all()  # one event pair per region and run
    keys = [C.ANNOTATION, "n"]
    both = (events.groupby(keys)["ns"].mean().rename("events_ns").to_frame()
            .join(cupti.groupby(keys)[["ns", "launches"]].mean()
                  .rename(columns={"ns": "cupti_ns", "launches": "cupti_launches"}))
            .reset_index())
    both["gap_ns"] = both["events_ns"] - both["cupti_ns"]
    both["gap_per_launch_ns"] = both["gap_ns"] / both["cupti_launches"]
    print(json.dumps(both.round(1).to_dict("records"), indent=0))
    assert set(both["n"]) == {1024, 2048, 4096, 8192} and both.notna().all().all()
    assert (both["events_ns"] >= both["cupti_ns"] * (1 - BETWEEN_JOBS)).all()
    short = both[both["cupti_ns"] < 100_000]  # where job-to-job noise is below the overhead
    assert len(short) and (short["gap_ns"] > 0).all()
    host = manifest["backend"][B.HOST_LAUNCH]
    assert {(h["annotation"], h["config"], h["runs"]) for h in host} == {
        ("fp16", c, manifest["spec"]["runs"]) for c in range(4)}


def test_events_backend_j1_on_the_backends_page_beside_ncu_and_cupti() -> None:
    """The backends page's three-backend table on J1 (ncu J1 recorded in this call, or seeded
    from the shipped demo bundles with SEED=1)."""
    from profiling_worker.bundle.loader import load_bundle
    from app.core.views.backends import backends_frame, events_frame

    jobs = [RESULTS / j for j in ("h200-ncu-j1-fp16", CUPTI_JOB, EVENTS_JOB)]
    if not all((j / C.MANIFEST_FILE).exists() for j in jobs):
        pytest.skip("J1 is not recorded on all three backends in this device call")
    ncu, cupti, events = (load_bundle(j) for j in jobs)
    three = events_frame(backends_frame(ncu, cupti), cupti, events)
    print(three.round(3).to_string())
    assert sorted(three["n"]) == [1024, 2048, 4096, 8192]
    assert (three["RatioEventsOverCupti"] >= 1 - BETWEEN_JOBS).all()
    assert (three["HostLaunchUs"] > 0).all()
    assert (three["EndEventUs"] > 0).all()
    assert (three["ResidualPct"].abs() < RESIDUAL_PCT).all(), three["ResidualPct"].tolist()


def test_events_backend_on_a_warm_worker_runs_two_jobs(tmp_path: Path) -> None:
    """serve.py warms the events backend up once (torch, CUDA) and runs jobs in turn; the
    second with cache_control none says no flush in its manifest."""
    import sys

    from app import settings
    from app.services.job_manager import JobManager
    from profiling_worker.catalog.builtin import CATALOG
    from profiling_worker.bundle.schema.spec import validate_spec

    small = {"kernels": ["matmul"], "annotations": ["fp16"], "configs": [{"n": 1024}],
             "runs": 3, "backend": B.EVENTS}
    manager = JobManager(tmp_path / "results", os.environ.get("KPROF_WORKER_PYTHON", sys.executable),
                         env=settings.worker_env(), kill_grace_s=5.0, warm=True)
    try:
        jobs = [manager.submit(validate_spec(s, CATALOG))
                for s in (small, {**small, "cache_control": "none"})]
        statuses = [manager.wait(j, 600) for j in jobs]
        manifests = [read_manifest(manager.get(j).path) for j in jobs]
    finally:
        manager.shutdown()
    assert statuses == ["done", "done"], [m.get("error") for m in manifests]
    assert manifests[0]["backend"]["cache_flush"]["flushes"] == 3
    assert manifests[1]["backend"]["cache_flush"]["flushes"] == 0
