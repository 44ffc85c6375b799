"""Which two jobs the thermal_mode comparison opens on, and its notes on other pairs."""

from __future__ import annotations

import dataclasses

from bundled import bundled

from app.core.views.compare import JobSummary
from app.core.views.thermal_pair import pair_notes, thermal_pair

JOBS = ("h200-cupti-matmul-sweep", "h200-cupti-stability", "h200-cupti-stability-thermal-off",
        "h200-cupti-j1-fp16")


def _jobs(names=JOBS) -> tuple[list[JobSummary], dict[str, str]]:
    summaries = [JobSummary.of(n, "", bundled(n).spec) for n in names]
    return summaries, {n: bundled(n).spec.thermal_mode for n in names}


def test_pair_is_same_work_with_other_thermal_mode() -> None:
    jobs, modes = _jobs()
    pair = ("h200-cupti-stability", "h200-cupti-stability-thermal-off")
    assert thermal_pair(None, jobs, modes) == pair
    assert thermal_pair("h200-cupti-j1-fp16", jobs, modes) == pair  # it has no partner
    assert thermal_pair(pair[1], jobs, modes) == pair[::-1]  # the selected job first
    assert pair_notes(*(s for s in jobs if s.job_id in pair), modes) == []


def test_no_pair_when_every_job_has_the_same_thermal_mode() -> None:
    jobs, modes = _jobs(JOBS[:2] + JOBS[3:])
    assert thermal_pair("h200-cupti-stability", jobs, modes) is None


def test_notes_on_a_job_with_itself_and_unrelated_jobs() -> None:
    jobs, modes = _jobs()
    sweep, stability, off, j1 = jobs
    (itself,) = pair_notes(stability, stability, modes)
    assert "same job" in itself
    same_mode, other_work = pair_notes(sweep, j1, modes)
    assert "Both jobs ran with thermal_mode auto" in same_mode
    assert "not only in thermal_mode" in other_work
    assert pair_notes(stability, dataclasses.replace(off, backend="ncu"), modes) == [
        pair_notes(sweep, off, modes)[-1]]  # another backend is other work too
