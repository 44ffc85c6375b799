"""A bundle written by hand or by another tool may lack any column of its aggregated table.
Every page still draws (no exception): a value the runs table gives is recomputed and the page
says so, naming the column; a value nothing gives is left out with a note naming it. A table
without a key column is rebuilt from the runs table, or left out with a note."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from apptest_helpers import DEFAULT_PAGE, texts
from profiling_worker.bundle.schema import columns as C
from tests.scenarios import SCENARIOS

REPO = Path(__file__).resolve().parents[2]
PAGES = sorted(p.stem for p in (REPO / "app" / "app_pages").glob("*.py"))
#: The job every page is visited with, its Compare partner and its CUPTI twin (the backends
#: page): all three lose the column.
JOB, PARTNER, TWIN = "h200-ncu-elementwise", "h200-ncu-elementwise-cache-none", \
    "h200-cupti-elementwise"
#: Every column of the aggregated table but its keys (annotation, config, its parameters, metric).
OPTIONAL = (C.UNIT, C.NUM_RUNS, C.AVG, C.STD, C.MIN, C.MAX, C.MEDIAN, C.CI95_LOWER, C.CI95_UPPER,
            C.RSD, C.STABLE, C.KERNELS, C.KERNELS_VARY)
#: The key columns: annotation, config, metric and the jobs' config parameter.
KEYS = (C.ANNOTATION, C.CONFIG, C.METRIC, "n")


def _without(bundled: Path, column: str, tables: tuple[str, ...]) -> None:
    """Copy JOB, PARTNER and TWIN into ``bundled`` with ``column`` dropped from the aggregated table
    (parquet and CSV alike) and the ``tables`` removed."""
    for job in (JOB, PARTNER, TWIN):
        dest = bundled / job
        shutil.copytree(SCENARIOS / job, dest)
        base = dest / C.TABLES_DIR / C.TABLE_AGGREGATED
        agg = pd.read_parquet(base.with_suffix(".parquet"))
        assert column in agg, column
        agg = agg.drop(columns=[column])
        agg.to_parquet(base.with_suffix(".parquet"), index=False)
        agg.to_csv(base.with_suffix(".csv"), index=False)
        for table in tables:
            for path in (dest / C.TABLES_DIR).glob(f"{table}.*"):
                path.unlink()


def _visit(app) -> dict[str, str]:
    """Every page's text with JOB selected, in one session (as a user clicks through the
    pages: one start of the app, not one per page); fails on the first page that raised."""
    at = app(query={"job": JOB})
    seen = {}
    for page in [DEFAULT_PAGE, *(p for p in PAGES if p != DEFAULT_PAGE)]:
        if page != DEFAULT_PAGE:  # the first run showed it
            at.switch_page(f"app_pages/{page}.py").run()
        assert not at.exception, (page, at.exception[0].message)
        seen[page] = texts(at)
    return seen


#: Pages that draw nothing of the selected job's aggregated table (no note expected there).
NO_AGGREGATES = ("history", "import_files", "environment")
#: Columns the others give when there is no runs table (by the worker's formulas).
DERIVABLE = (C.RSD, C.CI95_LOWER, C.CI95_UPPER, C.STABLE)


@pytest.mark.parametrize("runs_kept", [True, False], ids=["with-runs", "no-runs"])
@pytest.mark.parametrize("column", [*OPTIONAL, *KEYS])
def test_a_missing_aggregated_column_is_recomputed_or_named(store, app, column,
                                                            runs_kept) -> None:
    _without(store["bundled"], column, () if runs_kept else (C.TABLE_RUNS,))
    if column in KEYS:  # rows cannot be matched: the whole table is rebuilt, or left out
        note = "rebuilt from the runs table" if runs_kept else \
            f"key column(s) {column} missing and no runs table to rebuild it from"
    elif runs_kept:
        note = "recomputed from the runs table"
    elif column in DERIVABLE:
        note = "recomputed from its other columns"
    else:
        note = f"column {column} is missing and neither the runs table nor the other columns"
    for page, text in _visit(app).items():
        if page not in NO_AGGREGATES:
            assert column in text and note in text, page
