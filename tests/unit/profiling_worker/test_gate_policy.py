"""The gate's policy on a damaged bundle, one test per row of ``sides.refusal``'s table: each
damages a copy of a recorded H200 bundle, reads it through the one loader (``load_bundle``),
checks what the loader recorded, then what the gate does with it (``GateSide.load``, and
``python -m profiling_worker compare`` where the exit code matters)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from profiling_worker.bundle.gate import exit_codes, report
from profiling_worker.bundle.gate.judge import OUTCOME, REASON, GateOptions, judge
from profiling_worker.bundle.gate.sides import GateInputError, GateSide, refusal
from profiling_worker.bundle.loader import load_bundle
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.table_problems import Fault
from tests.scenarios import SCENARIOS

BASE, AGAIN = SCENARIOS / "h200-cupti-gate-base", SCENARIOS / "h200-cupti-gate-again"


def copy(tmp_path: Path, name: str = "base") -> Path:
    return Path(shutil.copytree(BASE, tmp_path / name))


def table_path(bundle: Path, name: str, fmt: str = "parquet") -> Path:
    return bundle / C.TABLES_DIR / f"{name}.{fmt}"


def truncate(path: Path) -> None:
    """Half the file, as an interrupted copy leaves it."""
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])


def compare(base: Path, cand: Path = AGAIN) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "profiling_worker", "compare", str(base),
                           str(cand)], capture_output=True, text=True, timeout=120, check=False)


def test_an_unreadable_aggregated_file_is_refused_not_replaced_by_its_csv(tmp_path: Path) -> None:
    bundle = copy(tmp_path)
    parquet = table_path(bundle, C.TABLE_AGGREGATED)
    pd.read_parquet(parquet).to_csv(table_path(bundle, C.TABLE_AGGREGATED, "csv"), index=False)
    truncate(parquet)
    loaded = load_bundle(bundle)  # the pages: the CSV beside it, the damage named
    assert loaded.sources[C.TABLE_AGGREGATED] == "tables/aggregated.csv"
    (problem,) = loaded.table_problems
    assert (problem.fault, problem.table, problem.file) == (
        Fault.UNREADABLE, C.TABLE_AGGREGATED, "tables/aggregated.parquet")
    assert len(loaded.table(C.TABLE_AGGREGATED)) == len(load_bundle(BASE).table(
        C.TABLE_AGGREGATED))
    proc = compare(bundle)
    assert proc.returncode == exit_codes.EXIT_BAD_INPUT, proc.stdout
    assert f"{bundle}: tables/aggregated.parquet cannot be read (" in proc.stderr
    assert "the gate judges no other file in its place" in proc.stderr
    assert "record the job again" in proc.stderr


def test_a_done_job_without_an_aggregated_table_is_refused_a_failed_one_judged(
        tmp_path: Path) -> None:
    done = copy(tmp_path, "done")
    table_path(done, C.TABLE_AGGREGATED).unlink()
    loaded = load_bundle(done)
    assert C.TABLE_AGGREGATED not in loaded.sources and loaded.table_problems == ()
    assert refusal(loaded) == "no tables/aggregated.parquet or .csv; record the job again"
    proc = compare(done)
    assert proc.returncode == exit_codes.EXIT_BAD_INPUT
    assert f"{done}: no tables/aggregated.parquet or .csv; record the job again" in proc.stderr
    failed = copy(tmp_path, "failed")
    table_path(failed, C.TABLE_AGGREGATED).unlink()
    manifest = json.loads((failed / C.MANIFEST_FILE).read_text())
    (failed / C.MANIFEST_FILE).write_text(json.dumps({**manifest, "status": "failed"}))
    side = GateSide.load(failed)
    assert side.aggregated.empty
    rows = judge(side, GateSide.load(AGAIN), GateOptions()).rows
    assert len(rows) and set(rows[OUTCOME]) == {"not comparable"}  # the rows it lacks


@pytest.mark.parametrize("column", [C.AVG, C.STD, C.NUM_RUNS, C.METRIC])
def test_a_column_the_gate_judges_with_that_nothing_gives_is_refused_by_name(
        tmp_path: Path, column: str) -> None:
    bundle = copy(tmp_path)
    parquet = table_path(bundle, C.TABLE_AGGREGATED)
    pd.read_parquet(parquet).drop(columns=[column]).to_parquet(parquet, index=False)
    for path in (bundle / C.TABLES_DIR).glob(f"{C.TABLE_RUNS}.*"):
        path.unlink()
    loaded = load_bundle(bundle)
    (problem,) = [p for p in loaded.table_problems if column in p.columns]
    key = column == C.METRIC
    assert problem.fault is (Fault.NO_KEYS if key else Fault.NO_COLUMN)
    assert problem.file == "tables/aggregated.parquet"
    with pytest.raises(GateInputError, match=f"the aggregated table has no {column} column and "
                       "no runs table to recompute it from; add the column or record the job "
                       "again"):
        GateSide.load(bundle)


def test_a_column_nothing_gives_that_the_gate_does_not_use_is_accepted(tmp_path: Path) -> None:
    """MinValue: the pages lose its values, the gate never reads it."""
    bundle = copy(tmp_path)
    parquet = table_path(bundle, C.TABLE_AGGREGATED)
    pd.read_parquet(parquet).drop(columns=[C.MIN]).to_parquet(parquet, index=False)
    for path in (bundle / C.TABLES_DIR).glob(f"{C.TABLE_RUNS}.*"):
        path.unlink()
    loaded = load_bundle(bundle)
    assert [(p.fault, p.columns) for p in loaded.table_problems] == [(Fault.NO_COLUMN, (C.MIN,))]
    assert refusal(loaded) is None


def _with_text(bundle: Path, table: str, column: str) -> None:
    """``table`` written as CSV (its Parquet file removed) with one cell of ``column`` "fast",
    as a hand edit leaves it: pandas then reads the whole column as text ("n/a" it would read
    as a missing value)."""
    parquet = table_path(bundle, table)
    frame = pd.read_parquet(parquet)
    frame[column] = frame[column].astype(object)
    frame.loc[frame.index[0], column] = "fast"
    frame.to_csv(table_path(bundle, table, "csv"), index=False)
    parquet.unlink()


@pytest.mark.parametrize("column", [C.AVG, C.STD, C.NUM_RUNS, C.CONFIG])
def test_text_in_a_column_the_gate_judges_with_is_refused_by_name(tmp_path: Path,
                                                                   column: str) -> None:
    """Read as written, the text reached the judgement's arithmetic: a traceback and exit 1,
    which CI reads as "regressed". Now exit 2, naming the file, column and cells."""
    bundle = copy(tmp_path)
    _with_text(bundle, C.TABLE_AGGREGATED, column)
    loaded = load_bundle(bundle)
    (problem,) = loaded.table_problems
    assert (problem.fault, problem.file, problem.columns, problem.cells) == (
        Fault.TEXT_IN_NUMBERS, "tables/aggregated.csv", (column,), 1)
    said = (f"{bundle}: tables/aggregated.csv: column {column} holds 1 cell with no "
            "number; the gate judges with it: write the numbers there or record the job again")
    with pytest.raises(GateInputError) as refused:
        GateSide.load(bundle)
    assert str(refused.value) == said
    if column == C.AVG:  # the command line: exit 2, not a traceback's 1 ("regressed")
        proc = compare(bundle)
        assert proc.returncode == exit_codes.EXIT_BAD_INPUT and said in proc.stderr, proc.stderr


def test_numbers_written_as_text_or_text_the_gate_does_not_use_are_judged(
        tmp_path: Path) -> None:
    as_text = copy(tmp_path, "as-text")  # every AvgValue a number, stored as a string
    parquet = table_path(as_text, C.TABLE_AGGREGATED)
    frame = pd.read_parquet(parquet)
    frame.assign(**{C.AVG: frame[C.AVG].astype(str)}).to_parquet(parquet, index=False)
    (problem,) = load_bundle(as_text).table_problems
    assert (problem.fault, problem.columns, problem.cells) == (Fault.TEXT_IN_NUMBERS,
                                                               (C.AVG,), 0)
    again = GateSide.load(AGAIN)
    written = judge(GateSide.load(BASE), again, GateOptions()).rows
    pd.testing.assert_frame_equal(judge(GateSide.load(as_text), again, GateOptions()).rows,
                                  written)
    min_text = copy(tmp_path, "min-text")  # a column the gate never reads
    _with_text(min_text, C.TABLE_AGGREGATED, C.MIN)
    loaded = load_bundle(min_text)
    assert [(p.fault, p.columns, p.cells) for p in loaded.table_problems] == [
        (Fault.TEXT_IN_NUMBERS, (C.MIN,), 1)]
    assert refusal(loaded) is None


@pytest.mark.parametrize("table", [C.TABLE_RUNS, C.TABLE_COLLECTORS, C.TABLE_NVML,
                                   C.TABLE_LAUNCH_TIMES, C.TABLE_WORK])
def test_a_damaged_table_beside_the_aggregated_one_is_judged_without_never_refused(
        tmp_path: Path, table: str) -> None:
    """As without the table: its CSV twin (kept here) is not read in its place either."""
    damaged, without = copy(tmp_path, "damaged"), copy(tmp_path, "without")
    parquet = table_path(damaged, table)
    pd.read_parquet(parquet).to_csv(table_path(damaged, table, "csv"), index=False)
    truncate(parquet)
    table_path(without, table).unlink()
    loaded = load_bundle(damaged)
    assert [(p.fault, p.table) for p in loaded.table_problems] == [(Fault.UNREADABLE, table)]
    assert loaded.sources[table] == f"tables/{table}.csv"  # the pages read the CSV
    assert refusal(loaded) is None
    side = GateSide.load(damaged)
    assert (side.runs if table == C.TABLE_RUNS else side.collectors if
            table == C.TABLE_COLLECTORS else side.more.get(table, pd.DataFrame())).empty
    again = GateSide.load(AGAIN)
    got = judge(side, again, GateOptions())
    want = judge(GateSide.load(without), again, GateOptions())
    assert got.cycles_source == want.cycles_source
    pd.testing.assert_frame_equal(got.rows, want.rows)
    assert report.exit_code(got) == report.exit_code(want)



def test_text_in_the_runs_table_is_judged_never_refused(tmp_path: Path) -> None:
    """Read as written, the text stopped the run audit (TypeError in the timer check); read as
    numbers, the run without a duration is not checked, and the gate judges as on the intact
    bundle."""
    bundle = copy(tmp_path)
    _with_text(bundle, C.TABLE_RUNS, C.VALUE)
    loaded = load_bundle(bundle)
    assert [(p.fault, p.table, p.columns, p.cells) for p in loaded.table_problems] == [
        (Fault.TEXT_IN_NUMBERS, C.TABLE_RUNS, (C.VALUE,), 1)]
    assert refusal(loaded) is None
    again = GateSide.load(AGAIN)
    got = judge(GateSide.load(bundle), again, GateOptions()).rows
    want = judge(GateSide.load(BASE), again, GateOptions()).rows
    pd.testing.assert_frame_equal(got[[OUTCOME, REASON]], want[[OUTCOME, REASON]])

def test_a_manifest_without_its_spec_is_judged_with_spec_json_as_the_pages_read_it(
        tmp_path: Path) -> None:
    bundle = copy(tmp_path)
    manifest = json.loads((bundle / C.MANIFEST_FILE).read_text())
    (bundle / C.MANIFEST_FILE).write_text(json.dumps({**manifest, "spec": None}))
    again = GateSide.load(AGAIN)
    side = GateSide.load(bundle)
    assert side.parameters == ("n",) and side.asked_runs == GateSide.load(BASE).asked_runs
    pd.testing.assert_frame_equal(judge(side, again, GateOptions()).rows,
                                  judge(GateSide.load(BASE), again, GateOptions()).rows)
    (bundle / C.SPEC_FILE).write_text("{not json")
    with pytest.raises(GateInputError, match="not a result bundle .*spec.json is not valid JSON"):
        GateSide.load(bundle)
