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


def test_a_kernel_file_that_prints_cannot_break_the_kernel_listing(tmp_path, monkeypatch) -> None:
    """Issue 26: one user file printing at import made every user kernel vanish (the listing
    was parsed from stdout). The report now comes on its own channel (env --out FILE) and user
    files' prints go to stderr; a file that fails is named."""
    from app.core.kernel_catalog import catalog_from_report

    kernels = tmp_path / "kernels"
    kernels.mkdir()
    (kernels / "a_loud.py").write_text("print('{\"hello\": 1}')\nprint('not json')\n"
                                      "import os; os.write(1, b'raw fd write\\n')\n")
    (kernels / "b_mine.py").write_text(
        "from profiling_worker.catalog.user import kernel\n"
        "@kernel(id='my_scale', parameters=('n',), annotations=('scale',),\n"
        "        default_configs=[{'n': 1024}])\n"
        "def my_scale(n, *, annotate, device):\n    pass\n")
    (kernels / "c_broken.py").write_text("raise RuntimeError('boom at import')\n")
    monkeypatch.setenv("KPROF_KERNEL_DIRS", str(kernels))
    catalog, errors = catalog_from_report(wc.probe_environment(sys.executable))
    assert "my_scale" in catalog and "matmul" in catalog
    assert [e["file"] for e in errors] == ["c_broken.py"] and "boom at import" in errors[0]["error"]
