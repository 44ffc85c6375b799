"""The order of a job spec's thermal limits: resume (thermal_cont) above pause (thermal_wait)."""

from __future__ import annotations

from profiling_worker.bundle.schema.spec_errors import FieldError

#: nsight-python's thermal_wait and thermal_cont when a spec leaves them None (°C of headroom
#: to the GPU's thermal limit; nsight-python 1.1 ``thermal_wait=10, thermal_cont=20``).
NSIGHT_THERMAL_DEFAULTS = {"thermal_wait": 10, "thermal_cont": 20}


def thermal_order(wait: int | None, cont: int | None) -> list[FieldError]:
    """An error on ``thermal_cont`` unless it is above ``thermal_wait``, each the value given or
    nsight-python's default when None: resume 5 with the pause left at its default 10 is
    refused as well as resume 5 with pause 10 given. Both None: nsight-python's own pair."""
    if wait is None and cont is None:
        return []
    pause = wait if wait is not None else NSIGHT_THERMAL_DEFAULTS["thermal_wait"]
    resume = cont if cont is not None else NSIGHT_THERMAL_DEFAULTS["thermal_cont"]
    if resume > pause:
        return []
    pause_said = f"{pause} °C" if wait is not None else f"{pause} °C, nsight-python's default"
    resume_said = f"{resume} °C" if cont is not None else f"{resume} °C, nsight-python's default"
    return [FieldError("thermal_cont", f"resume at {resume_said} is not above the pause point "
                       f"thermal_wait ({pause_said})",
                       "resume only after the GPU cooled further than the pause point: set "
                       "thermal_cont above thermal_wait")]
