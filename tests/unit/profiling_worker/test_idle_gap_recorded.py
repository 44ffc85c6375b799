"""The GPU test of the audit's ``idle_gap`` check (tests/gpu/test_idle_gap_gpu.py), run here on
the job it checked: ``h200-cupti-idle-gap``, recorded on the H200 by this project's worker
(device run 1205-s9-runaudit, provenance in its manifest; 2 s host sleeps before every 10th run,
nothing of the clocks touched). The clock held at 1980 MHz through every gap, so the audit
measured six 2 s gaps and flagged none: each verdict is recomputed from the job's NVML trace."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from profiling_worker.bundle.schema import columns as C, run_audit as A
from profiling_worker.bundle.schema.manifest import read_manifest
from profiling_worker.bundle.writer import bundle_tables
from tests.gpu import test_idle_gap_gpu as gpu_checks

RECORDED = Path(__file__).resolve().parents[2] / "fixtures" / "h200_runs"
PATH = RECORDED / "h200-cupti-idle-gap"
TABLES = {k: v for k, v in bundle_tables(PATH).items() if k != C.TABLE_RUN_AUDIT}
START_NS = float(read_manifest(PATH)["backend"]["nvml_trace_start_ns"])


def _planted() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two NVML traces of the recording: config 1 planted at a steady 1,500 MHz from its first
    launch (the GPU at 1,980 MHz before the job), and that trace with 1,300 MHz inside the gap
    before config 1's run 17."""
    nvml = TABLES[C.TABLE_NVML].copy()
    times = TABLES[C.TABLE_LAUNCH_TIMES]
    start = (times[times[C.CONFIG] == 1][C.START_NS].min() - START_NS) / 1e9
    nvml.loc[nvml[C.TIME_S] >= start, C.SM_CLOCK_MHZ] = 1500.0
    first = (times[C.START_NS].min() - START_NS) / 1e9
    nvml.loc[nvml[C.TIME_S] < first, C.SM_CLOCK_MHZ] = 1980.0  # before the job: at its max
    run_17 = times[(times[C.CONFIG] == 1) & (times[C.RUN] == 17)][C.START_NS].min()
    t0 = (run_17 - START_NS) / 1e9
    dropped = nvml.copy()
    dropped.loc[(dropped[C.TIME_S] > t0 - 1.0) & (dropped[C.TIME_S] < t0 - 0.9),
                C.SM_CLOCK_MHZ] = 1300.0
    return nvml, dropped


def _idle_rows(trace: pd.DataFrame) -> pd.DataFrame:
    """The audit's idle_gap rows of the recording with ``trace`` as its NVML trace."""
    audit = A.audit_runs({**TABLES, C.TABLE_NVML: trace}, read_manifest(PATH))
    return audit[audit[A.CHECK] == A.IDLE_GAP]


@pytest.fixture(autouse=True)
def _the_recording(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpu_checks, "RESULTS", RECORDED)
    monkeypatch.setattr(gpu_checks, "IDLE_LOG", RECORDED / "h200-cupti-idle-gap.sleeps")


def test_each_induced_gap_is_measured_and_every_verdict_follows_the_nvml_trace() -> None:
    gpu_checks.test_the_audit_measures_each_induced_gap_and_reads_its_verdict_from_nvml()


def test_the_flagged_runs_are_those_whose_gap_the_nvml_trace_shows_idle() -> None:
    gpu_checks.test_a_gap_that_dropped_the_clock_is_flagged()


def test_the_recording_touched_no_clock_setting() -> None:
    gpu_checks.test_no_clock_setting_was_changed_by_the_job()


def test_a_gap_reads_its_config_s_clock_not_the_job_s() -> None:
    """The idle-gap check's dropped clock is read against the run's own config's median clock:
    config 1 of the recording planted at a steady 1,500 MHz (every NVML sample of its span,
    its 2 s gaps included) and the GPU at 1,980 MHz before the job: its gaps pass, where the
    whole trace's median (1,980 MHz) failed its gaps with samples inside; a sample inside one
    of its gaps planted at 1,300 MHz fails, the evidence naming that clock, the config's median
    and the limit."""
    steady, dropped = _planted()
    steady = _idle_rows(steady)
    steady = steady[steady[C.CONFIG] == 1]
    assert set(steady[A.RESULT]) == {A.PASS}
    gap_17 = steady[steady[C.RUN] == 17][A.EVIDENCE].iloc[0]
    assert gap_17.startswith("2e+03 ms without the job's kernels before the run")
    flagged = _idle_rows(dropped)
    flagged = flagged[flagged[C.CONFIG] == 1]
    flagged = flagged[flagged[A.RESULT] == A.FLAG]
    assert list(flagged[C.RUN]) == [17]
    assert ("NVML read 1,300 MHz inside it vs its config's median 1,500 MHz (-13.3 %; limit "
            "5 %): long enough to drop the clock") in flagged[A.EVIDENCE].iloc[0]


def test_the_gpu_tests_oracle_follows_the_per_config_rule() -> None:
    """The GPU test's own reading of the NVML trace (``nvml_says_idle``, written from
    docs/run-audit.md, not calling the audit) flags the runs the audit flags on the recorded
    trace (none) and on both planted ones: config 1 steady at 1,500 MHz, which the rule before
    session 19 (90 % of the whole trace's median) failed, and a 1,300 MHz sample in one gap."""
    assert A.CLOCK_DROP_PCT == pytest.approx(100 * (1 - gpu_checks.CLOCK_LOW))  # its rule
    runs = gpu_checks.gaps_before_runs(TABLES[C.TABLE_LAUNCH_TIMES])
    keys = gpu_checks._keys_list(runs)
    recorded, (steady, dropped) = TABLES[C.TABLE_NVML], _planted()
    for trace, expected in ((recorded, []), (steady, []), (dropped, [("fp16", 1, 17)])):
        said = gpu_checks.nvml_says_idle(runs, trace, START_NS)
        audit = _idle_rows(trace)
        flagged = gpu_checks._keys(audit[audit[A.RESULT] == A.FLAG])
        assert sorted(k for k, idle in zip(keys, said) if idle) == sorted(flagged) == expected
    # the steady config's gaps hold samples the old rule read as dropped clocks
    inside = np.zeros(len(steady), bool)
    t = steady[C.TIME_S].to_numpy(float)
    for a, g in zip((runs["T0"] - START_NS) / 1e9, runs["GapS"]):
        inside |= (t > a - g) & (t < a) if g == g else False
    assert (steady[C.SM_CLOCK_MHZ][inside] < 0.9 * steady[C.SM_CLOCK_MHZ].median()).any()
