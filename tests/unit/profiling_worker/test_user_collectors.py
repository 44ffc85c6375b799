"""User info collectors (issue 36): a real user file of ONCE and RUN collectors
(tests/fixtures/collector_files), loaded like user kernel files and called by the worker around
each run on the cpu backend; a collector that raises or hangs is named and the job finishes."""

import json
import platform
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from profiling_worker.backends import cpu
from profiling_worker.catalog.user_collectors import CollectorRun, bind, collect
from profiling_worker.catalog.registry import load_registry, make_body
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import read_manifest
from profiling_worker.bundle.schema.spec import COLLECTORS, SpecInvalid, validate_spec

REPO = Path(__file__).resolve().parents[3]
FILES = REPO / "tests" / "fixtures" / "collector_files"
NAMES = ["python_version", "worker_max_rss", "unix_time", "fails_on_large", "hangs"]


def test_user_file_collectors_are_loaded_with_scope_unit_and_source():
    registry = load_registry([str(FILES)])
    assert list(registry.collectors) == NAMES
    described = {c["name"]: c for c in registry.describe()["collectors"]}
    assert described["python_version"]["scope"] == "once"
    assert described["worker_max_rss"] == {"name": "worker_max_rss", "scope": "run",
                                           "unit": "MiB", "timeout_s": 2.0,
                                           "source": "host_collectors.py"}
    assert described["hangs"]["timeout_s"] == 0.2
    assert registry.errors == []


def test_a_user_collector_may_not_take_a_builtin_name(tmp_path):
    (tmp_path / "clash.py").write_text(
        "from profiling_worker.catalog.user_collectors import collect\n"
        "@collect(scope='run')\ndef sm_clock(*c):\n    return 1.0\n")
    registry = load_registry([str(tmp_path)])
    assert "sm_clock" in COLLECTORS and registry.collectors == {}
    assert registry.errors == [{"file": "clash.py",
                                "error": "collector 'sm_clock' is a built-in collector"}]


def test_config_and_annotation_scopes_are_refused_at_load(tmp_path):
    (tmp_path / "scoped.py").write_text(
        "def per_config(*c):\n    return 1\n"
        "per_config._nsight_collector_scope = 'config'\n")
    registry = load_registry([str(tmp_path)])
    assert "scope CONFIG is not run by the worker; use ONCE or RUN" in registry.errors[0]["error"]
    with pytest.raises(ValueError, match="use 'once' or 'run'"):
        collect(scope="annotation")


def test_binding_follows_nsight_python():
    def two(a, b):
        return a

    def star(*c):
        return c

    assert bind(two, (1, 2, 3)) == (1, 2) and bind(star, (1, 2, 3)) == (1, 2, 3)
    assert bind(lambda: 0, (1,)) == ()


def test_spec_names_builtin_and_known_user_collectors():
    raw = {"kernels": ["matmul"], "configs": [{"n": 8}], "backend": "cpu",
           "collectors": ["sm_clock", "unix_time"]}
    assert validate_spec(raw, known_collectors={"unix_time"}).collectors == ("sm_clock",
                                                                             "unix_time")
    assert validate_spec(raw).collectors == ("sm_clock", "unix_time")  # the worker checks
    with pytest.raises(SpecInvalid, match="unknown collector.*unix_time.*user collectors: other"):
        validate_spec(raw, known_collectors={"other"})


