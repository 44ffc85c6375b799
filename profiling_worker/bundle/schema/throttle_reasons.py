"""What the bits of NVML's clocks-event (throttle) reasons mask mean.

The worker records the raw mask (the ``throttle_reasons`` collector and the NVML trace's
``ThrottleReasons`` column); views and figures name the bits with this table.
"""

from __future__ import annotations

NVML_DOCS = "https://docs.nvidia.com/deploy/nvml-api/group__nvmlClocksEventReasons.html"
#: NVML clocks-event reason bits (nvml.h, nvmlClocksEventReason* / nvmlClocksThrottleReason*).
THROTTLE_BITS: dict[int, str] = {
    0x1: "GPU idle",
    0x2: "applications clocks setting",
    0x4: "SW power cap",
    0x8: "HW slowdown",
    0x10: "sync boost",
    0x20: "SW thermal slowdown",
    0x40: "HW thermal slowdown",
    0x80: "HW power brake slowdown",
    0x100: "display clock setting",
    0x200: "board limit",
    0x400: "reliability",
}
#: The bits that mean the GPU held its clock down for power or heat (SW power cap, HW slowdown,
#: SW/HW thermal slowdown, HW power brake): a run under one of them ran slower than the GPU can.
#: "GPU idle", application and display clock settings and sync boost say nothing about the
#: kernel's own clock.
CAPPING_BITS = 0x4 | 0x8 | 0x20 | 0x40 | 0x80


def capping(mask: int) -> list[str]:
    """The names of the :data:`CAPPING_BITS` set in an NVML clocks-event reason mask."""
    return [name for bit, name in THROTTLE_BITS.items() if bit & CAPPING_BITS & int(mask)]
