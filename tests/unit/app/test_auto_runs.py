"""app/core/auto_runs.py: nothing for a job of fixed runs; the rule's record read as written."""

import json

from app.core.auto_runs import auto_runs_frame, auto_runs_note

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
    assert note is not None and "1 of 1 config met the target, with 12-12 runs" in note
    assert "Not met" not in note
