"""The H200 bundles shipped in app/bundled open on every page on a machine without a GPU."""

from __future__ import annotations

import pytest

from apptest_helpers import plotly_specs, texts
from benchmarks.bundled_page_paths import fingerprint
from app.core.environment import environment_rows
from profiling_worker.bundle.loader import load_bundle
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

BUNDLED = REPO / "app" / "bundled"
JOBS = sorted(p.name for p in BUNDLED.iterdir() if (p / "manifest.json").is_file()) \
    if BUNDLED.is_dir() else []
PAGES = ("sweep", "results", "files", "history", "environment")
#: The bundled jobs whose code paths were measured (benchmarks/bundled_page_paths.py, 2026-12-05;
#: app/bundled unchanged since 2026-12-02), each with the fingerprint of its files then.
MEASURED = {
    "h200-cupti-cuda-core-saxpy": "089359d52fba",
    "h200-cupti-elementwise": "c801bfe88477",
    "h200-cupti-elementwise-cache-none": "a0f2334eee1c",
    "h200-cupti-gate-again": "789716870b83",
    "h200-cupti-gate-base": "22fac95fbde0",
    "h200-cupti-gate-fp32": "343f39a2d6b9",
    "h200-cupti-gate-tf32": "aa947ce11a0b",
    "h200-cupti-j1-fp16": "b7333878403c",
    "h200-cupti-linear-backward": "c6fdc11d3c1d",
    "h200-cupti-matmul-sweep": "b8e4a04ac335",
    "h200-cupti-stability": "371a1771c1e5",
    "h200-cupti-stability-thermal-off": "3f36d136b295",
    "h200-cupti-timeline": "1a77855b8283",
    "h200-cupti-triton-vector-add": "57fde5b2e3aa",
    "h200-events-j1-fp16": "ba71b4ce30a5",
    "h200-ncu-cuda-core-saxpy": "00eeaac9b01e",
    "h200-ncu-deepdive-fp16-4096": "8d2082e8b4eb",
    "h200-ncu-elementwise": "268f31b445c6",
    "h200-ncu-elementwise-cache-none": "c53d317eef11",
    "h200-ncu-gate-base": "46d7a0e50748",
    "h200-ncu-j1-fp16": "64d796b1ff12",
    "h200-ncu-linear-backward": "3b923fb97913",
    "h200-ncu-matmul-rules": "925ebf5b2a1c",
    "h200-ncu-matmul-sweep": "55e63a644608",
    "h200-ncu-roofline": "e9967314b655",
    "h200-ncu-softmax": "a085e88d0c11",
    "h200-ncu-triton-vector-add": "9d656338a560",
}
#: The jobs a page leaves out: each takes there the same code path as a job the page keeps (equal
#: arcs of app/ and profiling_worker/ beyond the app's frame, by benchmarks/bundled_page_paths.py:
#: files 15 paths over the 27 jobs, history 2, environment 1). Every job opens the sweep and
#: results pages; a job not in MEASURED, such as one added to app/bundled, opens every page; a
#: job recorded anew fails test_the_measured_jobs_are_the_bundles_shipped until the script runs
#: again.
SAME_PATH = {
    "files": frozenset({
        # as h200-cupti-cuda-core-saxpy
        "h200-cupti-elementwise", "h200-cupti-elementwise-cache-none",
        "h200-cupti-linear-backward", "h200-cupti-matmul-sweep", "h200-cupti-timeline",
        "h200-cupti-triton-vector-add",
        "h200-cupti-gate-base",  # as h200-cupti-gate-again
        "h200-cupti-stability", "h200-cupti-stability-thermal-off",  # as h200-cupti-j1-fp16
        # as h200-ncu-cuda-core-saxpy
        "h200-ncu-elementwise", "h200-ncu-elementwise-cache-none",
        "h200-ncu-triton-vector-add",  # as h200-ncu-j1-fp16
    }),
    # as h200-cupti-cuda-core-saxpy (h200-events-j1-fp16 takes a path of its own)
    "history": frozenset(MEASURED) - {"h200-cupti-cuda-core-saxpy", "h200-events-j1-fp16"},
    "environment": frozenset(MEASURED) - {"h200-cupti-cuda-core-saxpy"},
}


def test_the_measured_jobs_are_the_bundles_shipped() -> None:
    """SAME_PATH holds for the bundles measured: a job of MEASURED recorded anew (its files
    changed) or gone may take another code path now."""
    changed = sorted(job for job, measured in MEASURED.items()
                     if not (BUNDLED / job).is_dir() or fingerprint(BUNDLED / job) != measured)
    assert not changed, (
        f"app/bundled changed since benchmarks/bundled_page_paths.py measured {changed}: run it "
        "again and update MEASURED (it prints it) and SAME_PATH from its groups")


@pytest.mark.skipif(not JOBS, reason="no bundled results in app/bundled")
@pytest.mark.parametrize("job_id", JOBS)
def test_bundled_job_on_every_page(store, monkeypatch, app, job_id) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(BUNDLED))
    at = app(query={"job": job_id})
    assert not at.exception
    assert at.session_state["sidebar-job"] == job_id
    (spec,) = plotly_specs(at)
    assert "host wall-clock" not in spec["layout"]["title"]["text"]  # GPU durations
    assert "NVIDIA H200" in texts(at)
    for page in PAGES[1:]:
        if job_id not in SAME_PATH.get(page, ()):
            at.switch_page(f"app_pages/{page}.py").run()
            assert not at.exception, (page, at.exception)
    bundle = load_bundle(BUNDLED / job_id)  # the environment page's job table, for every job
    rows = environment_rows(bundle.manifest.get("environment") or {}, None, bundle.gpu_index)
    assert {r["Item"]: r["Value"] for r in rows}["GPU"] == "NVIDIA H200"
    if job_id not in SAME_PATH["environment"]:  # the page drew that table
        env_rows = at.dataframe[-1].value.set_index("Item")["Value"]
        assert env_rows["GPU"] == "NVIDIA H200"
