"""The GPU test of the audit's ``idle_gap`` check (tests/gpu/test_idle_gap_gpu.py), run here on
the job it checked: ``h200-cupti-idle-gap``, recorded on the H200 by this project's worker
(device run 1205-s9-runaudit, provenance in its manifest; 2 s host sleeps before every 10th run,
nothing of the clocks touched). The clock held at 1980 MHz through every gap, so the audit
measured six 2 s gaps and flagged none: each verdict is recomputed from the job's NVML trace."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.gpu import test_idle_gap_gpu as gpu_checks

RECORDED = Path(__file__).resolve().parents[2] / "fixtures" / "h200_runs"


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
    from profiling_worker.bundle.schema import columns as C, run_audit as A
    from profiling_worker.bundle.schema.manifest import read_manifest
    from profiling_worker.bundle.writer import bundle_tables

    path = RECORDED / "h200-cupti-idle-gap"
    tables = {k: v for k, v in bundle_tables(path).items() if k != C.TABLE_RUN_AUDIT}
    nvml = tables[C.TABLE_NVML].copy()
    times = tables[C.TABLE_LAUNCH_TIMES]
    start = (times[times[C.CONFIG] == 1][C.START_NS].min()
             - read_manifest(path)["backend"]["nvml_trace_start_ns"]) / 1e9
    nvml.loc[nvml[C.TIME_S] >= start, C.SM_CLOCK_MHZ] = 1500.0
    first = (times[C.START_NS].min() - read_manifest(path)["backend"]["nvml_trace_start_ns"]) / 1e9
    nvml.loc[nvml[C.TIME_S] < first, C.SM_CLOCK_MHZ] = 1980.0  # before the job: at its max

    def gaps(trace: pd.DataFrame) -> pd.DataFrame:
        audit = A.audit_runs({**tables, C.TABLE_NVML: trace}, read_manifest(path))
        return audit[(audit[A.CHECK] == A.IDLE_GAP) & (audit[C.CONFIG] == 1)]

    steady = gaps(nvml)
    assert set(steady[A.RESULT]) == {A.PASS}
    gap_17 = steady[steady[C.RUN] == 17][A.EVIDENCE].iloc[0]
    assert gap_17.startswith("2e+03 ms without the job's kernels before the run")
    run_17 = times[(times[C.CONFIG] == 1) & (times[C.RUN] == 17)][C.START_NS].min()
    t0 = (run_17 - read_manifest(path)["backend"]["nvml_trace_start_ns"]) / 1e9
    dropped = nvml.copy()
    dropped.loc[(dropped[C.TIME_S] > t0 - 1.0) & (dropped[C.TIME_S] < t0 - 0.9),
                C.SM_CLOCK_MHZ] = 1300.0
    flagged = gaps(dropped)
    flagged = flagged[flagged[A.RESULT] == A.FLAG]
    assert list(flagged[C.RUN]) == [17]
    assert ("NVML read 1,300 MHz inside it vs its config's median 1,500 MHz (-13.3 %; limit "
            "5 %): long enough to drop the clock") in flagged[A.EVIDENCE].iloc[0]
