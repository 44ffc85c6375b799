"""The H200 bundles shipped in app/bundled open on every page on a machine without a GPU."""

from __future__ import annotations

import pytest

from apptest_helpers import plotly_specs, texts
from app.core.environment import environment_rows
from profiling_worker.bundle.loader import load_bundle
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

BUNDLED = REPO / "app" / "bundled"
JOBS = sorted(p.name for p in BUNDLED.iterdir() if (p / "manifest.json").is_file()) \
    if BUNDLED.is_dir() else []
PAGES = ("sweep", "results", "files", "history", "environment")
#: The bundled jobs whose code paths were measured (benchmarks/bundled_page_paths.py, 2026-12-05).
MEASURED = frozenset({
    "h200-cupti-cuda-core-saxpy", "h200-cupti-elementwise", "h200-cupti-elementwise-cache-none",
    "h200-cupti-gate-again", "h200-cupti-gate-base", "h200-cupti-gate-fp32",
    "h200-cupti-gate-tf32", "h200-cupti-j1-fp16", "h200-cupti-linear-backward",
    "h200-cupti-matmul-sweep", "h200-cupti-stability", "h200-cupti-stability-thermal-off",
    "h200-cupti-timeline", "h200-cupti-triton-vector-add", "h200-events-j1-fp16",
    "h200-ncu-cuda-core-saxpy", "h200-ncu-deepdive-fp16-4096", "h200-ncu-elementwise",
    "h200-ncu-elementwise-cache-none", "h200-ncu-gate-base", "h200-ncu-j1-fp16",
    "h200-ncu-linear-backward", "h200-ncu-matmul-rules", "h200-ncu-matmul-sweep",
    "h200-ncu-roofline", "h200-ncu-softmax", "h200-ncu-triton-vector-add",
})
#: The jobs a page leaves out: each takes there the same code path as a job the page keeps (equal
#: arcs of app/ and profiling_worker/ beyond the app's frame, by benchmarks/bundled_page_paths.py:
#: files 15 paths over the 27 jobs, history 2, environment 1). Every job opens the sweep and
#: results pages; a job not in MEASURED, such as one added to app/bundled, opens every page (run
#: the script again when a bundled job is recorded anew).
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
    "history": MEASURED - {"h200-cupti-cuda-core-saxpy", "h200-events-j1-fp16"},
    "environment": MEASURED - {"h200-cupti-cuda-core-saxpy"},
}


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
