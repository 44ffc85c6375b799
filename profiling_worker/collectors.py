"""NVML readings behind the spec's info collectors (sm_clock, mem_clock, temperature, power,
throttle_reasons), and the record of what each returned.

nsight-python >= 1.1 calls RUN-scope collectors just before each run, with the config values;
the readings are recorded here too, keyed by config and run, so the bundle gets a
``collectors`` table whatever nsight-python does with its own copy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from profiling_worker.schema import columns as C

# collector -> (NVML reading, unit). Power is reported by NVML in mW.
_READINGS: dict[str, tuple[Callable[[Any, Any], float], str]] = {
    "sm_clock": (lambda nv, h: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM), "MHz"),
    "mem_clock": (lambda nv, h: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM), "MHz"),
    "temperature": (lambda nv, h: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU), "C"),
    "power": (lambda nv, h: nv.nvmlDeviceGetPowerUsage(h) / 1000.0, "W"),
    "throttle_reasons": (lambda nv, h: nv.nvmlDeviceGetCurrentClocksEventReasons(h), "bitmask"),
}


class CollectorRecorder:
    """Makes collector callbacks for one physical GPU (NVML UUID ``uuid``, gpu_select.py) and
    records every value they return.

    ``next_run(config_index)`` must give the run index the next call of that config will get.
    """

    def __init__(self, uuid: str, next_run: Callable[[int], int],
                 config_index: Callable[..., int]):
        import pynvml

        from profiling_worker.gpu_select import nvml_handle

        pynvml.nvmlInit()
        self._nv = pynvml
        self._handle = nvml_handle(pynvml, uuid)
        self._next_run = next_run
        self._config_index = config_index
        self.rows: list[dict[str, Any]] = []

    def callback(self, name: str) -> Callable[..., float]:
        """A RUN-scope callback ``cb(*config_values) -> value`` for collector ``name``."""
        read, unit = _READINGS[name]

        def collect(*config: Any) -> float:
            value = float(read(self._nv, self._handle))
            idx = self._config_index(config)
            self.rows.append({C.CONFIG: idx, C.RUN: self._next_run(idx), C.COLLECTOR: name,
                              C.VALUE: value, C.UNIT: unit})
            return value

        collect.__name__ = name
        return collect

    def frame(self, configs: list[dict[str, Any]], param_names: list[str]) -> pd.DataFrame:
        """The recorded values: Config, <params>, Run, Collector, Value, Unit."""
        rows = [{**r, **configs[r[C.CONFIG]]} for r in self.rows]
        return pd.DataFrame(rows, columns=[C.CONFIG, *param_names, C.RUN, C.COLLECTOR, C.VALUE,
                                           C.UNIT])
