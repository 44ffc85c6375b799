"""Per-parameter values and ranges -> configs (product or zip), with field-named errors."""

from __future__ import annotations

import pytest

from app.core import config_grid, spec_form
from app.core.kernel_catalog import KernelInfo
from profiling_worker.bundle.schema.spec import typed_instead


@pytest.mark.parametrize("text, kind, values", [
    ("64, 128; 256", "size", [64, 128, 256]),
    ("1024..8192 *2", "size", [1024, 2048, 4096, 8192]),
    ("256..1024 +256", "size", [256, 512, 768, 1024]),
    ("100..300 *2", "size", [100, 200]),  # stops before passing the stop
    ("0.5, 1e-3", "float", [0.5, 0.001]),
    ("-2..2 +2", "int", [-2, 0, 2]),
    ("a, b, a", "str", ["a", "b", "a"]),  # repeats kept: the form refuses them by field
])
def test_values_and_ranges(text: str, kind: str, values: list) -> None:
    assert config_grid.parse_values(text, "rows", kind) == (values, [])


@pytest.mark.parametrize("text, message", [
    ("", "no sizes given"), ("x", "'x' is not a whole number"), ("0", "0 is not greater than 0"),
    ("8..2 +1", "start <= stop"), ("1..8 *1", "grows"), ("1..100000 +1", "more than 4,096"),
    ("-4..4 +4", "-4 is not greater than 0"),
])
def test_bad_values_name_the_field(text: str, message: str) -> None:
    values, errors = config_grid.parse_values(text, "rows")
    assert values == [] and [e.field for e in errors] == ["rows"]
    assert message in errors[0].message and "1024..8192 *2" in errors[0].hint


@pytest.mark.parametrize("text, message", [
    ("64,,128", "item 2 of 3 is empty in '64,,128'"), ("64, 128,", "item 3 of 3 is empty"),
    (",64", "item 1 of 2 is empty"),
])
def test_an_empty_item_is_named_not_skipped(text: str, message: str) -> None:
    """Issue 25: ``64,,128`` was read as 64, 128 without a word."""
    values, errors = config_grid.parse_values(text, "sizes")
    assert [e.field for e in errors] == ["sizes"] and message in errors[0].message
    assert "remove the extra comma" in errors[0].hint


def test_empty_items_are_one_error() -> None:
    """Session 25's fresh user: ``, ,64,`` drew three nearly alike boxes, one per empty item."""
    values, errors = config_grid.parse_values(", ,64,", "sizes")
    assert values == [64]
    assert [e.message for e in errors] == ["items 1, 2 and 4 of 4 are empty in ', ,64,'"]


@pytest.mark.parametrize("sizes, message", [
    ("64, 64", "64 is given twice (items 1 and 2)"),
    ("1024, 512, 1024", "1024 is given twice (items 1 and 3)"),
])
def test_a_size_given_twice_is_refused_naming_it(sizes: str, message: str) -> None:
    """Issue 25: the sidebar merged ``64, 64`` into one config while spec.json and the worker
    refuse a config given twice; now the sidebar refuses it too, on the field typed in."""
    spec, errors = spec_form.to_job_spec({"kernels": ["matmul"], "sizes": sizes, "runs": 2,
                                          "backend": "cpu"})
    assert spec is None and [(e.field, e.message) for e in errors] == [("sizes", message)]
    assert "a config given twice is refused" in errors[0].hint


