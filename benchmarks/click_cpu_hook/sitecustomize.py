"""Loaded by the dashboard server that ``benchmarks/click_cpu.py`` starts (this folder first on
its ``PYTHONPATH``): appends one JSON line per Streamlit script run to the file named by
``CLICK_CPU_LOG``: the script thread's CPU time for the whole run (``cpu_ms``, from
``time.thread_time``) and up to the first ``plotly_chart`` element it enqueued
(``chart_cpu_ms``; the whole run when it drew none: ``chart`` false), the run's wall time (``wall_ms``), and the
garbage collections the script thread ran meanwhile: their CPU time (``gc_ms``) and those of
the oldest generation (``gc_full``), of which before the chart (``gc_full_before_chart``), and
the wall time of every thread's full collections while the run lasted (``gc_full_any_ms``: one
on another thread holds the GIL all the same).
Without ``CLICK_CPU_LOG`` nothing is changed."""

from __future__ import annotations

import gc
import json
import os
import threading
import time
from typing import Any

LOG = os.environ.get("CLICK_CPU_LOG")

if LOG:
    from streamlit import delta_generator
    from streamlit.runtime.scriptrunner import script_runner

    _run_script = script_runner.ScriptRunner._run_script
    _enqueue = delta_generator.DeltaGenerator._enqueue
    _chart = threading.local()  # the script thread's CPU clock at its first chart
    _gc = threading.local()  # the script thread's collections during its run

    _full_ms = [0.0]  # every thread's full collections, wall ms, since the server started
    _full_started = [0.0]

    def _collected(phase: str, info: dict[str, Any]) -> None:
        if info.get("generation") == 2:
            if phase == "start":
                _full_started[0] = time.perf_counter()
            else:
                _full_ms[0] += 1e3 * (time.perf_counter() - _full_started[0])
        if getattr(_gc, "runs", None) is None:
            return  # not a script thread, or between runs
        if phase == "start":
            _gc.started = time.thread_time()
            return
        _gc.runs.append((info.get("generation"), 1e3 * (time.thread_time() - _gc.started),
                         _chart.at is None))

    gc.callbacks.append(_collected)

    def _timed_run(self: Any, rerun_data: Any) -> None:
        _chart.at = None
        _gc.runs = []
        full_before = _full_ms[0]
        cpu, wall = time.thread_time(), time.perf_counter()
        try:
            _run_script(self, rerun_data)
        finally:
            cpu_end, wall_end = time.thread_time(), time.perf_counter()
            collections, _gc.runs = _gc.runs, None
            with open(str(LOG), "a", encoding="utf-8") as out:
                out.write(json.dumps({
                    "cpu_ms": 1e3 * (cpu_end - cpu),
                    "chart": _chart.at is not None,
                    "chart_cpu_ms": 1e3 * ((_chart.at or cpu_end) - cpu),
                    "wall_ms": 1e3 * (wall_end - wall),
                    "gc_ms": sum(ms for _, ms, _ in collections),
                    "gc_full": sum(gen == 2 for gen, _, _ in collections),
                    "gc_full_before_chart": sum(gen == 2 and before
                                                for gen, _, before in collections),
                    "gc_full_any_ms": _full_ms[0] - full_before}) + "\n")

    def _marked_enqueue(self: Any, delta_type: str, *args: Any, **kwargs: Any) -> Any:
        if delta_type == "plotly_chart" and getattr(_chart, "at", 0) is None:
            _chart.at = time.thread_time()
        return _enqueue(self, delta_type, *args, **kwargs)

    script_runner.ScriptRunner._run_script = _timed_run  # type: ignore[method-assign]
    delta_generator.DeltaGenerator._enqueue = _marked_enqueue  # type: ignore[method-assign]
