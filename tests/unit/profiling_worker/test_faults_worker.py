"""Faults inside the worker, run in-process through ``runner.run_job``: disk full while writing
the bundle, a thermal control timeout, no permission for the GPU counters (ERR_NVGPUCTRPERM,
with a fake ``ncu`` on PATH), the GPU recorded in the manifest, old libcupti / old ncu messages.

Each failed job must end with a manifest (or, when even that cannot be written, an ``error``
event) whose ``kind``, message and fix say what happened."""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from profiling_worker.bundle import writer as bundle_writer
from profiling_worker.probes import environment
from profiling_worker.job import results, runner
from profiling_worker.backends.registry import choose_backends
from profiling_worker.backends.channel import Channel
from profiling_worker.bundle.errors import (COUNTER_PERMISSION_MARK, ProfilingFailed, WorkerError,
                                            classify_known)
from profiling_worker.bundle.schema.events import parse_line
from profiling_worker.bundle.schema.manifest import read_manifest

CPU_SPEC = {"kernels": ["matmul"], "configs": [{"n": 16}], "runs": 1, "backend": "cpu",
            "warmup": 0}
NCU_SPEC = {"kernels": ["matmul"], "configs": [{"n": 16}], "runs": 1, "backend": "ncu",
            "warmup": 0}
#: The line Nsight Compute prints (NVIDIA/TensorRT-LLM #183, ThunderKittens #73).
PERM_LINE = ("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
             "Performance Counters on the target device 0. For instructions on enabling "
             "permissions and to get more information see https://developer.nvidia.com/"
             "ERR_NVGPUCTRPERM")
GPUS = [{"index": 0, "name": "NVIDIA H200", "uuid": "GPU-aaaa", "driver": "580.1"},
        {"index": 1, "name": "NVIDIA H200", "uuid": "GPU-bbbb", "driver": "580.1"}]


def _job(tmp_path: Path, spec: dict, name: str = "20270101-000000-matmul-0001") -> Path:
    job = tmp_path / "results" / name
    job.mkdir(parents=True)
    (job / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    return job


def _events(job: Path) -> list[dict]:
    return [e for e in map(parse_line, (job / "events.jsonl").read_text().splitlines()) if e]


def fake_ncu(bin_dir: Path, version: str = "2026.2.1.0", query_fails: bool = False,
             profile_fails: bool = True) -> Path:
    """An ``ncu`` shell script: ``--version`` prints ``version``; ``--query-metrics`` prints
    two metric lines, or the ERR_NVGPUCTRPERM line and exits 1; anything else (a profile)
    prints the ERR_NVGPUCTRPERM line and exits 1 when ``profile_fails``."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    query = (f'echo "{PERM_LINE}"; exit 1' if query_fails else
             'printf "gpu__time_duration  Counter  ns  total duration\\n'
             'sm__throughput  Ratio  %%  SM throughput\\n"; exit 0')
    profile = f'echo "{PERM_LINE}"; exit 1' if profile_fails else "exit 0"
    script = bin_dir / "ncu"
    script.write_text(f"""#!/bin/sh
case "$1" in
  --version) echo "NVIDIA (R) Nsight Compute Command Line Profiler"
             echo "Copyright (c) 2018-2026 NVIDIA Corporation"
             echo "Version {version} (build 36000000) (public-release)"; exit 0;;
  --query-metrics) {query};;
  *) {profile};;
