"""One rule for a damaged table the run audit reads, in CI and on the pages: the loader reads
the CSV beside an unreadable ``runs.parquet`` for the pages, but the gate judges no other file
in its place (``gate.sides.beside_tables``), and the app's run audit now does the same and says
so; it audited the CSV while ``compare`` left the job without an audit."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd

from profiling_worker.bundle.gate.sides import GateSide
from profiling_worker.bundle.loader import load_bundle
from profiling_worker.bundle.schema import columns as C, run_audit as A
from profiling_worker.bundle.table_problems import Fault

from app.core.views.run_audit import audit_frame, badge_frame, unread_note
from tests.scenarios import scenario_dir

RUNS = Path(C.TABLES_DIR) / f"{C.TABLE_RUNS}.parquet"


def damaged_timeline(dest: Path) -> Path:
    """A copy of the recorded h200-cupti-timeline with the CSV the worker writes beside its
    runs table, and its ``runs.parquet`` cut to half its bytes (a copy cut short)."""
    job = shutil.copytree(scenario_dir("h200-cupti-timeline"), dest)
    parquet = job / RUNS
    pd.read_parquet(parquet).to_csv(parquet.with_suffix(".csv"), index=False)
    data = parquet.read_bytes()
    parquet.write_bytes(data[:len(data) // 2])
    return job


def test_the_app_audits_what_the_gate_audits_and_says_why_it_is_empty(tmp_path: Path) -> None:
    whole = load_bundle(shutil.copytree(scenario_dir("h200-cupti-timeline"), tmp_path / "w"))
    assert len(audit_frame(whole)) > 0  # the recorded runs: 200 runs audited
    bundle = load_bundle(damaged_timeline(tmp_path / "timeline"))
    assert [p.file for p in bundle.table_problems if p.fault is Fault.UNREADABLE] == [
        RUNS.as_posix()]
    assert len(bundle.table(C.TABLE_RUNS)) == len(whole.table(C.TABLE_RUNS))  # the CSV, read
    assert not A.run_audit(bundle.tables, bundle.manifest).empty  # what the app audited before
    assert GateSide.from_bundle(bundle).audit == {}  # CI: no audit of other numbers
    assert audit_frame(bundle).empty and badge_frame(bundle).empty  # the pages: the same
    note = unread_note(bundle)
    assert note is not None and note.startswith(f"{RUNS.as_posix()} cannot be read")
    assert "CSV beside it" in note and unread_note(whole) is None
