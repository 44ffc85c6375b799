"""Faults through the JobManager with real worker processes (cpu backend): a worker SIGKILLed
mid-job, disk full while writing the bundle (worker side and manager side), a thermal timeout,
no ncu on PATH, an ncu older than nsight-python needs, no permission for the GPU counters.

For each: the job ends failed with its cause, the log tail and a fix; the queue moves on (the
next queued job still runs to done); no finished bundle is changed or lost (every file of every
finished bundle hashed before and after).

Faults are injected by a stand-in interpreter (``fault-python``): a Python script that applies
the fault named in the spec's label ("fault:<name>") to the real worker, then runs
``-m profiling_worker`` as usual. GPU backends are reached without a GPU by a fake NVML
(``pynvml.py``) and fake package metadata on the worker's PYTHONPATH.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import stat
import sys
import time
from pathlib import Path

import pytest

from app import settings
from app.services import history_index
from app.services import job_book
from app.services import job_manager as jm
from app.services import worker_client
from app.services.job_recovery import RESERVE_FILE
from app.services.job_manager import JobManager
from profiling_worker.catalog.builtin import CATALOG
from profiling_worker.bundle.schema.manifest import read_manifest
from profiling_worker.bundle.schema.spec import validate_spec
from tests.conftest import finished_bundle_hashes

TINY = {"kernels": ["matmul"], "configs": [{"n": 16}], "runs": 1, "backend": "cpu", "warmup": 0}
LONG = {**TINY, "configs": [{"n": 256}], "runs": 5000}
PERM_LINE = ("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
             "Performance Counters on the target device 0.")

FAULT_PYTHON = '''#!{python}
"""Stand-in worker interpreter: apply the fault named in spec.json's label, run the worker."""
import errno, json, runpy, sys
args = sys.argv[1:]
while args and args[0] == "-u":
    args = args[1:]
assert args[:2] == ["-m", "profiling_worker"], args
job_dir = args[-1]
label = json.load(open(job_dir + "/spec.json")).get("label", "")
def enospc(*a, **k):
    raise OSError(errno.ENOSPC, "No space left on device")
if label == "fault:enospc-table":
    import profiling_worker.job.results as r
    r.write_table = r.write_columns = enospc  # runs and aggregated: write_columns
elif label == "fault:enospc-all":  # tables, manifest and events.jsonl all fail
    import builtins
    import profiling_worker.backends.channel as ch
    import profiling_worker.bundle.writer as bw
    import profiling_worker.job.results as r
    r.write_table = r.write_columns = bw.write_manifest = enospc  # finish_bundle: bundle_writer
    def no_events(path, *a, **k):
        if str(path).endswith("events.jsonl"):
            enospc()
        return builtins.open(path, *a, **k)
    ch.open = no_events
elif label == "fault:thermal":
    import profiling_worker.job.runner as rn
    class ThermalControlError(Exception):
        pass
    class CoolingTimeoutError(ThermalControlError):
        pass
    def collect(*a, **k):
        raise CoolingTimeoutError("Timeout after 180s. Cannot reach thermal_cont=20")
    rn.collect = collect
sys.argv = ["profiling_worker", *args[2:]]
runpy.run_module("profiling_worker", run_name="__main__", alter_sys=True)
'''

FAKE_PYNVML = '''
"""Fake NVML for fault tests: one NVIDIA H200 at index 0."""
class NVMLError(Exception):
    pass
NVML_CLOCK_SM, NVML_CLOCK_MEM = 1, 2
def nvmlInit(): pass
def nvmlShutdown(): pass
def nvmlSystemGetDriverVersion(): return "580.00"
def nvmlDeviceGetCount(): return 1
def nvmlDeviceGetHandleByIndex(i): return i
def nvmlDeviceGetHandleByUUID(u): return 0
def nvmlDeviceGetCudaComputeCapability(h): return (9, 0)
def nvmlDeviceGetName(h): return "NVIDIA H200"
def nvmlDeviceGetUUID(h): return "GPU-fake-0000"
class _Mem:
    total = 141 * 1024 ** 3