def test_repeats_with_several_parameters_follow_the_config_rule() -> None:
    """Every combination: a value given twice repeats configs (named on its parameter);
    pairwise: a repeated value is fine, a repeated pair is not (named on combine)."""
    form = {**FORM, "params": {"rows": "8, 8", "cols": "32, 64"}}
    spec, errors = spec_form.to_job_spec({**form, "combine": "product"}, {"k2": TWO})
    assert spec is None and [(e.field, e.message) for e in errors] == [
        ("rows", "8 is given twice (items 1 and 2)")]
    spec, errors = spec_form.to_job_spec(form, {"k2": TWO})
    assert errors == [] and spec.configs == ({"rows": 8, "cols": 32}, {"rows": 8, "cols": 64})
    spec, errors = spec_form.to_job_spec({**form, "params": {"rows": "8, 8", "cols": "32, 32"}},
                                         {"k2": TWO})
    assert spec is None and [(e.field, e.message) for e in errors] == [
        ("combine", "pair 2 (rows=8, cols=32) repeats pair 1")]


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
    # Issue 25: resume 5 with the pause left at nsight-python's default 10 was accepted
    spec, errors = spec_form.to_job_spec({**form, "thermal_wait": None, "thermal_cont": 5})
    assert spec is None and [(e.field, e.message) for e in errors] == [
        ("thermal_cont", "resume at 5 °C is not above the pause point thermal_wait (10 °C, "
                         "nsight-python's default)")]
    spec, errors = spec_form.to_job_spec({**form, "thermal_wait": 25, "thermal_cont": None})
    assert spec is None and "resume at 20 °C, nsight-python's default" in errors[0].message
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


@pytest.mark.parametrize("typed, plain", [("١٢٨", "128"), ("１２８", "128"), ("1_000", "1000"),
                                          ("٦٤..٢٥٦ *2", "64")])
def test_a_number_int_reads_silently_is_refused_with_the_one_to_type(typed: str, plain: str
                                                                      ) -> None:
    """Session 21's fresh user: Sizes took ``١٢٨`` and ``1_000`` without a word (int() reads
    both); the field now refuses them, naming the number to type."""
    values, errors = config_grid.parse_values(f"{typed}, 512", "sizes")
    assert values == [] or values == [512]
    assert [e.field for e in errors] == ["sizes"]
    assert f"type {plain}" in errors[0].message and errors[0].hint == config_grid.DIGITS_FIX


@pytest.mark.parametrize("text", ["128", "-3", "2.5", "1e3", "abc", "n_1", ""])
def test_plain_numbers_and_other_text_are_not_digits_problems(text: str) -> None:
    assert config_grid.digits_problem(text) is None


@pytest.mark.parametrize("field", ["runs", "warmup", "cpu_threads", "auto_max_runs"])
def test_a_whole_number_field_refuses_other_digits_once(field: str) -> None:
    """Runs per config and the other number fields: one error, on the field, with the number to
    type (the spec check's own "is not a whole number" would have said it a second time)."""
    form = {"kernels": ["matmul"], "sizes": "64", "runs": "2", "backend": "cpu", field: "١٦"}
    spec, errors = spec_form.to_job_spec(form)
    assert spec is None and [e.field for e in errors] == [field], errors
    assert "type 16" in errors[0].message and errors[0].hint == config_grid.DIGITS_FIX



@pytest.mark.parametrize(("text", "kind", "item"), [
    ("1e3", "size", "1e3"), ("64, 1e3", "size", "1e3"), ("2.0", "int", "2.0"),
    ("1e3..4e3 *2", "size", "1e3")])
def test_a_whole_number_written_another_way_says_what_to_type(text: str, kind: str,
                                                              item: str) -> None:
    """Session 22's fresh user read "'1e3' is not a whole number" with no word of what to type,
    and a range of it read Python's "invalid literal for int() with base 10"."""
    _values, (error,) = config_grid.parse_values(text, "sizes", kind)
    typed = typed_instead(item, 1, 10**6)  # ": type 1000"
    assert typed and error.message.endswith(f"{item!r} is not a whole number{typed}")
    assert "int()" not in error.message


@pytest.mark.parametrize(("text", "kind", "said"), [
    ("x..2", "float", "'x' is not a number"), ("abc", "size", "'abc' is not a whole number"),
    ("2.5", "int", "'2.5' is not a whole number")])
def test_no_number_says_so_without_python_s_words(text: str, kind: str, said: str) -> None:
    _values, (error,) = config_grid.parse_values(text, "sizes", kind)
    assert error.message.endswith(said) and "type" not in error.message
    assert "invalid literal" not in error.message and "convert" not in error.message
