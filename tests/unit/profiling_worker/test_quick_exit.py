"""A finished worker exits without the interpreter's teardown and loses nothing by it:
real processes, their output and files read back."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import read_manifest

REPO = Path(__file__).resolve().parents[3]


def _python(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=REPO,
                          capture_output=True, text=True, timeout=120, env={
                              "PYTHONPATH": str(REPO), "OUT": str(tmp_path), "PATH": "/usr/bin:/bin"})


def test_exit_keeps_the_code_atexit_handlers_logging_and_buffered_output(tmp_path):
    proc = _python("""
        import atexit, logging, logging.handlers, os, pathlib
        from profiling_worker.job.quick_exit import exit_now
        out = pathlib.Path(os.environ["OUT"])
        atexit.register(lambda: (out / "atexit").write_text("ran"))
        target = logging.FileHandler(out / "log")
        logging.getLogger().addHandler(logging.handlers.MemoryHandler(1000, target=target))
        logging.getLogger().warning("kept until shutdown")
        print("no newline, block-buffered", end="")
        exit_now(3)
        print("never")
    """, tmp_path)
    assert proc.returncode == 3
    assert proc.stdout == "no newline, block-buffered"
    assert (tmp_path / "atexit").read_text() == "ran"
    assert (tmp_path / "log").read_text() == "kept until shutdown\n"


def test_a_running_thread_is_waited_for_by_a_normal_exit(tmp_path):
    proc = _python("""
        import os, pathlib, sys, threading, time
        from profiling_worker.job.quick_exit import exit_now
        out = pathlib.Path(os.environ["OUT"])
        threading.Thread(target=lambda: (time.sleep(0.3), (out / "thread").write_text("done"))
                         ).start()
        exit_now(0)
        print("returned")
        sys.exit(4)
    """, tmp_path)
    assert (proc.returncode, proc.stdout) == (4, "returned\n")
    assert (tmp_path / "thread").read_text() == "done"


def test_a_worker_run_ends_with_its_bundle_log_and_a_kernel_files_atexit_handler(tmp_path):
    kernels = tmp_path / "kernels"
    kernels.mkdir()
    (kernels / "with_atexit.py").write_text(textwrap.dedent(f"""
        import atexit, pathlib
        from profiling_worker.catalog.user import kernel
        atexit.register(lambda: pathlib.Path({str(tmp_path / "kernel-atexit")!r}).write_text("ran"))

        @kernel(id="scale_atexit", parameters=("n",), annotations=("x*2",),
                default_configs=[{{"n": 64}}])
        def scale(n, *, annotate, device):
            import torch

            x = torch.ones(n, device=device)
            with annotate("x*2"):
                x * 2
    """))
    job = tmp_path / "job"
    job.mkdir()
    (job / C.SPEC_FILE).write_text(json.dumps({"kernels": ["scale_atexit"],
                                               "configs": [{"n": 64}], "runs": 3,
                                               "backend": "cpu"}))
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(job)], cwd=REPO,
                          capture_output=True, text=True, timeout=300,
                          env={"KPROF_KERNEL_DIRS": str(kernels), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.splitlines()[-1])["status"] == "done"
    manifest = read_manifest(job)
    assert manifest["status"] == "done"
    assert all((job / name).is_file() for name in manifest["files"])
    assert (tmp_path / "kernel-atexit").read_text() == "ran"
