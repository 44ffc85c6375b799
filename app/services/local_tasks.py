"""The processes of a sweep's tasks on this host (submitit's local executor), and their cancel.

A local task is three processes: submitit's controller (``submitit.local._local``, its pid is
the task's id), the task it starts (``submitit.core._submit``, which runs
:func:`profiling_worker.sweep.task.run_task`) and the worker that runs (``profiling_worker
run``). submitit's cancel is one SIGINT to the controller, which passes it to the task and
SIGKILLs the task a second later; a task that did not act on it in that second (still
starting, slow on a loaded machine, or ignoring SIGINT) is killed before it stops its worker,
and the worker runs on, orphaned, for its whole length (issue 41). Here each controller leads
its own process group (a new session), so a signal to the group reaches all three, orphans
included, and a group with a live process is a task that still runs. The cancel is a ladder,
sent to the group on every poll until the group is empty: SIGINT (submitit's cancel) for
:data:`INT_GRACE_S`, SIGTERM (the worker's handler ends its job ``cancelled``) for
:data:`TERM_GRACE_S` more, then SIGKILL. Linux only (``/proc``). No Streamlit here.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import submitit
from submitit.local.local import LocalJob

INT_GRACE_S = 10.0  # SIGINT alone this long after the cancel (submitit's own path)
TERM_GRACE_S = 20.0  # then SIGTERM this long (the worker writes its manifest), then SIGKILL
_LADDER = ((INT_GRACE_S, signal.SIGINT), (INT_GRACE_S + TERM_GRACE_S, signal.SIGTERM))
#: In the environment of every process of a local task (inherited by the task and the worker):
#: the submitit folder of its sweep. It tells the task's processes from a program that later got
#: the same process group id.
FOLDER_VARIABLE = "KPROF_SWEEP_SUBMITIT_DIR"


class GroupLocalExecutor(submitit.LocalExecutor):
    """submitit's :class:`~submitit.LocalExecutor` whose controllers each start a new session
    (process group id = the controller's pid = the task's id)."""

    def _submit_command(self, command: str) -> LocalJob[Any]:
        # submitit 1.5's LocalExecutor._submit_command and local.start_controller (without
        # its shell ``setup``, unused here), with start_new_session: submitit has no option
        # for it
        params = self.parameters
        ntasks = params.get("tasks_per_node", 1)
        visible, wanted = params.get("visible_gpus", ()), params.get("gpus_per_node", 0)
        gpus = range(wanted) if visible == () else visible[:wanted]
        env = {**os.environ, FOLDER_VARIABLE: str(self.folder),
               "SUBMITIT_EXECUTOR": "local", "SUBMITIT_LOCAL_COMMAND": command,
               "SUBMITIT_LOCAL_NTASKS": str(ntasks),
               "SUBMITIT_LOCAL_TIMEOUT_S": str(int(60 * params.get("timeout_min", 2.0))),
               "SUBMITIT_LOCAL_SIGNAL_DELAY_S": str(int(params.get("signal_delay_s", 30))),
               "SUBMITIT_LOCAL_NODEID": "0", "SUBMITIT_LOCAL_JOB_NUM_NODES": "1",
               "SUBMITIT_STDERR_TO_STDOUT": "1" if params.get("stderr_to_stdout") else "",
               "SUBMITIT_LOCAL_WITH_SHELL": "",
               "CUDA_VISIBLE_DEVICES": ",".join(str(k) for k in gpus)}
        process = subprocess.Popen([sys.executable, "-m", "submitit.local._local",
                                    str(self.folder)], env=env, start_new_session=True)
        return LocalJob(folder=self.folder, job_id=str(process.pid), process=process,
                        tasks=list(range(ntasks)))


def live_groups(folder: Path, ids: set[str]) -> set[str]:
    """Those of the local tasks ``ids`` (of the submitit folder ``folder``) that still have a
    live (not zombie) process: one in the task's process group whose environment has
    :data:`FOLDER_VARIABLE` = ``folder``, so that a group id reused by another program is never
    taken for the task."""
    mark = f"\0{FOLDER_VARIABLE}={folder}\0".encode()
    groups: set[str] = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            if fields[0] != "Z" and fields[2] in ids - groups \
                    and mark in b"\0" + (proc / "environ").read_bytes():
                groups.add(fields[2])
        except (OSError, IndexError):  # ended meanwhile, or another user's
            continue
    return groups


@dataclass
class CancelLadder:
    """The signals a cancel has sent to each local task's process group, and since when."""

    since: dict[str, float] = field(default_factory=dict)  # task id -> first cancel (monotonic)
    sent: dict[str, signal.Signals] = field(default_factory=dict)  # the last (strongest) sent

    def send(self, task_id: str, now: float | None = None) -> None:
        """Signal the group of the task ``task_id`` (a live one: see :func:`live_groups`) with
        the ladder's signal for the time since its first cancel (``now``: monotonic s)."""
        now = time.monotonic() if now is None else now
        elapsed = now - self.since.setdefault(task_id, now)
        sig = next((s for bound, s in _LADDER if elapsed < bound), signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):  # it ended meanwhile
            os.killpg(int(task_id), sig)
            self.sent[task_id] = sig

    def reason(self, task_id: str) -> str:
        """What it took to stop the task ("" when SIGINT did, or no cancel was sent)."""
        sig = self.sent.get(task_id)
        if sig == signal.SIGTERM:
            return f"stopped by SIGTERM: its processes outlived SIGINT for {INT_GRACE_S:.0f} s"
        if sig == signal.SIGKILL:
            return (f"killed (SIGKILL): its processes outlived SIGINT and SIGTERM for "
                    f"{INT_GRACE_S + TERM_GRACE_S:.0f} s")
        return ""
