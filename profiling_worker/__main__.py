"""``python -m profiling_worker run JOB_DIR | env | import SRC... --out DIR``.

nsight-python 0.9.x (launch mode) re-runs this file as a plain script under ncu, with the
same argv; the path fix below lets that copy import the package.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script by nsight-python's launch mode
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from profiling_worker.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
