"""The Nsight Compute preflight of a job: metric names this GPU knows, and permission to read
the performance counters, from one ``ncu --query-metrics`` call.

The query takes 1.2-1.7 s on the H200 (worker_breakdown.py, docs/performance.md), as long as
importing nsight-python; it runs in the background from the job's preparation, and the job
waits for its verdict just before the first profiled launch.
"""

from __future__ import annotations

import threading
from typing import Any

from profiling_worker.probes import environment
from profiling_worker.bundle.errors import (COUNTER_PERMISSION_HINT, COUNTER_PERMISSION_MARK,
                                            CounterPermission, SpecRejected)


class MetricCheck:
    """``ncu --query-metrics`` on device 0 (CUDA_VISIBLE_DEVICES already pins the job's GPU),
    started at construction; :meth:`verdict` waits for it and raises what it found."""

    def __init__(self, ncu_path: str, metrics: tuple[str, ...]):
        self._metrics = metrics
        self._result: tuple[frozenset[str] | None, str] = (None, "")
        # A daemon thread: a job that fails before its verdict does not wait for the query.
        self._thread = threading.Thread(target=self._query, args=(ncu_path,), daemon=True,
                                        name="ncu-query-metrics")
        self._thread.start()

    def _query(self, ncu_path: str) -> None:
        self._result = environment.ncu_query_metrics(ncu_path, 0)

    def verdict(self) -> None:
        """Wait for the query (at most its own 120 s timeout).

        Raises:
            CounterPermission: ncu says ERR_NVGPUCTRPERM (no access to the counters).
            SpecRejected: a metric's base name is not among this GPU's (``metrics`` field).
        """
        self._thread.join()
        bases, output = self._result
        if COUNTER_PERMISSION_MARK in output:
            line = next(ln.strip() for ln in output.splitlines() if COUNTER_PERMISSION_MARK in ln)
            raise CounterPermission(f"no permission to read GPU performance counters: {line[:300]}",
                                    COUNTER_PERMISSION_HINT)
        unknown = environment.unknown_metrics(self._metrics, bases) if bases else []
        if unknown:
            raise SpecRejected("metrics: unknown metric name(s) for this GPU: "
                               f"{', '.join(unknown)}",
                               "check the spelling; `ncu --query-metrics` lists the names this "
                               "GPU has")


def start(env: dict[str, Any], metrics: tuple[str, ...]) -> MetricCheck:
    """Start the preflight with the ncu the environment probe found (``env["ncu"]["path"]``)."""
    return MetricCheck((env.get("ncu") or {})["path"], metrics)
