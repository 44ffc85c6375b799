"""benchmarks/overhead.py's cold steps (issue 40): each step of a cold job read from its own
events, on a recorded H200 CUPTI job's events and on a cold cpu job run here."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tests.scenarios import scenario_dir

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("overhead", REPO / "benchmarks" / "overhead.py")
assert _spec and _spec.loader
overhead = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(overhead)
RECORDED = scenario_dir("h200-cupti-gate-base")  # a cold CUPTI job's own events


def _events(job: Path) -> list[dict]:
    return [json.loads(line) for line in (job / "events.jsonl").read_text().splitlines()]


def test_the_steps_of_a_recorded_cupti_job_are_its_events(tmp_path: Path) -> None:
    for name in ("events.jsonl", "manifest.json"):
        shutil.copy(RECORDED / name, tmp_path / name)
    events = _events(tmp_path)
    result = next(e["t"] for e in events if e["event"] == "result")
    os.utime(tmp_path / "manifest.json", (result, result))  # written last, as the worker does
    started = events[0]["t"] - 1.0
    steps = overhead.cold_steps(tmp_path, started)
    runs = [e["t"] for e in events if e.get("stage") == "profiling"]
    assert list(steps) == list(overhead.COLD_STEPS)
    assert abs(steps["prepared"] - 1.0) < 1e-6
    assert steps["first_run"] == runs[0] - started and steps["last_run"] == runs[-1] - started
    assert abs(steps["result"] - (result - started)) < 1e-6
    assert list(steps.values()) == sorted(steps.values())


def test_the_steps_of_a_cold_job_run_here_lie_within_its_wall(tmp_path: Path) -> None:
    job = tmp_path / "cold"
    job.mkdir()
    (job / "spec.json").write_text(json.dumps({"kernels": ["matmul"], "annotations": ["fp32"],
                                               "configs": [{"n": 32}, {"n": 64}], "runs": 3,
                                               "backend": "cpu"}))
    started = time.time()
    subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(job)], cwd=REPO,
                   check=True, capture_output=True, timeout=300)
    wall = time.time() - started
    steps = overhead.cold_steps(job, started)
    assert list(steps) == list(overhead.COLD_STEPS)
    assert 0 < steps["prepared"] and list(steps.values()) == sorted(steps.values())
    assert steps["result"] <= wall
