"""Energy beside time on the Size sweep and Compare pages: a job that asked for NVML energy
readings and got none says "not recorded" (never a figure); a job that did not ask (every cpu
job: its backend measures no energy) is not told so on every page, nor twice on Compare
(issue 37, a fresh user's find)."""

from __future__ import annotations

import shutil

from apptest_helpers import ONE_RUN_JOB_ID, texts

from app.core.views.energy import NOT_RECORDED


def test_a_cpu_job_says_nothing_of_energy_on_the_sweep_page(seeded, app) -> None:
    at = app("sweep")
    assert not at.exception
    assert NOT_RECORDED not in texts(at) and "Energy per kernel" not in texts(at)
    assert not [df for df in at.dataframe if "EnergyJPerRun" in df.value.columns]


def test_two_cpu_jobs_say_nothing_of_energy_on_compare(seeded, app, cpu_one_run_src) -> None:
    from apptest_helpers import JOB_ID

    shutil.copytree(cpu_one_run_src, seeded["results"] / ONE_RUN_JOB_ID)
    at = app("compare", query={"baseline": ONE_RUN_JOB_ID, "candidate": JOB_ID})
    assert not at.exception
    shown = texts(at)
    assert "Energy, baseline" not in shown and "Energy, candidate" not in shown
    assert NOT_RECORDED not in shown
