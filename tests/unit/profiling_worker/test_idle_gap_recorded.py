"""The GPU test of the audit's ``idle_gap`` check (tests/gpu/test_idle_gap_gpu.py), run here on
the job it checked: ``h200-cupti-idle-gap``, recorded on the H200 by this project's worker
(device run 1205-s9-runaudit, provenance in its manifest; 2 s host sleeps before every 10th run,
nothing of the clocks touched). The clock held at 1980 MHz through every gap, so the audit
measured six 2 s gaps and flagged none: each verdict is recomputed from the job's NVML trace."""

from __future__ import annotations

from pathlib import Path

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
