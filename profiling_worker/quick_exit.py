"""End a finished worker process without the interpreter's teardown.

A worker that has written its bundle (manifest last, fsynced) has nothing left to do, yet a
normal exit then destroys every module it imported: with torch, pandas, pyarrow and scipy
loaded that took 0.3-0.7 s on this project's CPU machine (``farm-bench``, the same imports
with and without it: wall 0.73x), time the job manager waits for the process to end. The bare
nsight-python script the worker is measured against pays it too (issue 24).
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
import threading


def _other_threads_running() -> bool:
    """A non-daemon thread that Python's own exit would wait for."""
    main = threading.main_thread()
    return any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate())


def exit_now(code: int) -> None:
    """Exit with ``code`` after what a normal exit does for the outside world: the ``atexit``
    handlers (a user kernel's, torch's, CUPTI's Python side), logging's flush and close, and
    stdout and stderr flushed. What is skipped is freeing the modules and the garbage
    collector's last pass, which write nothing.

    Returns (without exiting) while a non-daemon thread still runs: the caller then exits
    normally, which waits for it.
    """
    if _other_threads_running():
        return
    atexit._run_exitfuncs()  # noqa: SLF001 (the documented handlers, run as a normal exit would)
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can be said there
            pass
    os._exit(code)
