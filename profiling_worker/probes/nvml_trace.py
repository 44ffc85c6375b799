"""NVML sampler: SM and memory clock, temperature, power and throttle reasons during a job.

nsight-python's RUN-scope collectors sample just before each run (the first run of an H200
job read the 345 MHz idle clock), so only a sampler running during the job shows the clock
the kernels actually ran at.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pandas as pd

from profiling_worker.bundle.schema import columns as C


#: The trace's columns and their types.
SAMPLE_DTYPES = {C.TIME_S: "float64", C.SM_CLOCK_MHZ: "float64", C.MEM_CLOCK_MHZ: "float64",
                 C.TEMP_C: "float64", C.POWER_W: "float64", C.THROTTLE_REASONS: "int64"}


class NvmlSampler:
    """Background thread sampling one GPU (NVML UUID, see gpu_select.py) every ``interval_ms``
    (either None: disabled).

    Use as a context manager; :meth:`frame` returns the samples (TimeS from the start, s;
    SmClockMHz, MemClockMHz in MHz; TempC in °C; PowerW in W; ThrottleReasons as a bit mask).
    Without NVML the frame is empty and :attr:`error` says why.
    """

    def __init__(self, uuid: str | None, interval_ms: int | None):
        self.uuid = uuid
        self.interval = (interval_ms or 0) / 1000.0
        self.enabled = uuid is not None and interval_ms is not None
        self.samples: list[dict[str, Any]] = []
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0_ns = 0  # perf_counter_ns at TimeS 0, once sampling started

    def __enter__(self) -> NvmlSampler:
        if not self.enabled or self.uuid is None:  # enabled implies a uuid
            return self
        try:
            import pynvml

            from profiling_worker.probes.gpu_select import nvml_handle

            pynvml.nvmlInit()
            self._nvml = pynvml
            self._handle = nvml_handle(pynvml, self.uuid)
        except Exception as exc:  # no driver, no GPU, no nvidia-ml-py: the trace stays empty
            self.error = f"NVML unavailable: {exc}"
            return self
        self._t0_ns = time.perf_counter_ns()
        self._thread = threading.Thread(target=self._loop, name="nvml-sampler", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)
            self._nvml.nvmlShutdown()

    def _sample(self) -> dict[str, Any]:
        nv, h = self._nvml, self._handle
        return {
            C.TIME_S: (time.perf_counter_ns() - self._t0_ns) / 1e9,
            C.SM_CLOCK_MHZ: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM),
            C.MEM_CLOCK_MHZ: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM),
            C.TEMP_C: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU),
            C.POWER_W: nv.nvmlDeviceGetPowerUsage(h) / 1000.0,
            C.THROTTLE_REASONS: nv.nvmlDeviceGetCurrentClocksEventReasons(h),
        }

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.samples.append(self._sample())
            except Exception as exc:  # keep what was sampled; report the first failure
                self.error = self.error or f"NVML sampling stopped: {exc}"
                return
            self._stop.wait(self.interval)

    def start_on(self, pair: dict[str, int] | None) -> int | None:
        """The instant of TimeS 0 on CUPTI's clock (ns), from ``pair`` = {"cupti_ns",
        "perf_counter_ns"} read back to back (cupti_times.clock_pair); None without a pair or
        without sampling. Assumes the two clocks run at the same rate over a job (both count
        ns of the host); the H200 test checks the samples bracket the launches."""
        if pair is None or self._thread is None:
            return None
        return pair["cupti_ns"] - (pair["perf_counter_ns"] - self._t0_ns)

    def frame(self) -> pd.DataFrame:
        """The samples as a table (columns above), possibly empty; typed even when empty (s,
        MHz, MHz, °C, W as float, the clock-event reasons bit mask as int), so an empty trace is
        not stored as text columns."""
        return pd.DataFrame(self.samples, columns=list(SAMPLE_DTYPES)).astype(SAMPLE_DTYPES)
