"""Spec errors in the sidebar name each control as the form labels it, in the message and in
its fix (a fresh user's find: "Fix: set warmup between 0 and 100" beside a box labelled
"Warm-up calls"), with the spec's name where the label does not say it; the CLI's text, which
a YAML user reads, keeps the spec's names."""

from __future__ import annotations

import pytest

from app.sidebar.job_builder import LABELS, error_text, in_labels, labels
from profiling_worker.bundle.schema.spec import SpecInvalid, validate_spec
from profiling_worker.bundle.schema.spec_errors import FieldError


def _error(field: str, **raw: object) -> FieldError:
    with pytest.raises(SpecInvalid) as refused:
        validate_spec({"kernels": ["matmul"], "configs": [{"n": 64}], **raw})
    return next(e for e in refused.value.errors if e.field == field)


def test_the_fix_names_the_control_and_the_cli_the_spec_field() -> None:
    err = _error("warmup", warmup=500)
    assert str(err) == ("warmup: 500 is out of range: give a whole number from 0 to 100 "
                        "(set warmup between 0 and 100)")  # the CLI's, unchanged
    shown = error_text(err, labels(("n",))).replace("\\", "")
    assert shown == ("**Warm-up calls** (spec `warmup`): 500 is out of range: give a whole "
                     "number from 0 to 100. Fix: set Warm-up calls between 0 and 100.")
    assert "set warmup" not in shown


@pytest.mark.parametrize("field, raw, shown", [
    ("cache_control", {"cache_control": "x"}, "**Cache control**: 'x' is not one of all, none. "
                                              "Fix: set Cache control to one of: all, none."),
    ("gpu", {"gpu": 99}, "**GPU index**: 99 is out of range: give a whole number from 0 to 63. "
                         "Fix: set GPU index between 0 and 63."),
    ("runs", {"runs": 0}, f"Fix: set {LABELS['runs']} between 1 and 10,000."),
])
def test_every_range_and_choice_fix_names_the_label(field: str, raw: dict, shown: str) -> None:
    text = error_text(_error(field, **raw), labels(("n",))).replace("\\", "")
    assert shown in text and f"set {field} " not in text


def test_a_name_inside_a_command_or_another_name_stays() -> None:
    assert in_labels("list them with `ncu --query-metrics`; metrics or metrics_x", "metrics",
                     "Metrics / Extra metrics") == ("list them with `ncu --query-metrics`; "
                                                    "Metrics / Extra metrics or metrics_x")
    assert in_labels("give retries as an integer in range", "slurm.retries", "Retries") \
        == "give Retries as an integer in range"


def test_a_cluster_option_is_named_by_its_label() -> None:
    err = FieldError("slurm.partition", "'a b' is not one Slurm name",
                     "give a single name (letters, digits, - _ .)")
    assert error_text(err, labels(("n",))).startswith("**Partition**: ")