esac
""")
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return script


def _ncu_report(ncu: Path) -> dict:
    env = {"host": "h", "gpus": GPUS, "ncu": {"path": str(ncu), "version": "2026.2.1.0"},
           "nsight_python": "1.1.1", "ncu_report": "2026.2.1", "libcupti": []}
    return {"environment": env, "backends": {"ncu": {
        "available": True, "nsight_mode": "attach", "fix": "",
        "reason": "nsight-python 1.1.1 attach mode, ncu 2026.2.1.0"}}}


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """run_job sets CUDA_VISIBLE_DEVICES (and the variables gpu_select keeps), PATH and a SIGTERM
    handler: restore them after."""
    import signal

    monkeypatch.setenv("PATH", os.environ.get("PATH", ""))
    for name in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "KPROF_VISIBLE_DEVICES"):
        monkeypatch.setenv(name, "")  # recorded, so the value a test leaves is undone after
        monkeypatch.delenv(name)
    old = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, old)


# --- 10: disk full --------------------------------------------------------------------------

def _enospc(*_a, **_k):
    raise OSError(errno.ENOSPC, "No space left on device")


def test_disk_full_while_writing_tables_fails_with_fix(tmp_path: Path, clean_env,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    job = _job(tmp_path, CPU_SPEC)
    monkeypatch.setattr(results, "write_table", _enospc)
    monkeypatch.setattr(results, "write_columns", _enospc)  # runs and aggregated
    assert runner.run_job(job, Channel(job, None)) == 1
    manifest = read_manifest(job)
    err = manifest["error"]
    assert manifest["status"] == "failed" and err["kind"] == "disk_full"
    assert "disk full" in err["message"] and "No space left" in err["message"]
    assert "df -h" in err["hint"] and "--results" in err["hint"]
    assert str(job.parent) in err["hint"]  # which file system to clean
    assert [e["kind"] for e in _events(job) if e["event"] == "error"] == ["disk_full"]


def test_disk_full_for_the_manifest_too_still_reports_on_the_channel(
        tmp_path: Path, clean_env, monkeypatch: pytest.MonkeyPatch) -> None:
    job = _job(tmp_path, CPU_SPEC)
    monkeypatch.setattr(results, "write_table", _enospc)
    monkeypatch.setattr(results, "write_columns", _enospc)  # runs and aggregated
    monkeypatch.setattr(bundle_writer, "write_manifest", _enospc)  # finish_bundle's
    assert runner.run_job(job, Channel(job, None)) == 1  # no exception escapes
    # only the start's record (written before the disk filled) is there: it says running, and a
    # follower ends it interrupted once the worker is gone (tests/unit/app/test_other_jobs.py)
    assert read_manifest(job)["status"] == "running"
    errors = [e for e in _events(job) if e["event"] == "error"]
    assert errors[-1]["kind"] == "disk_full"


def test_events_file_unwritable_goes_to_stdout_copy(tmp_path: Path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    (job / "events.jsonl").mkdir()  # opening it for append fails like a full disk would
    r, w = os.pipe()
    Channel(job, w).emit("error", kind="disk_full", message="m", hint="h")
    os.close(w)
    line = os.read(r, 4096).decode()
    assert parse_line(line)["kind"] == "disk_full"


# --- 9: thermal control timeout ---------------------------------------------------------------

class ThermalControlError(Exception):
    """Stand-in of nsight-python's class of that name (nsight/thermovision.py)."""


class CoolingTimeoutError(ThermalControlError):
    """Stand-in of nsight-python's subclass of that name."""


