"""Per-parameter values and ranges -> configs (product or zip), with field-named errors."""

from __future__ import annotations

import pytest

from app.core import config_grid, spec_form
from app.core.kernel_catalog import KernelInfo


@pytest.mark.parametrize("text, kind, values", [
    ("64, 128; 256", "size", [64, 128, 256]),
    ("1024..8192 *2", "size", [1024, 2048, 4096, 8192]),
    ("256..1024 +256", "size", [256, 512, 768, 1024]),
    ("100..300 *2", "size", [100, 200]),  # stops before passing the stop
    ("0.5, 1e-3", "float", [0.5, 0.001]),
    ("-2..2 +2", "int", [-2, 0, 2]),
    ("a, b, a", "str", ["a", "b"]),
    ("1_024, 1024", "size", [1024]),
])
def test_values_and_ranges(text: str, kind: str, values: list) -> None:
    assert config_grid.parse_values(text, "rows", kind) == (values, [])


@pytest.mark.parametrize("text, message", [
    ("", "no sizes given"), ("x", "'x' is not a whole number"), ("0", "0 is not greater than 0"),
    ("8..2 +1", "start <= stop"), ("1..8 *1", "grows"), ("1..100000 +1", "more than 4096"),
    ("-4..4 +4", "-4 is not greater than 0"),
])
def test_bad_values_name_the_field(text: str, message: str) -> None:
    values, errors = config_grid.parse_values(text, "rows")
    assert values == [] and [e.field for e in errors] == ["rows"]
    assert message in errors[0].message and "1024..8192 *2" in errors[0].hint


def test_product_and_zip() -> None:
    configs, errors = config_grid.combine({"rows": [8, 16], "cols": [32, 64, 128]}, "product")
    assert not errors and len(configs) == 6 and configs[:2] == [{"rows": 8, "cols": 32},
                                                                 {"rows": 8, "cols": 64}]
    configs, errors = config_grid.combine({"rows": [8, 16], "cols": [32, 64]}, "zip")
    assert configs == [{"rows": 8, "cols": 32}, {"rows": 16, "cols": 64}] and not errors
    configs, errors = config_grid.combine({"rows": [8, 16], "cols": [32, 64, 128]}, "zip")
    assert configs == [] and errors[0].field == "combine" and "rows: 2, cols: 3" in errors[0].message


TWO = KernelInfo(id="k2", title="k2", parameters=("rows", "cols"), annotations=("a",),
                 default_configs=({"rows": 8, "cols": 32},), cpu_configs=())
FORM = {"kernels": ["k2"], "size_preset": "typed", "runs": 2, "backend": "cpu", "warmup": 0,
        "gpu": 0, "params": {"rows": "8, 16", "cols": "32..64 *2"}, "combine": "zip"}


def test_form_with_one_field_per_parameter_uses_the_worker_validation() -> None:
    spec, errors = spec_form.to_job_spec(FORM, {"k2": TWO})
    assert errors == [] and spec.configs == ({"rows": 8, "cols": 32}, {"rows": 16, "cols": 64})
    spec, errors = spec_form.to_job_spec({**FORM, "combine": "product"}, {"k2": TWO})
    assert len(spec.configs) == 4
    spec, errors = spec_form.to_job_spec({**FORM, "params": {"rows": "8", "cols": "x"}},
                                         {"k2": TWO})
    assert spec is None and [e.field for e in errors] == ["cols"]


def test_replay_and_thermal_fields_reach_the_spec_and_its_checks() -> None:
    form = {"kernels": ["matmul"], "sizes": "32", "runs": 2, "backend": "ncu",
            "replay_mode": "range", "thermal_mode": "manual", "thermal_wait": 5,
            "thermal_cont": 15, "thermal_timeout": 60}
    spec, errors = spec_form.to_job_spec(form)
    assert errors == [] and (spec.replay_mode, spec.thermal_mode) == ("range", "manual")
    assert (spec.thermal_wait, spec.thermal_cont, spec.thermal_timeout) == (5, 15, 60)
    spec, errors = spec_form.to_job_spec({**form, "thermal_cont": 5})
    assert spec is None and [e.field for e in errors] == ["thermal_cont"]
    spec, _ = spec_form.to_job_spec({**form, "thermal_wait": None, "thermal_cont": None})
    assert spec.thermal_wait is None and spec.thermal_cont is None  # nsight-python's defaults


def test_split_gives_back_the_defaults() -> None:
    grid = [{"rows": r, "cols": c} for r in (8, 16) for c in (32, 64)]
    assert config_grid.split(grid, ("rows", "cols")) == ({"rows": [8, 16], "cols": [32, 64]},
                                                         "product")
    pairs = [{"batch": 4, "n": 64}, {"batch": 8, "n": 128}]
    values, mode = config_grid.split(pairs, ("batch", "n"))
    assert mode == "zip" and config_grid.combine(values, mode)[0] == pairs


def test_a_huge_product_is_refused_before_it_is_built() -> None:
    """Three parameters of 4,096 values each are 2^36 combinations: counted, never listed (the
    sidebar would otherwise hang the server building them)."""
    values = {name: list(range(config_grid.MAX_VALUES)) for name in ("a", "b", "c")}
    configs, errors = config_grid.combine(values, config_grid.PRODUCT)
    assert configs == []
    assert [e.field for e in errors] == ["combine"]
    assert "68,719,476,736 configs" in errors[0].message
