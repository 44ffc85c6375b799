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