def test_thermal_timeout_is_classified_with_settings_hint(tmp_path: Path, clean_env,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    def collect(*_a, **_k):
        try:
            raise CoolingTimeoutError("Timeout after 180s. Cannot reach thermal_cont=20")
        except CoolingTimeoutError as exc:  # the ncu backend wraps what nsight-python raised
            raise ProfilingFailed(f"Nsight Compute profiling failed: {exc}", "") from exc

    monkeypatch.setattr(runner, "collect", collect)
    job = _job(tmp_path, CPU_SPEC)
    assert runner.run_job(job, Channel(job, None)) == 1
    err = read_manifest(job)["error"]
    assert err["kind"] == "thermal_timeout"
    assert "CoolingTimeoutError" in err["message"] and "thermal_cont=20" in err["message"]
    for word in ("thermal_timeout", "thermal_wait", "thermal_cont", "thermal_mode to off"):
        assert word in err["hint"]


def test_thermal_base_class_unwrapped_is_classified_too() -> None:
    err = runner.classify_unexpected(ThermalControlError("GPU too hot"))
    assert err.kind == "thermal_timeout"


# --- 7: no permission for the GPU counters ----------------------------------------------------

def test_counter_permission_detected_by_the_query_preflight(tmp_path: Path, clean_env) -> None:
    ncu = fake_ncu(tmp_path / "bin", query_fails=True)
    job = _job(tmp_path, NCU_SPEC)
    assert runner.run_job(job, Channel(job, None), report=_ncu_report(ncu)) == 1
    manifest = read_manifest(job)
    err = manifest["error"]
    assert err["kind"] == "counter_permission"
    assert COUNTER_PERMISSION_MARK in err["message"]
    assert "NVreg_RestrictProfilingToAdminUsers=0" in err["hint"]
    assert "cupti backend" in err["hint"]
    assert manifest["gpu"] == {"index": 0, "name": "NVIDIA H200", "uuid": "GPU-aaaa",
                               "nvml_index": 0, "visible_devices": None}


def test_counter_permission_found_in_the_ncu_log_after_a_failed_profile(
        tmp_path: Path, clean_env, monkeypatch: pytest.MonkeyPatch) -> None:
    ncu = fake_ncu(tmp_path / "bin", query_fails=False, profile_fails=True)
    job = _job(tmp_path, NCU_SPEC)

    def collect(spec, registry, job_dir, backend, channel, _uuid=None, _ready=None,
                _measured=None):
        with open(job_dir / "worker.log", "ab") as log:  # ncu shares the worker's fds
            code = subprocess.run([str(ncu), "--metrics", "gpu__time_duration.sum", "python"],
                                  stdout=log, stderr=log).returncode
        raise RuntimeError(f"ncu exited with {code}")  # nsight-python's text may lack the mark

    monkeypatch.setattr(runner, "collect", collect)
    monkeypatch.setattr(runner, "_prepare_gpu_env", lambda gpu, env: None)
    assert runner.run_job(job, Channel(job, None), report=_ncu_report(ncu)) == 1
    err = read_manifest(job)["error"]
    assert err["kind"] == "counter_permission"
    assert "does not have permission" in err["message"]
    assert "cupti" in err["hint"]


def test_profiling_failed_with_the_mark_in_its_text_is_counter_permission() -> None:
    exc = ProfilingFailed(f"Nsight Compute profiling failed: PROFILING FAILED \nErrors:\n- "
                          f"{PERM_LINE}", "")
    assert classify_known(exc).kind == "counter_permission"
    assert classify_known(ProfilingFailed("other", "")) is None


def test_a_kernel_error_is_not_reclassified_by_old_log_text(tmp_path: Path) -> None:
    from profiling_worker.bundle.errors import KernelFailed

    job = tmp_path / "job"
    job.mkdir()
    (job / "worker.log").write_text(PERM_LINE)
    err = KernelFailed("kernel matmul raised", "fix the kernel")
    assert runner.classify_failure(err, job) is err


# --- the GPU the job ran on; CUDA_VISIBLE_DEVICES -----------------------------------------------

def test_manifest_records_the_gpu_of_spec_gpu_and_pins_cuda_visible_devices(
        tmp_path: Path, clean_env) -> None:
    ncu = fake_ncu(tmp_path / "bin", query_fails=False)
    job = _job(tmp_path, {**NCU_SPEC, "gpu": 1})
    manifest: dict = {"job_id": job.name, "started_at": "x"}
    runner.prepare(job, manifest, _ncu_report(ncu))
    assert manifest["gpu"] == {"index": 1, "name": "NVIDIA H200", "uuid": "GPU-bbbb",
                               "nvml_index": 1, "visible_devices": None}
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "GPU-bbbb"
    assert os.environ["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"
    assert os.environ["PATH"].split(os.pathsep)[0] == str(ncu.parent)
    path = os.environ["PATH"]  # a warm worker's next job: PATH does not grow per job
    runner.prepare(_job(tmp_path / "next", {**NCU_SPEC, "gpu": 1}), dict(manifest),
                   _ncu_report(ncu))
    assert os.environ["PATH"] == path


def test_cpu_job_records_no_gpu(tmp_path: Path, clean_env) -> None:
    job = _job(tmp_path, CPU_SPEC)
    assert runner.run_job(job, Channel(job, None)) == 0
    assert read_manifest(job)["gpu"] is None


# --- 6 and 8: old ncu, old libcupti -------------------------------------------------------------

def test_old_ncu_with_new_nsight_python_says_both_versions_and_fix() -> None:
    env = {"gpus": GPUS, "nsight_python": "1.1.1", "ncu_report": "2026.2.1",
           "ncu": {"path": "/opt/ncu/ncu", "version": "2025.3.1.0"}}
    ncu = choose_backends(env)["ncu"]
    assert not ncu.available
    assert "2025.3.1.0" in ncu.reason and "1.1.1" in ncu.reason
    assert "2026.2.1" in ncu.fix and "nsight-python==0.9.6" in ncu.fix


def test_probe_ncu_reads_the_version_of_a_fake_ncu(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    ncu = fake_ncu(tmp_path / "bin", version="2025.3.1.0")
    monkeypatch.setenv("PATH", str(ncu.parent))
    assert environment.probe_ncu() == {"path": str(ncu), "version": "2025.3.1.0"}


def test_old_libcupti_names_the_resolved_library_path_and_version() -> None:
    lib = "/venv/lib/python3.11/site-packages/nvidia/cuda_cupti/lib/libcupti.so.13"
    env = {"gpus": GPUS, "nsight_python": "1.1.1", "cupti_python": "13.4.0",
           "libcupti": [{"path": lib, "version": "13.0.85"}]}
    cupti = choose_backends(env)["cupti"]
    assert not cupti.available
    assert "13.0.85" in cupti.reason and lib in cupti.reason
    assert "nvidia-cuda-cupti>=13.4" in cupti.fix


def test_classify_known_names_disk_full_in_a_cause_chain() -> None:
    try:
        try:
            _enospc()
        except OSError as exc:
            raise RuntimeError("pyarrow could not write") from exc
    except RuntimeError as outer:
        err = classify_known(outer, "/data/results")
    assert err.kind == "disk_full" and "/data/results" in err.hint
    assert isinstance(err, WorkerError)


def test_a_size_larger_than_the_host_is_refused_before_profiling(tmp_path: Path,
                                                                   clean_env) -> None:
    """Issue 11, case 7: n = 10^12 used to profile and fail with torch's "Storage size
    calculation overflowed ... fix the kernel code"; the spec check names the config instead."""
    job = _job(tmp_path, {**CPU_SPEC, "configs": [{"n": 16}, {"n": 10**12}]})
    assert runner.run_job(job, Channel(job, None)) == 1
    err = read_manifest(job)["error"]
    assert err["kind"] == "spec_invalid"
    assert "configs[1]: kernel matmul at n=1000000000000 holds " in err["message"]
    assert "of memory available on the host" in err["message"]
    assert "choose smaller sizes" in err["message"]
    assert not (job / "tables" / "runs.parquet").exists()  # nothing was profiled
