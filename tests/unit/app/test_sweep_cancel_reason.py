"""A sweep's cancel reaches each task's worker as every cancel of the dashboard reaches a
worker: its reason left in the task's folder (the worker's job folder, and its reference
job's) before the signal (review, session 23: the panel's Cancel left none)."""

from __future__ import annotations

from pathlib import Path

from app.services import sweep_tasks as T
from app.services.sweep_watch import Sweep, SweepWatcher
from profiling_worker.bundle.schema import partial
from profiling_worker.sweep.task import REFERENCE_DIR


class _Queue:
    """The task queue's cancel, recorded (a real one signals processes or runs scancel)."""

    def __init__(self) -> None:
        self.cancelled: list[list[str]] = []

    def cancel(self, ids: list[str]) -> None:
        self.cancelled.append(list(ids))


def _task(tmp_path: Path, index: int, reference: bool) -> T.Task:
    folder = tmp_path / f"task-{index}"
    (folder / REFERENCE_DIR if reference else folder).mkdir(parents=True)
    return T.Task(index, f"task-{index}", (index,), [T.Attempt(folder, f"7_{index}")])


def test_each_live_tasks_worker_is_told_the_reason_once_before_its_signal(
        tmp_path: Path) -> None:
    queue = _Queue()
    tasks = [_task(tmp_path, 0, reference=True), _task(tmp_path, 1, reference=False),
             _task(tmp_path, 2, reference=False)]
    sweep = Sweep(None, None, queue, tasks, "")  # type: ignore[arg-type]
    sweep.cancel_reason = partial.SWEEP_CLI_CANCEL
    for _ in range(2):  # the watcher sends the cancel again on every poll
        SweepWatcher._send_cancel(sweep, ["7_0", "7_1"])  # task 2 ended: not live
    assert queue.cancelled == [["7_0", "7_1"]] * 2
    for folder in (tmp_path / "task-0", tmp_path / "task-0" / REFERENCE_DIR,
                   tmp_path / "task-1"):
        assert partial.cancel_reason(folder) == partial.SWEEP_CLI_CANCEL
    assert partial.cancel_reason(tmp_path / "task-2") == ""
    assert sweep.told == {tmp_path / "task-0", tmp_path / "task-1"}


def test_a_sweeps_cancel_is_the_users_unless_told_otherwise() -> None:
    assert Sweep.cancel_reason == partial.USER_CANCEL  # the panel's Cancel, a restart's resume
