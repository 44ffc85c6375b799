"""Energy beside time on the Size sweep and Compare pages: a job without NVML energy readings
says "not recorded" (never a figure)."""

from __future__ import annotations

from apptest_helpers import texts

from app.core.views.energy import NOT_RECORDED


def test_cpu_job_sweep_says_energy_not_recorded(seeded, app) -> None:
    at = app("sweep")
    assert not at.exception
    assert NOT_RECORDED in texts(at)
    assert not [df for df in at.dataframe if "EnergyJPerRun" in df.value.columns]
