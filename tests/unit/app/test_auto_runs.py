"""app/core/auto_runs.py: nothing for a job of fixed runs; the rule's record read as written."""

import json

from app.core.auto_runs import auto_runs_frame, auto_runs_note
from profiling_worker.bundle.number_text import counted, counted_span, fmt

from tests.scenarios import scenario_dir


def test_fixed_runs_jobs_have_no_auto_runs_note():
    manifest = json.loads((scenario_dir("h200-cupti-stability") / "manifest.json").read_text())
    assert auto_runs_frame(manifest) is None and auto_runs_note(manifest) is None


def test_a_met_target_reads_as_met():
    manifest = {"spec": {"configs": [{"n": 1024}]}, "backend": {"auto_runs": {
        "target": {"rel_ci95_pct": 0.5, "min_runs": 5, "max_runs": 100, "budget_s": 60.0},
        "method": "Student-t", "seconds": 1.5, "configs": [
            {"Config": 0, "runs": 12, "rel_ci95_pct": 0.41, "target_met": True,
             "stopped": "target met", "seconds": 1.5}]}}}
    frame = auto_runs_frame(manifest)
    assert frame is not None and frame["ConfigLabel"].tolist() == ["n=1024"]
    note = auto_runs_note(manifest)
    assert note is not None and f"1 of 1 config met the target, with {counted(12, 'run')};" in note
    assert f"{fmt(1.5)} s measuring" in note and "5-100 runs per config" in note
    assert "Not met" not in note


def test_runs_and_seconds_read_as_the_project_writes_numbers():
    """Issue 37: "with 100-100 runs; 11.4898 s measuring" (03_job_done.png)."""
    manifest = {"spec": {"configs": [{"n": 64}, {"n": 128}]}, "backend": {"auto_runs": {
        "target": {"rel_ci95_pct": 0.5, "min_runs": 5, "max_runs": 100, "budget_s": 60.0},
        "seconds": 11.4898, "configs": [
            {"Config": i, "runs": 100, "rel_ci95_pct": 2.5, "target_met": False,
             "stopped": "max_runs reached", "seconds": 5.7} for i in (0, 1)]}}}
    note = auto_runs_note(manifest)
    assert note is not None
    assert f"with {counted(100, 'run')}; {fmt(11.4898)} s measuring" in note
    assert "100-100" not in note and "11.4898" not in note
    assert counted_span(5, 100, "run") == "5-100 runs" and counted_span(1, 1, "run") == "1 run"
