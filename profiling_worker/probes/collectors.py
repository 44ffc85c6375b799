"""NVML readings behind the spec's info collectors (sm_clock, mem_clock, temperature, power,
throttle_reasons, energy), and the record of what each returned.

``energy`` is NVML's total energy counter (``nvmlDeviceGetTotalEnergyConsumption``, mJ since
the driver loaded; Volta and later). Each reading is recorded with the host clock it was read at
(collector ``energy_read_s``, ``time.perf_counter`` in s), so app/core/views/energy.py can turn
two readings into a mean power; a GPU without the counter records none and says so.

nsight-python >= 1.1 calls RUN-scope collectors just before each run, with the config values;
the readings are recorded here too, keyed by config and run, so the bundle gets a
``collectors`` table whatever nsight-python does with its own copy.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pandas as pd

from profiling_worker.bundle.schema import columns as C

# collector -> (NVML reading, unit). Power is reported by NVML in mW.
_READINGS: dict[str, tuple[Callable[[Any, Any], float], str]] = {
    "sm_clock": (lambda nv, h: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM), "MHz"),
    "mem_clock": (lambda nv, h: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM), "MHz"),
    "temperature": (lambda nv, h: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU), "C"),
    "power": (lambda nv, h: nv.nvmlDeviceGetPowerUsage(h) / 1000.0, "W"),
    "throttle_reasons": (lambda nv, h: nv.nvmlDeviceGetCurrentClocksEventReasons(h), "bitmask"),
    "energy": (lambda nv, h: nv.nvmlDeviceGetTotalEnergyConsumption(h), "mJ"),
}
#: The collector holding the host time of each ``energy`` reading (s, time.perf_counter).
ENERGY_READ = "energy_read_s"


class CollectorRecorder:
    """Makes collector callbacks for one physical GPU (NVML UUID ``uuid``, gpu_select.py) and
    records every value they return.

    ``next_run(config_index)`` must give the run index the next call of that config will get.
    """

    def __init__(self, uuid: str, next_run: Callable[[int], int],
                 config_index: Callable[..., int]):
        import pynvml

        from profiling_worker.probes.gpu_select import nvml_handle

        pynvml.nvmlInit()
        self._nv = pynvml
        self._handle = nvml_handle(pynvml, uuid)
        self._next_run = next_run
        self._config_index = config_index
        self.rows: list[dict[str, Any]] = []
        #: Why a collector recorded nothing (e.g. a GPU without the energy counter), by name.
        self.unsupported: dict[str, str] = {}

    def callback(self, name: str) -> Callable[..., float | None]:
        """A RUN-scope callback ``cb(*config_values) -> value`` for collector ``name``."""
        read, unit = _READINGS[name]

        def collect(*config: Any) -> float | None:
            if name in self.unsupported:
                return None
            at = time.perf_counter()
            try:
                value = float(read(self._nv, self._handle))
            except self._nv.NVMLError as exc:  # NotSupported: this GPU has no such reading
                self.unsupported[name] = f"NVML: {exc}"
                return None
            idx = self._config_index(config)
            run = self._next_run(idx)
            self.rows.append({C.CONFIG: idx, C.RUN: run, C.COLLECTOR: name, C.VALUE: value,
                              C.UNIT: unit})
            if name == "energy":
                self.rows.append({C.CONFIG: idx, C.RUN: run, C.COLLECTOR: ENERGY_READ,
                                  C.VALUE: at, C.UNIT: "s"})
            return value

        collect.__name__ = name
        return collect

    def frame(self, configs: list[dict[str, Any]], param_names: list[str]) -> pd.DataFrame:
        """The recorded values: Config, <params>, Run, Collector, Value, Unit."""
        rows = [{**r, **configs[r[C.CONFIG]]} for r in self.rows]
        return pd.DataFrame(rows, columns=[C.CONFIG, *param_names, C.RUN, C.COLLECTOR, C.VALUE,
                                           C.UNIT])
