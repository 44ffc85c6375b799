"""Missing aggregated columns are recomputed to the values the worker wrote (real H200 bundles)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from profiling_worker.bundle import repair_notes as S
from profiling_worker.bundle.stats import aggregated_repair as R
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.table_problems import Fault
from tests.unit.app.bundled import bundled

JOBS = ("h200-ncu-elementwise", "h200-cupti-stability")


def _same(got: pd.Series, want: pd.Series) -> None:
    if pd.api.types.is_numeric_dtype(want) and not pd.api.types.is_bool_dtype(want):
        np.testing.assert_allclose(got.to_numpy(float), want.to_numpy(float), rtol=1e-9,
                                   equal_nan=True)
    else:
        assert got.tolist() == want.tolist()


@pytest.mark.parametrize("job", JOBS)
@pytest.mark.parametrize("column", R.STATISTICS)
def test_recomputed_from_the_runs_as_written(job: str, column: str) -> None:
    bundle = bundled(job)
    agg = bundle.table(C.TABLE_AGGREGATED)
    done = R.complete(agg.drop(columns=[column]), bundle.table(C.TABLE_RUNS), bundle.parameters)
    assert done.recomputed == (column,) and not done.derived and not done.empty
    assert list(done.table.columns) == [c for c in agg.columns if c != column] + [column]
    _same(done.table[column], agg[column])
    assert column in " ".join(S.recomputed_sentences(done))


@pytest.mark.parametrize("column", R.STATISTICS)
def test_without_runs_derived_or_named(column: str) -> None:
    agg = bundled("h200-ncu-elementwise").table(C.TABLE_AGGREGATED)
    done = R.complete(agg.drop(columns=[column]), pd.DataFrame())
    if column in (C.RSD, C.CI95_LOWER, C.CI95_UPPER, C.STABLE):
        assert done.derived == (column,)
        _same(done.table[column], agg[column])  # the worker's formulas give the same values
    else:
        assert done.empty == (column,)
        flag = column in (C.STABLE, C.KERNELS_VARY)
        assert (~done.table[column]).all() if flag else done.table[column].isna().all()
        (problem,) = S.empty_problems(done, "tables/aggregated.parquet")
        assert f"column {column} is missing" in problem.sentence
        assert (problem.fault, problem.columns) == (Fault.NO_COLUMN, (column,))


def test_complete_table_is_left_alone() -> None:
    agg = bundled("h200-ncu-elementwise").table(C.TABLE_AGGREGATED)
    assert R.complete(agg, pd.DataFrame()).table is agg


@pytest.mark.parametrize("key", [*R.KEYS, "n"])
def test_a_table_without_a_key_is_rebuilt_from_the_runs_or_left_out(key: str) -> None:
    bundle = bundled("h200-ncu-elementwise")
    agg, runs = bundle.table(C.TABLE_AGGREGATED), bundle.table(C.TABLE_RUNS)
    done = R.complete(agg.drop(columns=[key, C.STD]), runs, bundle.parameters)
    assert done.rebuilt and done.keys == (key,)
    written = agg.drop(columns=[C.CI95_HALF_PCT])  # the loader adds it after completing
    pd.testing.assert_frame_equal(done.table, written, check_dtype=False)  # as the worker wrote it
    assert key in S.recomputed_sentences(done)[0] and "rebuilt from the runs table" in \
        S.recomputed_sentences(done)[0]
    lost = R.complete(agg.drop(columns=[key]), pd.DataFrame(), bundle.parameters)
    assert lost.table.empty and not lost.rebuilt and lost.keys == (key,)
    (problem,) = S.empty_problems(lost, "tables/aggregated.parquet")
    assert f"key column(s) {key} missing" in problem.sentence
    assert (problem.fault, problem.columns) == (Fault.NO_KEYS, (key,))


def test_an_older_bundles_negative_lower_bounds_are_shown_cut_and_said() -> None:
    """Issue 34: h200-ncu-elementwise-cache-none was written before the worker cut CI95 lower
    bounds at 0; its file keeps 4 rows of dram__bytes_write.sum below 0 (lowest -211.4 bytes),
    the loaded table shows 0 and the page says so; the file is left as recorded."""
    from profiling_worker.bundle.loader import read_table
    from tests.scenarios import scenario_dir

    name = "h200-ncu-elementwise-cache-none"
    written = read_table(scenario_dir(name), C.TABLE_AGGREGATED)
    assert (written[C.CI95_LOWER] < 0).sum() == 4
    bundle = bundled(name)
    assert (bundle.table(C.TABLE_AGGREGATED)[C.CI95_LOWER] >= 0).all()
    said = [s for s in bundle.restated if "are shown cut at 0, as the worker writes them" in s]
    assert len(said) == 1 and "4 CI95_Lower values below 0 as recorded" in said[0]
    assert "of dram__bytes_write.sum are" in said[0] and "(lowest -211.4)" in said[0]
    assert not any("shown cut at 0" in s for s in bundled("h200-cupti-j1-fp16").recomputed)
