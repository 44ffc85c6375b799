"""User kernel folders: declarations load, a broken file is reported, a user kernel runs."""

import json
import os
import subprocess
import sys
from pathlib import Path

from profiling_worker.catalog.registry import load_registry
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import read_manifest

REPO = Path(__file__).resolve().parents[3]
FILES = REPO / "tests" / "fixtures" / "kernel_files"
EXAMPLES = REPO / "examples" / "kernels"


def test_broken_file_is_listed_and_others_load():
    reg = load_registry([str(FILES)])
    assert "user_scale3" in reg.kernels and "matmul" in reg.kernels
    assert reg.errors == [{"file": "broken_import.py",
                           "error": "ModuleNotFoundError: No module named "
                                    "'a_module_that_does_not_exist'"}]


def test_shipped_examples_declare_their_kernels():
    described = {k["id"]: k for k in load_registry([str(EXAMPLES)]).describe()["kernels"]}
    assert described["triton_vector_add"]["parameters"] == ["n", "block_size"]
    assert described["cuda_core_saxpy"]["annotations"] == ["torch", "cuda_cpp"]
    assert described["linear_backward"]["source"] == "torch_linear_backward.py"


def test_user_kernel_runs_on_the_cpu_backend(tmp_path):
    job = tmp_path / "user-job"
    job.mkdir()
    (job / C.SPEC_FILE).write_text(json.dumps({
        "kernels": ["user_scale3", "linear_backward"], "configs": [{"n": 2048}], "runs": 2,
        "backend": "cpu"}))
    env = {"KPROF_KERNEL_DIRS": f"{FILES}:{EXAMPLES}", "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(job)], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=120)
    manifest = read_manifest(job)
    # linear_backward takes (batch, features): the spec is refused, naming both kernels' needs
    assert proc.returncode == 1 and manifest["error"]["kind"] == "spec_invalid"
    assert "linear_backward" in manifest["error"]["message"]
    (job / C.SPEC_FILE).write_text(json.dumps({
        "kernels": ["user_scale3"], "configs": [{"n": 2048}], "runs": 2, "backend": "cpu"}))
    for f in (C.MANIFEST_FILE, C.EVENTS_FILE):
        (job / f).unlink()
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(job)], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=120)
    manifest = read_manifest(job)
    assert proc.returncode == 0, manifest.get("error")
    errors = manifest["kernel_files"]["errors"]
    assert [e["file"] for e in errors] == ["broken_import.py"]
    import pandas as pd

    work = pd.read_parquet(job / C.TABLES_DIR / "work.parquet")
    assert work[C.ANNOTATION].tolist() == ["x*3"] and work[C.BYTES].tolist() == [8.0 * 2048]


def test_exception_inside_a_kernel_body_names_kernel_and_config(tmp_path):
    job = tmp_path / "raises"
    job.mkdir()
    (job / C.SPEC_FILE).write_text(json.dumps({"kernels": ["raises"], "configs": [{"n": 8}],
                                               "runs": 2, "backend": "cpu"}))
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(job)], cwd=REPO,
                          env={"KPROF_KERNEL_DIRS": str(FILES), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=120)
    error = read_manifest(job)["error"]
    assert proc.returncode == 1 and error["kind"] == "kernel_failed"
    assert "raises" in error["message"] and "at config n=8 " in error["message"]  # as labelled
    assert "bad index in my kernel" in error["message"]
    assert "ValueError" in (job / C.LOG_FILE).read_text()  # the traceback is in the log


KERNEL_FILE = '''from pathlib import Path
from profiling_worker.catalog.user import kernel

Path(__file__).with_suffix(".ran").open("a").write("x")


@kernel(id="{kid}", parameters=("n",), annotations=("a",), default_configs=[{{"n": 4}}])
def k(n, *, annotate, device):
    with annotate("a"):
        pass
'''


def test_an_unchanged_file_runs_once_per_process_and_an_edited_one_again(tmp_path):
    """A warm worker loads the kernel folders for every job: a file whose bytes did not change
    is not executed again (its declarations are kept), an edited one is, even when its size
    and time stamp did not change."""
    source = tmp_path / "mine.py"
    ran = tmp_path / "mine.ran"
    source.write_text(KERNEL_FILE.format(kid="mine_a"))
    for _ in range(3):
        assert "mine_a" in load_registry([str(tmp_path)]).kernels
    assert ran.read_text() == "x"
    stat = source.stat()
    source.write_text(KERNEL_FILE.format(kid="mine_b"))  # same size
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    kernels = load_registry([str(tmp_path)]).kernels
    assert "mine_b" in kernels and "mine_a" not in kernels
    assert ran.read_text() == "xx"
