"""End a finished worker process without the interpreter's teardown.

A worker that has written its bundle (manifest last, fsynced) has nothing left to do, yet a
normal exit then destroys every module it imported. On the H200 the bare nsight-python script of
job J1 spent 1.07-1.20 s (CUPTI) and 0.71-1.09 s (Nsight Compute) between its last line and its
exit, the worker with this module 0.14-0.16 s and 0.02-0.03 s after its manifest (device run
"h200 1202-s6run1", ``benchmarks/overhead.py``; docs/performance.md, "The worker's exit"):
time the job manager waits for the process to end.
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
    handlers (a user kernel file's, a library's), logging's flush and close, and stdout and
    stderr flushed. What is skipped is freeing the modules and the garbage
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
