"""worker_client: events tail, env probe with the real worker and with no interpreter."""

from __future__ import annotations

import sys
from pathlib import Path

from app.services import worker_client as wc


def test_event_tail_reads_only_complete_new_lines(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    tail = wc.EventTail(path)
    assert tail.read_new() == []
    path.write_text('{"event": "progress", "done": 1, "total": 4}\nncu noise\n{"event": "lo')
    assert [e["done"] for e in tail.read_new()] == [1]
    with path.open("a") as fh:
        fh.write('g", "message": "hi"}\n')
    assert tail.read_new() == [{"event": "log", "message": "hi"}]
    assert tail.read_new() == []


def test_probe_real_worker() -> None:
    report = wc.probe_environment(sys.executable)
    assert set(report["backends"]) >= {"ncu", "cupti", "cpu"}
    assert report["backends"]["cpu"]["available"] is True
    assert wc.best_backend(report) in ("ncu", "cupti", "cpu")


def test_probe_missing_interpreter(tmp_path: Path) -> None:
    report = wc.probe_environment(str(tmp_path / "nope"))
    assert not wc.gpu_backend_available(report)
    assert all(not b["available"] for b in report["backends"].values())
    assert "KPROF_WORKER_PYTHON" in report["backends"]["ncu"]["fix"]


def test_report_layouts() -> None:
    flat = wc.normalise_report({"gpu_name": "H200", "ncu": {"available": True},
                                "cpu": {"available": True}})
    assert wc.gpu_backend_available(flat) and wc.best_backend(flat) == "ncu"
    assert wc.environment_of(flat) == {"gpu_name": "H200"}


def test_log_tail(tmp_path: Path) -> None:
    (tmp_path / "worker.log").write_text("a" * 10 + "END")
    (tmp_path / wc.CONSOLE_FILE).write_text("Traceback: boom")
    tail = wc.log_tail(tmp_path)
    assert "END" in tail and "boom" in tail