def nvmlDeviceGetMemoryInfo(h): return _Mem()
def nvmlDeviceGetMaxClockInfo(h, kind): return 1980
'''


def _fault_python(tmp_path: Path) -> str:
    path = tmp_path / "fault-python"
    path.write_text(FAULT_PYTHON.format(python=sys.executable))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _fake_gpu_site(tmp_path: Path, ncu_version: str | None, query_fails: bool = False) -> dict:
    """PYTHONPATH dir with a fake pynvml, nsight-python 1.1.1 metadata and ncu-report 2026.2.1, and a
    PATH with (or, for ``ncu_version=None``, without) a fake ncu."""
    site = tmp_path / "fake-site"
    site.mkdir(exist_ok=True)
    (site / "pynvml.py").write_text(FAKE_PYNVML)
    for name, version in (("nsight_python", "1.1.1"), ("ncu_report", "2026.2.1")):
        info = site / f"{name}-{version}.dist-info"
        info.mkdir(exist_ok=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\n"
                                       f"Version: {version}\n")
    # the probe names ncu-report's version only where the module found first is the package's
    # own file: a package that fails if imported (none of these jobs reads a report)
    (site / "ncu_report").mkdir(exist_ok=True)
    (site / "ncu_report" / "__init__.py").write_text("raise ImportError('a fake ncu-report')\n")
    (site / "ncu_report-2026.2.1.dist-info" / "RECORD").write_text("ncu_report/__init__.py,,\n")
    bin_dir = tmp_path / f"bin-{ncu_version}-{query_fails}"
    bin_dir.mkdir(exist_ok=True)
    if ncu_version:
        query = f'echo "{PERM_LINE}"; exit 1' if query_fails else \
            'echo "gpu__time_duration  Counter  ns  duration"'
        ncu = bin_dir / "ncu"
        ncu.write_text(f'#!/bin/sh\ncase "$1" in\n --version) echo "Version {ncu_version} '
                       f'(build 1)";;\n --query-metrics) {query};;\n *) exit 1;;\nesac\n')
        ncu.chmod(0o755)
    env = settings.worker_env()
    env["PYTHONPATH"] = os.pathsep.join([str(site), env["PYTHONPATH"]])
    env["PATH"] = os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"])
    return env


def _spec(raw: dict, label: str = ""):
    return validate_spec({**raw, "label": label}, CATALOG)


def _wait_running(manager: JobManager, job_id: str, timeout_s: float = 90.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        job = manager.get(job_id)
        if job.status == "running" and job_id in manager._procs and job.total:
            return
        time.sleep(0.05)
    raise AssertionError(f"{job_id} never reached its first progress event")


def _check_failed(manager: JobManager, job_id: str, kind: str) -> dict:
    job = manager.get(job_id)
    assert job.status == "failed", (job.status, job.error)
    assert job.error["kind"] == kind, job.error
    assert job.error["message"] and job.error["hint"]
    return job.error


@pytest.fixture
def seeded_results(tmp_path: Path, cpu_bundle_src: Path) -> Path:
    """A results dir holding one finished (done) bundle made by the real worker."""
    import shutil

    results = tmp_path / "results"
    results.mkdir()
    shutil.copytree(cpu_bundle_src, results / cpu_bundle_src.name)
    return results


def test_worker_faults_fail_with_cause_and_queue_moves_on(tmp_path: Path, seeded_results: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    before = finished_bundle_hashes(seeded_results)
    manager = JobManager(seeded_results, _fault_python(tmp_path), env=settings.worker_env(),
                         kill_grace_s=2.0)
    ids = {name: manager.submit(_spec(raw, f"fault:{name}" if name != "ok" else ""))
           for name, raw in (("kill", LONG), ("enospc-table", TINY), ("enospc-all", TINY),
                             ("thermal", TINY), ("ok", TINY))}
    # 1: SIGKILL the worker mid-job (a crash, not a cancel)
    _wait_running(manager, ids["kill"])
    os.killpg(manager._procs[ids["kill"]].pid, signal.SIGKILL)
    # the disk is full for the enospc-all job's manager writes too, until the job's disk
    # reserve (written at submit) is deleted
    # (the job book writes final states through update_manifest: patched where it is looked up)
    real_update = job_book.update_manifest
    refused: list[str] = []

    def manager_disk_full(path, change):
        if (Path(path).name == ids["enospc-all"] and change({}).get("status") == "failed"
                and (Path(path) / RESERVE_FILE).exists()):
            refused.append(Path(path).name)
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_update(path, change)

    monkeypatch.setattr(job_book, "update_manifest", manager_disk_full)
    assert manager.wait(ids["ok"], 240) == "done"
    assert not manager.active()

    err = _check_failed(manager, ids["kill"], "worker_died")
    assert "signal 9" in err["message"] and "python -m profiling_worker run" in err["hint"]
    # the worker's log / console tail: its last 4,000 characters, which a fast job fills with
    # progress events past the "--- worker.log ---" header (as test_faults_restart), so
    # compared whole, not by the header's name
    assert err["log_tail"] and err["log_tail"] == worker_client.log_tail(
        manager.get(ids["kill"]).path)
    assert read_manifest(manager.get(ids["kill"]).path)["status"] == "failed"

    err = _check_failed(manager, ids["enospc-table"], "disk_full")
    assert "disk full" in err["message"] and "df -h" in err["hint"]
    assert read_manifest(manager.get(ids["enospc-table"]).path)["error"]["kind"] == "disk_full"

    # events.jsonl and manifest.json unwritable by the worker: the error still arrives
    # (console copy) and the manager writes the final manifest in the freed reserve, so the
    # job is failed (disk_full) on disk too, not left "running", and can be deleted
    err = _check_failed(manager, ids["enospc-all"], "disk_full")
    assert refused == [ids["enospc-all"]]  # the manager's first write was refused, then freed
    on_disk = read_manifest(manager.get(ids["enospc-all"]).path)
    assert on_disk["status"] == "failed" and on_disk["error"]["kind"] == "disk_full"
    assert not any((seeded_results / i / RESERVE_FILE).exists() for i in ids.values())
    history_index.sync(seeded_results)
    history_index.delete(seeded_results, ids["enospc-all"])

    err = _check_failed(manager, ids["thermal"], "thermal_timeout")
    assert "thermal_mode to off" in err["hint"]

    after = finished_bundle_hashes(seeded_results)
    assert {k: after.get(k) for k in before} == before  # nothing finished changed or lost
    assert {k.split("/")[0] for k in after} == {*{k.split("/")[0] for k in before}, ids["ok"]}


@pytest.mark.parametrize("ncu_version, query_fails, kind, words", [
    (None, False, "backend_unavailable", ["ncu) not found on PATH", "put its ncu on PATH"]),
    ("2025.3.1.0", False, "backend_unavailable", ["needs Nsight Compute >= 2026.2.1",
                                                  "found 2025.3.1.0", "nsight-python==0.9.6"]),
    ("2026.2.1.0", True, "counter_permission", ["ERR_NVGPUCTRPERM", "cupti backend",
                                                "NVreg_RestrictProfilingToAdminUsers=0"]),
], ids=["no-ncu", "old-ncu", "counter-permission"])
def test_ncu_environment_faults_end_to_end(tmp_path: Path, seeded_results: Path, ncu_version,
                                           query_fails, kind, words) -> None:
    if ncu_version is None and os.access("/usr/local/cuda/bin/ncu", os.X_OK):
        pytest.skip("this machine has /usr/local/cuda/bin/ncu (the worker's fallback path)")
    before = finished_bundle_hashes(seeded_results)
    manager = JobManager(seeded_results, sys.executable,
                         env=_fake_gpu_site(tmp_path, ncu_version, query_fails))
    bad = manager.submit(_spec({**TINY, "backend": "ncu"}))
    nxt = manager.submit(_spec(TINY))
    assert manager.wait(nxt, 240) == "done"
    err = _check_failed(manager, bad, kind)
    text = err["message"] + " " + err["hint"]
    for word in words:
        assert word in text, (word, err)
    manifest = read_manifest(manager.get(bad).path)
    assert manifest["error"]["kind"] == kind
    assert manifest["gpu"] == {"index": 0, "name": "NVIDIA H200", "uuid": "GPU-fake-0000",
                               "nvml_index": 0, "visible_devices": None}
    after = finished_bundle_hashes(seeded_results)
    assert {k: after[k] for k in before} == before


def test_lane_survives_an_exception_in_the_manager(tmp_path: Path, seeded_results: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    manager = JobManager(seeded_results, sys.executable, env=settings.worker_env())
    calls = []
    real_run = manager._run

    def broken_once(job, lock_fd=None):
        if not calls:
            calls.append(job.job_id)
            raise RuntimeError("boom")
        return real_run(job, lock_fd)

    monkeypatch.setattr(manager, "_run", broken_once)
    first, second = manager.submit(_spec(TINY)), manager.submit(_spec(TINY))
    assert manager.wait(second, 120) == "done"
    err = _check_failed(manager, first, "internal")
    assert "boom" in err["message"]


def test_submit_on_a_full_disk_leaves_no_half_job(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    manager = JobManager(tmp_path / "results", sys.executable, env=settings.worker_env())

    def full(*_a, **_k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(jm, "write_manifest", full)
    with pytest.raises(OSError):
        manager.submit(_spec(TINY))
    assert [p.name for p in (tmp_path / "results").iterdir() if not p.name.startswith(".")] == []
    assert manager.snapshot() == []


def test_console_events_survive_without_events_file(tmp_path: Path) -> None:
    from app.services import worker_client

    (tmp_path / worker_client.CONSOLE_FILE).write_text(
        "noise\n" + json.dumps({"event": "error", "kind": "disk_full", "message": "m"}) + "\n")
    assert [e["kind"] for e in worker_client.console_events(tmp_path)] == ["disk_full"]
