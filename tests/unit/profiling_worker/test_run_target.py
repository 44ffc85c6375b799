"""runs "auto" in the job spec (bundle/schema/run_target.py): defaults, round trip, field-named errors."""

import re
from pathlib import Path

import pytest

from app.core import spec_form
from profiling_worker.bundle.schema import backends as B
from profiling_worker.bundle.schema.run_target import RunTarget
from profiling_worker.bundle.schema.spec import SpecInvalid, validate_spec

BASE = {"kernels": ["matmul"], "configs": [{"n": 64}], "backend": "cupti"}


def errors(raw):
    with pytest.raises(SpecInvalid) as exc:
        validate_spec(raw)
    return {e.field: e for e in exc.value.errors}


def test_auto_runs_take_the_defaults_and_runs_becomes_max_runs():
    spec = validate_spec({**BASE, "runs": "auto"})
    assert spec.run_target == RunTarget() and spec.runs == RunTarget().max_runs
    assert spec.run_target.rel_ci95_pct == 0.5  # the default target


def test_auto_spec_round_trips_and_fixed_specs_keep_their_hash():
    spec = validate_spec({**BASE, "runs": "auto", "run_target": {"max_runs": 40, "budget_s": 5}})
    data = spec.to_json()
    assert data["runs"] == "auto" and data["run_target"]["max_runs"] == 40
    assert validate_spec(data) == spec
    fixed = validate_spec({**BASE, "runs": 10})
    assert "run_target" not in fixed.to_json() or fixed.to_json()["run_target"] is None
    assert fixed.spec_hash() != spec.spec_hash()


def test_bad_targets_name_their_field():
    found = errors({**BASE, "runs": "auto", "run_target": {"min_runs": 1, "rel_ci95_pct": "x"}})
    assert set(found) == {"run_target.min_runs", "run_target.rel_ci95_pct"}
    found = errors({**BASE, "runs": "auto", "run_target": {"min_runs": 50, "max_runs": 10}})
    assert "above max_runs" in found["run_target.min_runs"].message
    assert "unknown key" in errors({**BASE, "runs": "auto", "run_target": {"x": 1}})["run_target"].message


def test_target_without_auto_and_auto_on_ncu_are_refused():
    assert "runs" in errors({**BASE, "runs": 5, "run_target": {}})["run_target"].hint
    found = errors({**BASE, "backend": "ncu", "runs": "auto"})
    assert set(found) == {"runs"} and "cupti" in found["runs"].hint


def test_auto_runs_on_exactly_the_backends_that_declare_it():
    """Backend.auto_runs is the one list (issue 38): each declaring backend validates, every
    other is refused with a hint naming all the declaring ones."""
    assert B.AUTO_NAMES == ("cupti", "events", "cpu")
    for name in B.NAMES:
        raw = {**BASE, "backend": name, "runs": "auto"}
        if name in B.AUTO_NAMES:
            assert validate_spec(raw).run_target == RunTarget()
        else:
            assert all(n in errors(raw)["runs"].hint for n in B.AUTO_NAMES)


def test_the_sidebar_help_and_the_batch_docs_name_the_declared_backends():
    """The Runs help is built from B.AUTO_NAMES; docs/batch-runs.md is checked against it."""
    assert f"({B.said(B.AUTO_NAMES)} backends)" in spec_form.RUNS_HELP
    doc = (Path(__file__).parents[3] / "docs" / "batch-runs.md").read_text(encoding="utf-8")
    stated = re.search(r'`"runs": "auto"` with a `"run_target"` \(([^)]*) backends\)', doc)
    assert stated is not None, "docs/batch-runs.md no longer says which backends run auto"
    assert stated.group(1) == B.said(B.AUTO_NAMES)
