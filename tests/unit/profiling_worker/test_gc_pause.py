"""A cold worker pauses Python's garbage collector while it imports and turns it back on,
with start-up's objects frozen, before any kernel body runs (``profiling_worker/job/
gc_pause.py``, issue 40): a real ``python -m profiling_worker run`` on the cpu backend with a
user kernel that writes what the collector's state is while the job measures it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import read_manifest
from profiling_worker.backends import gc_pause

REPO = Path(__file__).resolve().parents[3]
KERNEL = '''
import gc, json, os
from profiling_worker.catalog.user import kernel


@kernel(id="gc_probe", parameters=("n",), annotations=("body",), default_configs=[{"n": 1}],
        dtype="fp32", title="records the collector's state")
def gc_probe(n, *, annotate, device):
    with open(os.environ["GC_PROBE_OUT"], "a") as fh:
        fh.write(json.dumps([gc.isenabled(), gc.get_freeze_count()]) + "\\n")
    with annotate("body"):
        pass
'''


def _run_job(tmp_path: Path, setting: str | None) -> list[list[object]]:
    """Run a 2-run cpu job of ``gc_probe`` in a cold worker; the states its body recorded."""
    kernels, job, out = tmp_path / "kernels", tmp_path / "job", tmp_path / "states.jsonl"
    kernels.mkdir()
    job.mkdir()
    (kernels / "gc_probe.py").write_text(KERNEL, encoding="utf-8")
    (job / C.SPEC_FILE).write_text(json.dumps(
        {"kernels": ["gc_probe"], "annotations": ["body"], "configs": [{"n": 1}], "runs": 2,
         "backend": "cpu", "warmup": 1}), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO), "KPROF_KERNEL_DIRS": str(kernels),
           "GC_PROBE_OUT": str(out)}
    env.pop(gc_pause.ENV, None)
    if setting is not None:
        env[gc_pause.ENV] = setting
    subprocess.run([sys.executable, "-m", "profiling_worker", "run", str(job)], cwd=REPO,
                   env=env, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   timeout=300)
    assert read_manifest(job)["status"] == "done", (job / C.LOG_FILE).read_text()
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def test_collector_on_and_startup_frozen_while_measuring(tmp_path: Path) -> None:
    states = _run_job(tmp_path, None)
    assert len(states) == 3  # the warm-up call and the two runs
    assert all(enabled for enabled, _ in states)
    assert all(frozen > 10_000 for _, frozen in states)  # pandas, pyarrow, torch, the worker


def test_setting_zero_leaves_the_collector_alone(tmp_path: Path) -> None:
    states = _run_job(tmp_path, "0")
    assert all(enabled and frozen == 0 for enabled, frozen in states)


@pytest.mark.parametrize("setting", [None, "1"])
def test_resume_is_idempotent(setting: str | None) -> None:
    """pause() then resume() twice in a child interpreter: off, then on with one freeze."""
    code = ("import gc; from profiling_worker.backends import gc_pause as g; g.pause(); "
            "off = gc.isenabled(); g.resume(); n = gc.get_freeze_count(); g.resume(); "
            "print(off, gc.isenabled(), n > 0, gc.get_freeze_count() == n)")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop(gc_pause.ENV, None)
    if setting is not None:
        env[gc_pause.ENV] = setting
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True, timeout=60).stdout.split()
    assert out == ["False", "True", "True", "True"]
