"""The H200 bundles shipped in app/bundled open on every page on a machine without a GPU."""

from __future__ import annotations

import pytest

from apptest_helpers import plotly_specs, texts
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

BUNDLED = REPO / "app" / "bundled"
JOBS = sorted(p.name for p in BUNDLED.iterdir() if (p / "manifest.json").is_file()) \
    if BUNDLED.is_dir() else []
PAGES = ("sweep", "results", "files", "history", "environment")


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
        at.switch_page(f"app_pages/{page}.py").run()
        assert not at.exception, (page, at.exception)
    env_rows = at.dataframe[-1].value.set_index("Item")["Value"]
    assert env_rows["GPU"] == "NVIDIA H200"
