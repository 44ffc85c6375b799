"""`python -m profiling_worker run` on the job folders issue 26 found broken: each ends within
10 s in a clear state - exit 1 and a ``failed`` manifest whose error names the problem, with no
Python traceback in it - never "internal: unexpected error" or a raw traceback."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import read_manifest
from tests.scenarios import SCENARIOS

REPO = Path(__file__).resolve().parents[3]
GOOD = {"kernels": ["matmul"], "configs": [{"n": 16}], "runs": 1, "backend": "cpu", "warmup": 0}


def _run(job: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(job)], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    return proc, time.monotonic() - start


def _spec_bytes(job: Path, data: bytes) -> Path:
    job.mkdir(parents=True)
    (job / C.SPEC_FILE).write_bytes(data)
    return job


CASES = {
    # read (json.loads tells UTF-16 by its BOM): the error is the field's, not the encoding's
    "utf16_bom": (json.dumps({**GOOD, "runs": "three"}).encode("utf-16"), "runs"),
    "deep_brackets": (b"[" * 100_000, "nested too deeply"),
    "digits_5000": (json.dumps({**GOOD, "configs": [{"n": 0}]}).replace('"n": 0', '"n": ' + "9" * 5000).encode(), "not valid JSON"),
    "not_utf8": (b'{"kernels": ["\xff\xfe\xfa"]}', "not UTF-8 text"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_broken_spec_file_is_a_named_spec_error(tmp_path, case) -> None:
    data, message = CASES[case]  # before: utf16, brackets, digits ended "internal"
    proc, took = _run(_spec_bytes(tmp_path / case, data))
    manifest = read_manifest(tmp_path / case)
    assert took < 10
    assert proc.returncode == 1 and manifest["status"] == "failed"
    error = manifest["error"]
    assert error["kind"] == "spec_invalid" and message in error["message"], error
    assert "Traceback" not in json.dumps(error)


def test_a_field_error_has_no_traceback_in_the_job_error(tmp_path) -> None:
    """Before: the message named the field, and the log tail carried the SpecInvalid
    traceback (165 of 200 fuzzed specs)."""
    job = _spec_bytes(tmp_path / "bad", json.dumps({**GOOD, "runs": "three"}).encode())
    proc, _ = _run(job)
    error = read_manifest(job)["error"]
    assert proc.returncode == 1 and "runs" in error["message"]
    assert "Traceback" not in json.dumps(error)


def test_an_unknown_kernel_without_configs_is_its_one_error(tmp_path) -> None:
    """Before: "configs: no configs (sizes) given" came with it, a knock-on (the configs are
    the kernel's defaults). The failed manifest names the worker that ran it (a job run from
    a shell: its owner)."""
    job = _spec_bytes(tmp_path / "unknown", json.dumps({"kernels": ["nope"],
                                                        "backend": "cpu"}).encode())
    proc, _ = _run(job)
    manifest = read_manifest(job)
    assert proc.returncode == 1 and "unknown kernel(s): nope" in manifest["error"]["message"]
    assert "configs" not in manifest["error"]["message"], manifest["error"]
    assert manifest["worker"]["process"] == "worker CLI"


@pytest.mark.parametrize("entry, make, says", [
    (C.TABLES_DIR, lambda p: p.write_text("x"), "tables is a file, not a folder"),
    (C.NSIGHT_DIR, lambda p: p.write_text("x"), "nsight is a file, not a folder"),
    (C.LOG_FILE, lambda p: p.mkdir(), "worker.log is a folder"),
    (C.EVENTS_FILE, lambda p: p.mkdir(), "events.jsonl is a folder"),
])
def test_a_job_folder_entry_of_the_wrong_kind_is_named(tmp_path, entry, make, says) -> None:
    job = _spec_bytes(tmp_path / "job", json.dumps(GOOD).encode())
    make(job / entry)
    proc, took = _run(job)
    error = read_manifest(job)["error"]
    assert took < 10 and proc.returncode == 1 and error["kind"] == "job_folder"
    assert says in error["message"] and "remove or rename" in error["hint"]
    assert json.loads(proc.stdout.splitlines()[-1])["kind"] == "job_folder"
    assert "Traceback" not in proc.stdout + proc.stderr


def test_manifest_json_a_folder_still_ends_with_an_error_event(tmp_path) -> None:
    job = _spec_bytes(tmp_path / "job", json.dumps(GOOD).encode())
    (job / C.MANIFEST_FILE).mkdir()
    proc, took = _run(job)
    event = json.loads(proc.stdout.splitlines()[-1])
    assert took < 10 and proc.returncode == 1
    assert event["kind"] == "job_folder" and "manifest.json is a folder" in event["message"]
    assert "Traceback" not in proc.stderr


def test_a_reader_that_leaves_early_is_not_a_report_that_cannot_be_read() -> None:
    """`python -m profiling_worker rules BUNDLE | head -1` (a new user's): the reader closing
    the pipe said "the report cannot be read (BrokenPipeError …)". It stops quietly now."""
    proc = subprocess.Popen([sys.executable, "-m", "profiling_worker", "rules",
                             str(SCENARIOS / "h200-ncu-matmul-rules")], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 1
    assert "cannot be read" not in err and "Traceback" not in err, err
