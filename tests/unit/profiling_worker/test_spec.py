"""validate_spec: every bad input gets a field-named error with a fix; good input round-trips."""

import pytest

from profiling_worker.catalog.specs import CATALOG
from profiling_worker.schema import columns as C
from profiling_worker.schema.spec import METRIC_PRESETS, SpecInvalid, validate_spec

GOOD = {"kernels": ["matmul"], "configs": [{"n": 256}, {"n": 512}], "runs": 5, "backend": "ncu",
        "metrics": list(METRIC_PRESETS["bound"])}


def _errors(**change):
    with pytest.raises(SpecInvalid) as info:
        validate_spec({**GOOD, **change}, CATALOG)
    return {e.field: e for e in info.value.errors}


def test_good_spec_round_trips():
    spec = validate_spec(GOOD, CATALOG)
    assert spec.runs == 5 and spec.parameter_names == ("n",)
    assert validate_spec(spec.to_json(), CATALOG) == spec
    assert len(spec.spec_hash()) == 16


@pytest.mark.parametrize("bad", [0, -4, "abc", 1.5, True, None])
def test_sizes_must_be_positive_integers(bad):
    errors = _errors(configs=[{"n": 256}, {"n": bad}])
    assert "configs[1].n" in errors
    assert "positive integer" in errors["configs[1].n"].message


def test_empty_lists_name_their_field():
    assert "kernels" in _errors(kernels=[])
    assert "configs" in _errors(configs=[])


@pytest.mark.parametrize("runs", [0, -1, "ten", 10_001])
def test_runs_below_one_is_refused(runs):
    assert "runs" in _errors(runs=runs)


def test_unknown_metric_name_is_refused_with_the_fix():
    err = _errors(metrics=["gpu__time_duration.sum", "not a metric"])["metrics"]
    assert "not a metric" in err.message and "ncu --query-metrics" in err.hint


def test_cupti_measures_durations_only():
    assert "metrics" in _errors(backend="cupti")


def test_cpu_backend_records_host_time_only():
    spec = validate_spec({**GOOD, "backend": "cpu"}, CATALOG)
    assert spec.metrics == (C.HOST_TIME,)


def test_unknown_kernel_and_annotation_and_field():
    assert "kernels" in _errors(kernels=["nope"])
    assert "annotations" in _errors(annotations=["fp64"])
    assert "colour" in _errors(colour="red")


def test_thermal_cont_must_exceed_wait():
    assert "thermal_cont" in _errors(thermal_wait=20, thermal_cont=10)


def test_reserved_parameter_names_are_refused():
    assert "configs[0]" in _errors(configs=[{"Metric": 3}])
