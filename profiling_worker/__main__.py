"""``python -m profiling_worker run JOB_DIR | env | import SRC... --out DIR``.

nsight-python 0.9.x (launch mode) re-runs this file as a plain script under ncu, with the
same argv; the path fix below lets that copy import the package. That copy exits normally
(ncu's injection may still have work at its exit); every other command ends through
:func:`profiling_worker.job.quick_exit.exit_now`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script by nsight-python's launch mode
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from profiling_worker.cli import main  # noqa: E402
from profiling_worker.job.quick_exit import exit_now  # noqa: E402
from profiling_worker.bundle.schema.backends import LAUNCH_CHILD_ENV  # noqa: E402



def _main() -> int:
    try:
        return main(sys.argv[1:])
    except BrokenPipeError:  # stdout's reader went away (| head): stop quietly, as cat does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error
        return 1


if __name__ == "__main__":
    code = _main()
    if LAUNCH_CHILD_ENV not in os.environ:
        exit_now(code)
    sys.exit(code)
