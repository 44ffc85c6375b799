"""A SIGINT to a sweep task (``profiling_worker.sweep.task.run_task``) keeps the configs its
worker measured before it: ``scancel --signal=INT`` signals every process of the task, and
submitit's local cancel passes a SIGINT to the task alone. Before, the task's KeyboardInterrupt
made :mod:`subprocess` SIGKILL the worker 0.25 s later, while it wrote its bundle (or before it
heard of any cancel), and the task kept nothing. A real task process runs real cpu workers; the
test waits for the worker's progress events, never a fixed time."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from profiling_worker.bundle.schema import columns as C
from profiling_worker.sweep.task import REFERENCE_DIR, TASK_FILE
from tests.unit.profiling_worker.test_cancel_sigint import (BOUND_S, REPO, SPEC, _assert_partial,
                                                             _until_config)

#: The task's entry point as submitit calls it, in a Python whose SIGINT has its default action
#: (a pytest started as a background job of a script has it ignored, and a child inherits that).
_TASK = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
         "from profiling_worker.sweep.task import run_task; print(run_task(sys.argv[1]))")


def _start_task(attempt: Path) -> subprocess.Popen[bytes]:
    """``run_task(attempt)`` in a session of its own (its pid is its process group's id, as a
    local task's controller leads its group)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-c", _TASK, str(attempt)], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)


def _spec(folder: Path, spec: dict) -> Path:
    folder.mkdir(parents=True)
    (folder / C.SPEC_FILE).write_text(json.dumps(spec), encoding="utf-8")
    return folder


def _signal(task: subprocess.Popen[bytes], to: str) -> None:
    """SIGINT to the task alone (submitit's local controller) or to its process group
    (``scancel --signal=INT``, the local cancel's ladder)."""
    if to == "task":
        task.send_signal(signal.SIGINT)
    else:
        os.killpg(task.pid, signal.SIGINT)


def _kill(task: subprocess.Popen[bytes]) -> None:
    """SIGKILL what a failed test left of the task and its worker (one process group)."""
    if task.poll() is None:
        os.killpg(task.pid, signal.SIGKILL)
        task.wait()


@pytest.mark.parametrize("to", ["task", "group"])
def test_a_sigint_to_a_sweep_task_keeps_the_configs_its_worker_measured(
        tmp_path: Path, to: str) -> None:
    attempt = _spec(tmp_path / "a0", SPEC)
    task = _start_task(attempt)
    try:
        _until_config(task, attempt, 1)
        _signal(task, to)
        out, err = task.communicate(timeout=BOUND_S)
        assert task.returncode == 0, err.decode()  # the task returned, its worker's code in it
    finally:
        _kill(task)
    assert "'returncode': 1" in out.decode()  # the worker ended by itself: cancelled, not done
    _assert_partial(attempt, "SIGINT")
    assert json.loads((attempt / TASK_FILE).read_text())["pid"] == task.pid


def test_a_sigint_during_the_reference_kernel_starts_no_configs(tmp_path: Path) -> None:
    """A SIGINT while the reference kernel runs cancels it (its configs measured kept) and the
    task's configs never start: the task ends with KeyboardInterrupt, as before the fix."""
    attempt = _spec(tmp_path / "a0", {**SPEC, "configs": [{"n": 8}]})
    reference = _spec(attempt / REFERENCE_DIR, SPEC)
    task = _start_task(attempt)
    try:
        _until_config(task, reference, 1)
        _signal(task, "task")
        _, err = task.communicate(timeout=BOUND_S)
    finally:
        _kill(task)
    assert task.returncode != 0 and "KeyboardInterrupt" in err.decode()
    _assert_partial(reference, "SIGINT")
    assert not (attempt / C.EVENTS_FILE).exists() and not (attempt / C.MANIFEST_FILE).exists()