def test_cpu_backend_calls_run_collectors_before_each_run_and_names_the_faulty():
    registry = load_registry([str(FILES)])
    spec = validate_spec({"kernels": ["matmul"], "configs": [{"n": 32}, {"n": 64}],
                          "annotations": ["fp32"], "backend": "cpu", "runs": 3,
                          "collectors": NAMES}, registry.kernels,
                         known_collectors=registry.collectors)
    t0 = time.time()
    collection = cpu.collect(spec, lambda k, timed: make_body(registry, k, ("fp32",), "cpu", timed),
                             lambda *a, **k: None, registry.user_collectors(spec.collectors))
    table = collection.collectors
    assert table is not None and list(table.columns) == [C.CONFIG, "n", C.RUN, C.COLLECTOR,
                                                         C.VALUE, C.UNIT]
    per = {name: g.sort_values([C.CONFIG, C.RUN]) for name, g in table.groupby(C.COLLECTOR)}
    assert set(per) == set(NAMES[1:])  # the ONCE value goes to the manifest
    stamps = per["unix_time"]
    assert len(stamps) == 6 and stamps[C.VALUE].is_monotonic_increasing
    assert t0 <= stamps[C.VALUE].min() and (stamps[C.UNIT] == "s").all()
    assert (per["worker_max_rss"][C.VALUE] > 0).all()
    broken = per["fails_on_large"]
    assert broken[broken["n"] == 32][C.VALUE].tolist() == [1.0] * 3
    assert broken[broken["n"] == 64][C.VALUE].isna().all()
    assert per["hangs"][C.VALUE].isna().all() and len(per["hangs"]) == 6
    info = {c["name"]: c for c in collection.backend_info["user_collectors"]}
    assert info["python_version"]["value"] == platform.python_version()
    assert info["python_version"]["error"] is None
    assert info["fails_on_large"]["error"] == "raised ValueError: cannot read n=64"
    assert info["hangs"]["error"].startswith("did not return within 0.2 s")
    warned = [w for w in collection.warnings if w.startswith("info collector")]
    assert len(warned) == 2 and any("hangs (host_collectors.py, RUN)" in w for w in warned)
    launches = collection.launches
    assert len(launches) == 6  # every run was timed: no collector took the job down


def test_a_hanging_collector_is_waited_for_once():
    slow = collect(lambda: time.sleep(30), scope="once", timeout_s=0.1)
    slow.__name__ = "slow"
    from profiling_worker.catalog.user_collectors import UserCollector

    run = CollectorRun([UserCollector("slow", "once", "", 0.1, "f.py", slow)])
    t0 = time.perf_counter()
    run.value_once(run.collectors[0])
    run.value_once(run.collectors[0])
    assert time.perf_counter() - t0 < 5  # the second call is skipped, not waited for
    assert run.report()[0]["value"] is None and "0.1 s" in run.report()[0]["error"]


def test_worker_job_writes_user_collectors_to_the_bundle(tmp_path):
    job = tmp_path / "collectors-job"
    job.mkdir()
    (job / C.SPEC_FILE).write_text(json.dumps({
        "kernels": ["matmul"], "annotations": ["fp32"], "configs": [{"n": 32}], "runs": 2,
        "backend": "cpu", "collectors": ["python_version", "unix_time", "sm_clock"]}))
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(job)], cwd=REPO,
                          env={"KPROF_KERNEL_DIRS": str(FILES), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=300)
    manifest = read_manifest(job)
    assert proc.returncode == 0, manifest.get("error")
    table = pd.read_parquet(job / C.TABLES_DIR / f"{C.TABLE_COLLECTORS}.parquet")
    assert table[C.COLLECTOR].tolist() == ["unix_time", "unix_time"]
    assert table[C.RUN].tolist() == [0, 1]
    entries = manifest["backend"]["user_collectors"]
    assert [e["name"] for e in entries] == ["python_version", "unix_time"]
    # the built-in NVML collector has no GPU here: said, and the user ones still ran
    assert any("ignored info collectors: sm_clock" in w for w in manifest["warnings"])


def test_worker_unknown_collector_is_refused_naming_the_user_ones(tmp_path):
    job = tmp_path / "unknown"
    job.mkdir()
    (job / C.SPEC_FILE).write_text(json.dumps({
        "kernels": ["matmul"], "configs": [{"n": 8}], "backend": "cpu",
        "collectors": ["no_such"]}))
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(job)], cwd=REPO,
                          env={"KPROF_KERNEL_DIRS": str(FILES), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=300)
    error = read_manifest(job)["error"]
    assert proc.returncode == 1 and error["kind"] == "spec_invalid"
    assert "no_such" in error["message"] and "unix_time" in error["message"]
