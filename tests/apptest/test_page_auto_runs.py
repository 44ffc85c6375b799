"""A job of runs "auto" (the worker's stopping rule) on the Stability and Size sweep pages: the
note says the target and how many configs met it, the table gives each config's runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from apptest_helpers import open_folds, texts
from apptest_helpers import TINY_SPEC, record_cpu_job

AUTO_JOB_ID = "20261201-230000-matmul-0003"
# budget_s far above what 6 runs cost, so that a loaded host stops at max_runs, not the budget
AUTO_SPEC = {**TINY_SPEC, "annotations": ["fp32"], "runs": "auto",
             "run_target": {"rel_ci95_pct": 0.01, "min_runs": 3, "max_runs": 6, "budget_s": 600}}


@pytest.fixture(scope="module")
def auto_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real cpu job whose 0.01 % target no host timing meets in 6 runs (host wall-clock)."""
    return record_cpu_job(tmp_path_factory.mktemp("worker") / AUTO_JOB_ID, AUTO_SPEC)


@pytest.mark.parametrize("page", ["stability", "sweep"])
def test_auto_runs_note_and_table(store, auto_src, app, page) -> None:
    shutil.copytree(auto_src, store["results"] / AUTO_JOB_ID)
    at = app(page, query={"job": AUTO_JOB_ID})
    assert not at.exception, at.exception
    shown = texts(at)
    assert 'Runs chosen by the stopping rule (runs "auto")' in shown
    assert "0 of 2 configs met the target" in shown and "max_runs reached" in shown
    assert "The rule ran on the job's durations: host wall-clock, not GPU" in shown
    assert not [d for d in at.dataframe if "TargetMet" in d.value.columns]  # until opened
    table = next(d.value for d in open_folds(at).dataframe if "TargetMet" in d.value.columns)
    assert table["Runs"].tolist() == [6, 6] and not table["TargetMet"].any()
    assert table["ConfigLabel"].tolist() == ["n=32", "n=64"]
