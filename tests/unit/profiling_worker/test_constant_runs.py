"""Constant runs (every run one value, StdDev 0; durations of 0 included) give defined results
and say so, with no numpy or pandas RuntimeWarning from our code: the populations check fitted
a mixture to identical zeros (0/0 in its likelihood), a clock median of 0 MHz and a mean
duration of 0 divided by zero in the run audit, the gate's cycle check and the roofline."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from app.core import pages
from app.core.derived import MissingWork
from app.core.metrics import MissingData
from app.core.share.analyses import few_runs_text
from app.core.views.compare import gate_side
from profiling_worker.bundle.gate import judge as J, replication as R
from profiling_worker.bundle.loader import Bundle, load_bundle
from profiling_worker.bundle.schema import columns as C, intervals, populations, run_audit as A
from profiling_worker.bundle.stats.aggregate import aggregate_runs
from tests.scenarios import scenario_dir

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")
KEYS = [C.ANNOTATION, C.CONFIG, C.METRIC]


def _constant(job: str, zero: bool) -> tuple[Bundle, Bundle]:
    """(the recorded job, the same job whose every run of each annotation x config x metric
    reads its first run's value, or 0 for every metric, the clock included)."""
    bundle = load_bundle(scenario_dir(job))
    runs = bundle.tables[C.TABLE_RUNS].copy()
    runs[C.VALUE] = 0.0 if zero else runs.groupby(KEYS)[C.VALUE].transform("first")
    tables = {k: v for k, v in bundle.tables.items() if k != C.TABLE_RUN_AUDIT}
    tables.update({C.TABLE_RUNS: runs, C.TABLE_AGGREGATED: aggregate_runs(runs)})
    return bundle, dataclasses.replace(bundle, tables=tables)


@pytest.mark.parametrize("values", [[5.0] * 12, [0.0] * 12, [0.0] * 11 + [1e-9]])
def test_identical_runs_are_one_population(values: list[float]) -> None:
    found = populations.check(values)
    assert found.checked and found.one and found.describe() == "one population"


def test_constant_runs_have_zero_spread_said_beside_them() -> None:
    runs = pd.DataFrame({C.ANNOTATION: "a", C.CONFIG: [0] * 5 + [1] * 5, C.RUN: list(range(10)),
                         C.METRIC: C.GPU_TIME, C.VALUE: [7.0] * 5 + [7.0, 8, 9, 7, 8],
                         C.UNIT: "ns"})
    agg = aggregate_runs(runs)
    same = agg[agg[C.CONFIG] == 0].iloc[0]
    assert (same[C.STD], same[C.RSD]) == (0.0, 0.0)
    assert same[C.CI95_LOWER] == same[C.CI95_UPPER] == 7.0 and same[C.STABLE]
    assert list(intervals.constant(agg[C.NUM_RUNS], agg[C.STD])) == [True, False]
    said = few_runs_text(agg)
    assert said is not None and "Every run read the same value" in said and "(1 of 2 rows)" in said
    assert intervals.ONE_RUN_NOTE not in said


@pytest.mark.parametrize("job", ["h200-cupti-stability", "h200-ncu-roofline"])
@pytest.mark.parametrize("zero", [False, True])
def test_constant_runs_go_through_the_audit_every_analysis_the_gate_and_replication(
        job: str, zero: bool) -> None:
    recorded, same = _constant(job, zero)
    audit = A.audit_runs(same.tables, same.manifest)
    assert A.FLAG not in set(audit[audit[A.CHECK] == A.POPULATION][A.RESULT])  # one population
    for entry in pages.ANALYSES:
        try:
            entry.table(same)
        except (MissingData, MissingWork):
            pass  # the job records no input of that analysis: said, no warning
    for base, cand in ((same, same), (recorded, same)):
        gate = J.judge(gate_side(base), gate_side(cand), J.GateOptions())
        assert len(gate.rows) and gate.rows[J.OUTCOME].notna().all()
        replication = R.judge_replication(gate_side(base), gate_side(cand))
        assert replication.rows[R.VERDICT].notna().all()
    if not zero:  # no spread on either side: no test, and the reason says so
        rows = R.judge_replication(gate_side(same), gate_side(same)).rows
        assert rows[R.WHY].str.contains("no spread to test").all()
        assert np.isnan(rows[R.P_TOST]).all()
