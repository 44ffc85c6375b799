"""The Size sweep reads the run audit only up to CHART_AUDIT_RUNS runs (its first chart has 3 s;
a 1,000-config sweep's audit took 2-4 s), and says so beyond."""

from __future__ import annotations

import pytest

from app.core.views import run_audit as R
from app.core.views.sweep import default_options, sweep_frame
from app.core import frame_columns as F
from tests.scenarios import scenario_dir, with_clock_drop

SWEEP = scenario_dir("h200-ncu-matmul-sweep")
FLAGGED = (("fp16", 4), ("bf16", 4))  # n=8192: runs 0-2 given a planted clock drop


def test_a_job_within_the_bound_is_marked_by_its_audit() -> None:
    bundle = with_clock_drop(SWEEP.name, FLAGGED)
    assert R.audited_runs(bundle) == 150  # 3 annotations x 5 sizes x 10 runs
    assert F.RUN_AUDIT in sweep_frame(bundle, default_options(bundle))
    assert "7/10 runs passed (clock 3: " in str(R.flagged_points_text(bundle,
                                                                                  FLAGGED))
    assert R.audit_not_read_note(bundle, "the Results tables page") is None


def test_a_job_beyond_the_bound_is_not_marked_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(R, "CHART_AUDIT_RUNS", 149)
    bundle = with_clock_drop(SWEEP.name, FLAGGED)
    assert F.RUN_AUDIT not in sweep_frame(bundle, default_options(bundle))
    assert R.flagged_points_text(bundle, FLAGGED) is None
    said = R.audit_not_read_note(bundle, "the Results tables page")
    assert said is not None and "150 measurements (runs × regions) are more than the 149" in said
