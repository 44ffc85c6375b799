"""runs "auto" in the job spec (schema/run_target.py): defaults, round trip, field-named errors."""

import pytest

from profiling_worker.schema.run_target import RunTarget
from profiling_worker.schema.spec import SpecInvalid, validate_spec

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
