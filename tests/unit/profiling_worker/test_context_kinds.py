"""The gate's vocabularies of recorded context are enums, their text on disk unchanged: the run
audit's checks (``run_audit.Check``: the L2 state, the clock, idle gaps, host contention...,
the ``Check`` column of ``tables/run_audit``) and the kinds of reason a pair is not comparable
(``context.DifferenceKind``). A misspelt name is an error, never a new kind no caveat knows."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from profiling_worker.bundle.gate.context import DifferenceKind, differences, headline
from profiling_worker.bundle.gate.runs_context import CAVEAT_WORDS, INVALID_WORDS
from profiling_worker.bundle.gate.sides import GateSide
from profiling_worker.bundle.loader import load_bundle
from profiling_worker.bundle.schema import columns as C, run_audit as A
from profiling_worker.bundle.schema.manifest import read_manifest
from profiling_worker.bundle.writer import bundle_tables
from profiling_worker.job.results import write_run_audit
from tests.scenarios import scenario_dir

#: The ``Check`` column's text as the worker has always written it (issue 36).
ON_DISK = {"l2_state", "clock", "idle_gap", "host_contention", "launch_bound", "timer_sanity",
           "population"}


def test_a_written_audit_reads_back_as_the_same_text_and_the_same_verdict_inputs(
        tmp_path: Path) -> None:
    """The timeline's audit (61 runs of n = 8192 in a slow mode, 6 power-capped) written by the
    worker's writer into a copy of the recorded bundle and loaded again: the file holds the
    checks' plain text, and the gate's per-config audit of it equals the one in memory."""
    job = shutil.copytree(scenario_dir("h200-cupti-timeline"), tmp_path / "timeline")
    manifest = read_manifest(job)
    written = write_run_audit(job, bundle_tables(job), manifest)[C.TABLE_RUN_AUDIT]
    on_disk = pd.read_parquet(job / C.TABLES_DIR / f"{C.TABLE_RUN_AUDIT}.parquet")
    assert set(on_disk[A.CHECK]) == ON_DISK == {c.value for c in A.Check}
    assert all(type(c) is str for c in on_disk[A.CHECK])  # text, not a pickled enum
    side = GateSide.from_bundle(load_bundle(job))
    assert not side.more[C.TABLE_RUN_AUDIT].empty  # the stored table, read as written
    assert side.audit == A.config_audits(written)
    timeline = side.audit[("fp16", 1)]
    assert timeline.flagged == {A.Check.CLOCK: 6, A.Check.POPULATION: 61}
    assert timeline.invalid == [A.Check.POPULATION]


def test_a_misspelt_check_or_kind_is_an_error_not_a_new_one() -> None:
    with pytest.raises(ValueError):
        A.Check("clokc")
    with pytest.raises(ValueError):
        DifferenceKind("contendd")
    # every check the gate words as a caveat or blocker is one of the audit's
    assert set(CAVEAT_WORDS) | set(INVALID_WORDS) <= set(A.Check)


def test_differences_of_a_recorded_pair_carry_typed_kinds() -> None:
    """ncu against CUPTI of the same sweep: measured differently, said as such."""
    found = differences(read_manifest(scenario_dir("h200-ncu-matmul-sweep")),
                        read_manifest(scenario_dir("h200-cupti-matmul-sweep")))
    assert found and {d.kind for d in found} == {DifferenceKind.MEASURED}
    assert headline(found).startswith("the two jobs were measured differently")
