"""Energy per kernel (issue 36): never invented. A job without NVML energy readings (the H200
gate bundle, recorded without the 'energy' collector; a cpu job) says "not recorded"."""

from __future__ import annotations

import pytest

from app.core.metrics import MissingData
from app.core.views.energy import NOT_RECORDED, energy_frame
from tests.scenarios import scenario


@pytest.mark.parametrize("name", ["h200-cupti-gate-base", "h200-cupti-stability"])
def test_jobs_without_energy_readings_say_not_recorded(name):
    """gate-base has no collectors at all; stability has sm_clock, temperature, power only."""
    with pytest.raises(MissingData) as info:
        energy_frame(scenario(name))
    assert str(info.value) == NOT_RECORDED and "not recorded" in NOT_RECORDED


def test_only_a_job_that_asked_for_energy_is_told_it_has_none() -> None:
    """Issue 37: "not recorded" showed on every job that never asked (every cpu job); the pages
    say it only of a job whose spec has the 'energy' collector, or that holds readings."""
    from dataclasses import replace

    from app.core.views.energy import asked

    plain = scenario("h200-cupti-stability")  # sm_clock, temperature, power: no energy
    assert not asked(plain)
    assert plain.spec is not None
    wanted = replace(plain, spec=replace(plain.spec, collectors=(*plain.spec.collectors,
                                                                 "energy")))
    assert asked(wanted)
    with pytest.raises(MissingData, match="not recorded"):
        energy_frame(wanted)
