"""A cpu-backend job that has no results yet (queued) or never will (cancelled): the chart
pages name its own duration metric and draw no control that acts on nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from apptest_helpers import JOB_ID, texts
from app.core.provenance import ANNOTATED_SCOPE, HOST_SCOPE

UNFINISHED = "20261129-230500-matmul-0003"


def unfinished(results: Path, status: str, backend_recorded: bool = True) -> str:
    """A copy of the seeded cpu job as one that never ran is left: its spec.json and a
    manifest of ``status`` (naming the cpu backend where ``backend_recorded``), no tables."""
    path = results / UNFINISHED
    shutil.copytree(results / JOB_ID, path)
    shutil.rmtree(path / "tables")
    manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    kept = {k: manifest[k] for k in ("schema_version", "created_at") if k in manifest}
    kept |= {"backend": {"name": "cpu"}} if backend_recorded else {}
    (path / "manifest.json").write_text(json.dumps(
        {**kept, "job_id": UNFINISHED, "status": status}), encoding="utf-8")
    return UNFINISHED


def _controls(at) -> list[str]:
    """The labels of the page's own controls (the sidebar's are not the page's)."""
    return [w.label for kind in ("selectbox", "segmented_control", "toggle")
            for w in at.main.get(kind)]


@pytest.mark.parametrize("status", ["queued", "cancelled"])
def test_sweep_draws_no_controls_without_values(seeded, app, status) -> None:
    """Issue: the Y axis box read 'Durations (gpu__time_duration.sum)' on a cpu job with no
    values, and the time unit and normalise controls stayed active."""
    at = app(query={"job": unfinished(seeded["results"], status)})
    assert not at.exception
    assert (f"This job has no host__time_duration.sum values to plot (status: {status})"
            in texts(at))
    assert _controls(at) == [], _controls(at)
    assert "gpu__time_duration" not in texts(at)


def test_clocks_time_unit_only_with_a_chart(seeded, app) -> None:
    at = app(query={"job": unfinished(seeded["results"], "cancelled")})
    at.switch_page("app_pages/clocks_thermal.py").run()
    assert not at.exception
    assert "Time unit" not in _controls(at)


def test_one_kernel_scope_from_the_spec(seeded, app) -> None:
    """Issue: One kernel on a cancelled cpu job whose manifest names no backend (the spec
    does) showed nsight-python's scope sentence; the backend is the one the job recorded."""
    at = app(query={"job": unfinished(seeded["results"], "cancelled", backend_recorded=False)})
    at.switch_page("app_pages/one_kernel.py").run()
    assert not at.exception
    infos = [i.value for i in at.info]
    assert HOST_SCOPE in infos and ANNOTATED_SCOPE not in infos, infos
