"""The run audit records the durations its evidence states as data (tables/run_audit layout 2,
review of session 23): EvidenceTemplate with EvidenceValueNs and EvidenceReferenceNs, the
values in ns read from the job's own runs, and the Evidence text written from them as it
always was; a page writes them in its unit (app.core.numbers.durations_said), a table of
before (layout 1) is read with its text alone."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from app.core import numbers
from profiling_worker.bundle.number_text import ns_text, with_durations
from profiling_worker.bundle.schema import backends as B, columns as C, run_audit as A
from profiling_worker.bundle.schema.manifest import read_manifest
from profiling_worker.bundle.writer import bundle_tables, table_columns
from tests.scenarios import SCENARIOS, scenario_dir

TIMELINE = "h200-cupti-timeline"  # fp16 n=8192: 61 of 100 runs in a slow mode
IDLE_GAP = SCENARIOS.parent / "h200_runs" / "h200-cupti-idle-gap"  # runs below the TF32 floor


def _audit(path) -> tuple[pd.DataFrame, pd.DataFrame]:  # type: ignore[no-untyped-def]
    """(the audit, the runs' durations: Annotation, Config, Run, Value ns) of a recorded job."""
    tables, manifest = bundle_tables(path), read_manifest(path)
    runs = tables[C.TABLE_RUNS]
    metric = B.duration_metric(manifest["backend"]["name"])
    durations = runs[runs[C.METRIC] == metric][[C.ANNOTATION, C.CONFIG, C.RUN, C.VALUE]]
    return A.audit_runs(tables, manifest), durations


def _written_in_ns(rows: pd.DataFrame) -> list[str]:
    return [with_durations(t, ns_text(v), ns_text(r), "ns") for t, v, r in
            zip(rows[A.TEMPLATE], rows[A.VALUE_NS], rows[A.REFERENCE_NS])]


def test_the_table_layout_is_the_audits() -> None:
    assert table_columns(C.TABLE_RUN_AUDIT) == A.TABLE_COLUMNS == [*A.COLUMNS,
                                                                    *A.DURATION_COLUMNS]


def test_a_timer_evidence_records_the_runs_duration_and_the_floor() -> None:
    audit, durations = _audit(IDLE_GAP)
    timer = audit[audit[A.CHECK] == A.TIMER].merge(durations, on=[C.ANNOTATION, C.CONFIG, C.RUN])
    assert len(timer) == len(durations) and timer[A.TEMPLATE].notna().all()
    assert timer[A.VALUE_NS].tolist() == timer[C.VALUE].tolist()  # the run's own, exact
    flagged = timer[timer[A.RESULT] == A.FLAG]
    assert len(flagged) == 60
    assert (flagged[A.VALUE_NS] <= flagged[A.REFERENCE_NS]).all()  # at or below its floor
    assert (timer[timer[A.RESULT] == A.PASS][A.VALUE_NS]
            > timer[timer[A.RESULT] == A.PASS][A.REFERENCE_NS]).all()
    assert timer[A.EVIDENCE].tolist() == _written_in_ns(timer)  # the text as it always was
    assert all(e.startswith(f"{ns_text(v)} ns ") for e, v in zip(timer[A.EVIDENCE],
                                                                  timer[A.VALUE_NS]))


def test_a_population_evidence_records_the_two_groups_medians() -> None:
    audit, durations = _audit(scenario_dir(TIMELINE))
    population = audit[(audit[A.CHECK] == A.POPULATION) & (audit[C.CONFIG] == 1)]
    slow = population[population[A.RESULT] == A.FLAG]
    assert len(slow) == 61 and population[A.TEMPLATE].notna().all()
    runs = durations[(durations[C.CONFIG] == 1)].set_index(C.RUN)[C.VALUE]
    in_slow = runs.index.isin(slow[C.RUN])
    assert population[A.VALUE_NS].tolist() == pytest.approx(
        [float(np.median(runs[in_slow]))] * len(population))  # the slower group's median
    assert population[A.REFERENCE_NS].tolist() == pytest.approx(
        [float(np.median(runs[~in_slow]))] * len(population))  # the others'

    assert population[A.EVIDENCE].tolist() == _written_in_ns(population)
    one = audit[(audit[A.CHECK] == A.POPULATION) & (audit[C.CONFIG] == 0)]
    assert one[A.TEMPLATE].isna().all() and one[A.VALUE_NS].isna().all()  # one population


def test_checks_that_state_no_duration_leave_the_columns_empty() -> None:
    audit, _ = _audit(scenario_dir(TIMELINE))
    other = audit[~audit[A.CHECK].isin([A.TIMER, A.POPULATION])]
    assert len(other) and other[A.TEMPLATE].isna().all()
    assert other[[A.VALUE_NS, A.REFERENCE_NS]].isna().all().all()


@pytest.mark.parametrize("unit", ["ns", "µs", "ms"])
def test_a_page_writes_the_recorded_durations_in_its_unit(unit: str) -> None:
    audit, _ = _audit(IDLE_GAP)
    row = audit[(audit[A.CHECK] == A.TIMER) & (audit[A.RESULT] == A.FLAG)].iloc[0]
    said = numbers.durations_said(row[A.TEMPLATE], row[A.VALUE_NS], row[A.REFERENCE_NS], unit)
    scale = numbers.TIME_UNITS[unit]
    value, floor = (ns_text(v) if unit == "ns" else numbers.fmt(v / scale)
                    for v in (row[A.VALUE_NS], row[A.REFERENCE_NS]))
    assert said.startswith(f"{value} {unit} at or below {floor} {unit} (")
    assert said.split(" (", 1)[1] == row[A.EVIDENCE].split(" (", 1)[1]  # the why unchanged
    if unit == "ns":  # whole ns, as a table of before reads on such a page
        assert said == row[A.EVIDENCE] == numbers.durations_in(row[A.EVIDENCE], unit)


def test_a_stored_table_of_before_is_read_with_its_text_alone() -> None:
    audit, _ = _audit(IDLE_GAP)
    manifest = {A.RULES_KEY: A.RULES}
    assert A.stored_audit({C.TABLE_RUN_AUDIT: audit}, manifest).columns.tolist() == \
        A.TABLE_COLUMNS
    before = audit[A.COLUMNS]  # what a worker of sessions 19 to 23 wrote
    assert A.stored_audit({C.TABLE_RUN_AUDIT: before}, manifest).columns.tolist() == A.COLUMNS
