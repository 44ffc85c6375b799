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
