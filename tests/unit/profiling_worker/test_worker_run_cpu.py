"""`python -m profiling_worker run` on the cpu backend: a real subprocess, a real bundle."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.events import parse_line
from profiling_worker.bundle.schema.manifest import read_manifest
from profiling_worker.bundle.schema.spec import (CPU_THREADS_FIX, MAX_CPU_THREADS,
                                                 whole_number_error)
from profiling_worker.bundle.writer import table_csv

REPO = Path(__file__).resolve().parents[3]


THREADS_KERNELS = REPO / "tests" / "fixtures" / "kernel_files_threads"


def run_worker(job: Path, spec: dict, env: dict | None = None) -> subprocess.CompletedProcess:
    job.mkdir(parents=True, exist_ok=True)
    (job / C.SPEC_FILE).write_text(json.dumps(spec))
    return subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(job)], cwd=REPO,
                          capture_output=True, text=True, timeout=300,
                          env=None if env is None else {**os.environ, **env})


@pytest.fixture(scope="module")
def done_job(tmp_path_factory):
    job = tmp_path_factory.mktemp("store") / "cpu-job"
    proc = run_worker(job, {"kernels": ["matmul", "fusion"], "configs": [{"n": 32}, {"n": 64}],
                            "runs": 3, "backend": "cpu"})
    return job, proc


def test_stdout_is_json_lines_only(done_job):
    _, proc = done_job
    events = [parse_line(line) for line in proc.stdout.splitlines()]
    assert proc.returncode == 0 and events and all(events)
    progress = [e for e in events if e["event"] == "progress" and e["stage"] == "profiling"]
    assert [e["done"] for e in progress] == list(range(1, 7))
    assert events[-1] == {**events[-1], "event": "result", "status": "done"}


def test_bundle_tables_and_manifest(done_job):
    job, _ = done_job
    manifest = read_manifest(job)
    assert manifest["status"] == "done"
    assert manifest["backend"]["measurement"] == "host wall-clock, not GPU, 1 torch thread"
    assert manifest["backend"]["cpu_threads"] == 1 and manifest["spec"]["cpu_threads"] == 1
    assert "tables/aggregated.parquet" in manifest["files"]
    # Parquet only (issue 40): each table's CSV is made from it when downloaded
    assert not [f for f in manifest["files"] if f.endswith(".csv")]
    assert not list((job / C.TABLES_DIR).glob("*.csv"))
    agg = pd.read_parquet(job / C.TABLES_DIR / "aggregated.parquet")
    csv = pd.read_csv(io.BytesIO(table_csv(job, C.TABLE_AGGREGATED) or b""))
    assert csv.columns.tolist() == agg.columns.tolist()
    assert csv[C.AVG].tolist() == agg[C.AVG].tolist()  # full float precision
    assert set(agg[C.ANNOTATION]) == {"fp32", "fp16", "bf16", "unfused", "fused"}
    assert set(agg[C.METRIC]) == {C.HOST_TIME} and (agg[C.NUM_RUNS] == 3).all()
    assert (agg[C.CI95_LOWER] <= agg[C.AVG]).all() and (agg[C.AVG] <= agg[C.CI95_UPPER]).all()
    work = pd.read_parquet(job / C.TABLES_DIR / "work.parquet")
    fp16 = work[(work[C.ANNOTATION] == "fp16") & (work["n"] == 64)]
    assert fp16[C.FLOPS].item() == 2 * 64**3 and fp16[C.BYTES].item() == 3 * 64 * 64 * 2


def test_bad_spec_fails_with_field_named_error(tmp_path):
    proc = run_worker(tmp_path / "bad", {"kernels": [], "configs": [{"n": -1}], "runs": 0,
                                         "backend": "cpu"})
    manifest = read_manifest(tmp_path / "bad")
    assert proc.returncode == 1 and manifest["status"] == "failed"
    assert manifest["error"]["kind"] == "spec_invalid"
    for field in ("kernels", "configs[0].n", "runs"):
        assert field in manifest["error"]["message"]


def test_gpu_backend_without_gpu_says_why_and_how(tmp_path):
    proc = run_worker(tmp_path / "ncu", {"kernels": ["matmul"], "configs": [{"n": 64}],
                                         "backend": "ncu"})
    error = read_manifest(tmp_path / "ncu")["error"]
    assert proc.returncode == 1 and error["kind"] == "backend_unavailable"
    assert error["hint"]


def test_missing_spec_is_usage_error(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(tmp_path)],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and parse_line(proc.stdout)["kind"] == "spec_missing"


def test_a_finished_result_is_never_overwritten_without_force(done_job):
    job, _ = done_job
    before = (job / C.TABLES_DIR / "runs.parquet").read_bytes()
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(job)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    error = parse_line(proc.stdout)
    assert proc.returncode == 2 and error["kind"] == "already_finished" and "--force" in error["hint"]
    assert (job / C.TABLES_DIR / "runs.parquet").read_bytes() == before


def test_cpu_backend_says_what_it_ignores(tmp_path):
    proc = run_worker(tmp_path / "ignored", {
        "kernels": ["matmul"], "annotations": ["fp32"], "configs": [{"n": 32}], "runs": 2,
        "backend": "cpu", "metrics": ["dram__bytes_read.sum"], "collectors": ["sm_clock"],
        "cache_control": "none", "replay_mode": "range"})
    warnings = read_manifest(tmp_path / "ignored")["warnings"]
    assert proc.returncode == 0
    assert any("ignored metrics: dram__bytes_read.sum" in w for w in warnings)
    assert any("ignored info collectors: sm_clock" in w for w in warnings)
    # options it does not apply, set to other than their defaults (thermal_mode left at auto)
    assert [w for w in warnings if "does not apply" in w] == [
        "the cpu backend does not apply cache_control 'none'; ignored",
        "the cpu backend does not apply replay_mode 'range'; ignored"]


def test_the_host_load_and_contention_while_timing_are_recorded_and_warned(done_job):
    """Host wall-clock includes waiting for a CPU: the job keeps the 1-minute load average
    before and after timing against the usable CPUs, and its threads' run-queue delay over the
    timing loop (backend.host_contention); it warns exactly when that delay passed the
    threshold, or, where the delay cannot be read, when the load exceeded the CPUs, and never
    when the loop ran too little CPU time to judge (test_cpu_contention.py tests the decision
    and a real contended job)."""
    import os

    from profiling_worker.backends.cpu import (CONTENTION_MIN_CPU_NS, CONTENTION_THRESHOLD,
                                               load_warning)

    job, _ = done_job
    manifest = read_manifest(job)
    load = manifest["backend"]["host_load"]
    assert load["cpus"] == len(os.sched_getaffinity(0))
    assert 0 <= load["before"] and 0 <= load["after"]
    contention = manifest["backend"]["host_contention"]
    assert contention["regions"] == 30 and contention["wall_ns"] > 0
    assert contention["judged"] == (contention["cpu_ns"] >= CONTENTION_MIN_CPU_NS)
    if not contention["judged"]:  # too short to judge (a few ms of CPU): no warning of either
        warned = False
        said = [w for w in manifest["warnings"]
                if "load average" in w or "x the timing loop's elapsed time" in w]
    elif contention["waiting_fraction"] is None:  # no schedstat: the load average decides
        warned = max(load["before"], load["after"]) > load["cpus"]
        said = [w for w in manifest["warnings"] if "load average" in w]
    else:
        warned = contention["waiting_fraction"] > CONTENTION_THRESHOLD
        said = [w for w in manifest["warnings"] if "x the timing loop's elapsed time" in w]
    assert bool(said) == warned, (load, contention, said)
    assert said == ([contention["warning"]] if warned else [])
    assert (contention.get("advice") is not None) == (contention["warning"] is not None)
    assert load_warning(2.0, 2) is None
    assert "load average was 5.3 on 2 usable CPUs" in load_warning(5.3, 2)


@pytest.mark.parametrize("asked", [None, 2])
def test_the_bodies_are_timed_with_the_specs_torch_threads(tmp_path, asked):
    """A cpu job times its bodies with ``cpu_threads`` torch threads, 1 unless the spec asks
    otherwise (torch's default, one a CPU, let a 64x64 matmul take milliseconds on a busy
    2-core host: profiling_worker/backends/cpu.py), read by torch.get_num_threads() inside the
    region (tests/fixtures/kernel_files_threads) whatever OMP_NUM_THREADS the worker inherited,
    and records them in the manifest and in what the durations measure."""
    log = tmp_path / "threads.log"
    spec = {"kernels": ["threads_seen"], "runs": 3, "warmup": 1, "backend": "cpu",
            **({"cpu_threads": asked} if asked else {})}
    proc = run_worker(tmp_path / "job", spec, {"KPROF_KERNEL_DIRS": str(THREADS_KERNELS),
                                               "KPROF_THREADS_LOG": str(log),
                                               "OMP_NUM_THREADS": "3"})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    threads = asked or 1
    assert log.read_text().split() == [str(threads)] * 4  # the warm-up call and 3 runs
    manifest = read_manifest(tmp_path / "job")
    assert manifest["backend"]["cpu_threads"] == threads
    assert manifest["backend"]["measurement"].endswith(
        f", {threads} torch thread{'s' if threads > 1 else ''}")


def test_more_threads_than_cpus_is_warned(tmp_path):
    """Threads beyond the usable CPUs take turns on them and wait for each other at every
    barrier: the job says so and how to fix it."""
    cpus = len(os.sched_getaffinity(0))
    proc = run_worker(tmp_path / "job", {"kernels": ["matmul"], "annotations": ["fp32"],
                                         "configs": [{"n": 16}], "runs": 2, "backend": "cpu",
                                         "cpu_threads": cpus + 1})
    assert proc.returncode == 0
    warnings = read_manifest(tmp_path / "job")["warnings"]
    assert [w for w in warnings if "torch threads on" in w] == [
        f"timed with {cpus + 1} torch threads on {cpus} usable CPU{'s' if cpus > 1 else ''}: the "
        "threads take turns on the CPUs and wait for each other, so these host wall-clock times "
        f"include that waiting; set cpu_threads to at most {cpus}, or 1 (the default)"]


def test_a_bad_thread_count_is_refused_naming_the_field_and_the_fix(tmp_path):
    proc = run_worker(tmp_path / "bad", {"kernels": ["matmul"], "configs": [{"n": 16}],
                                         "backend": "cpu", "cpu_threads": 0})
    error = read_manifest(tmp_path / "bad")["error"]
    assert proc.returncode == 1 and error["kind"] == "spec_invalid"
    assert error["message"] == (
        f"cpu_threads: {whole_number_error(0, 1, MAX_CPU_THREADS)} ({CPU_THREADS_FIX})")


def test_a_gpu_backend_says_it_ignores_cpu_threads():
    from profiling_worker.bundle.schema.spec import validate_spec
    from profiling_worker.job.runner import _ignored_by_backend

    raw = {"kernels": ["matmul"], "configs": [{"n": 16}], "backend": "cupti", "cpu_threads": 2}
    assert _ignored_by_backend(validate_spec(raw), raw) == [
        "the cupti backend does not apply cpu_threads 2 (the cpu backend's torch threads); "
        "ignored"]
    assert _ignored_by_backend(validate_spec({**raw, "cpu_threads": 1}), raw) == []


def test_the_cpu_backend_says_it_ignores_every_gpu_only_field():
    """The rule the form greys fields out by (backends.unused) is the worker's note too: a CLI
    spec's thermal limits and NVML period on the cpu backend were ignored without a word."""
    from profiling_worker.bundle.schema.spec import validate_spec
    from profiling_worker.job.runner import _ignored_by_backend

    raw = {"kernels": ["matmul"], "configs": [{"n": 16}], "backend": "cpu", "thermal_wait": 5,
           "thermal_cont": 30, "nvml_interval_ms": 10, "clock_control": "base"}
    assert _ignored_by_backend(validate_spec(raw), raw) == [
        "the cpu backend does not apply clock_control 'base'; ignored",
        "the cpu backend does not apply thermal_wait 5; ignored",
        "the cpu backend does not apply thermal_cont 30; ignored",
        "the cpu backend does not apply nvml_interval_ms 10; ignored"]
