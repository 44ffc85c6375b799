"""``benchmarks/page_trace.main_thread_ms`` reads the renderer main thread's wall and CPU time
from a Chromium trace (the CPU figure judges page loads while other processes load the
machine, issue 37)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
import page_trace  # noqa: E402


def test_busy_cpu_is_the_main_thread_tasks_thread_time(tmp_path: Path) -> None:
    """Only ``CrRendererMain``'s complete events count; ``tdur`` (µs of thread time) gives the
    CPU figures, ``dur`` the wall ones."""
    main, other = {"pid": 1, "tid": 7}, {"pid": 1, "tid": 8}
    events = [
        {**main, "ph": "M", "name": "thread_name", "args": {"name": "CrRendererMain"}},
        {**other, "ph": "M", "name": "thread_name", "args": {"name": "Compositor"}},
        {**main, "ph": "X", "name": "RunTask", "ts": 0, "dur": 30_000, "tdur": 10_000},
        {**main, "ph": "X", "name": "FunctionCall", "ts": 1, "dur": 20_000, "tdur": 8_000,
         "args": {"data": {"url": "http://x/static/js/react-dom.abc.js"}}},
        {**main, "ph": "X", "name": "RunTask", "ts": 40_000, "dur": 5_000, "tdur": 4_000},
        {**other, "ph": "X", "name": "RunTask", "ts": 0, "dur": 90_000, "tdur": 90_000},
    ]
    trace = tmp_path / "trace.json"
    trace.write_text(json.dumps({"traceEvents": events}))
    ms = page_trace.main_thread_ms(trace)
    assert ms["busy"] == pytest.approx(35.0) and ms["busy_cpu"] == pytest.approx(14.0)
    assert ms["react-dom"] == pytest.approx(20.0) and ms["react-dom_cpu"] == pytest.approx(8.0)
