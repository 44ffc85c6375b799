"""The kernel-sweep CLI and the agent door refuse numbers that Python's int() and float() read
silently (``١٦``, ``1_0``), naming the option and the number to type, as the sidebar's fields
do (tests/unit/app/test_config_grid.py)."""

from __future__ import annotations

import pytest

from app import sweep_cli
from app.agent_door.door import DoorError, allowed_slowdown
from app.core import config_grid


@pytest.mark.parametrize("option, typed, plain", [("--parallelism", "١٦", "16"),
                                                  ("--retries", "1_0", "10"),
                                                  ("--poll", "٢.٥", "2.5")])
def test_kernel_sweep_refuses_a_number_int_reads_silently(option, typed, plain, capsys) -> None:
    with pytest.raises(SystemExit) as ended:
        sweep_cli.main(["spec.json", option, typed])
    said = capsys.readouterr().err
    assert ended.value.code == 2  # argparse's usage error: nothing was read or queued
    assert f"argument {option}: {config_grid.digits_problem(typed)}" in said
    assert f"type {plain}" in said


def test_kernel_sweep_still_reads_plain_numbers() -> None:
    args = sweep_cli._parser().parse_args(["spec.json", "--parallelism", "16", "--poll", "2.5"])
    assert (args.parallelism, args.poll) == (16, 2.5)


@pytest.mark.parametrize("typed, plain", [("٣%", "3"), ("1_0%", "10"), ("٣", "3")])
def test_the_agent_door_refuses_a_slowdown_float_reads_silently(typed, plain) -> None:
    with pytest.raises(DoorError) as refused:
        allowed_slowdown(typed)
    assert str(refused.value).startswith("max_slowdown_pct: ") and f"type {plain}" in str(
        refused.value)
    assert allowed_slowdown(f"{plain}%") == float(plain)
