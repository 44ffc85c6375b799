"""The run-range name the ncu backend writes is the one the .ncu-rep reader parses."""

from __future__ import annotations

import pytest

from profiling_worker.bundle.schema.run_range import parse_run_range, run_range_name


@pytest.mark.parametrize(("config", "run"), [(0, 0), (3, 12), (4095, 9999)])
def test_written_name_parses_back(config: int, run: int) -> None:
    assert parse_run_range(run_range_name(config, run)) == (config, run)


@pytest.mark.parametrize("name", ["", "c1", "r1", "c1r", "c-1r2", "c1r2x", "xc1r2", "gemm"])
def test_other_range_names_are_not_runs(name: str) -> None:
    assert parse_run_range(name) is None
