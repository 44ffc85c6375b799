"""Where the app reads and writes: results dir, bundled (read-only) results, worker interpreter.

All values come from the environment each time they are asked for, so tests can point them at a
temporary directory with ``monkeypatch.setenv`` before the app runs.

- ``KPROF_RESULTS_DIR``: job bundles written by this server (default ``./results``).
- ``KPROF_BUNDLED_DIR``: read-only bundles shipped with the app (default ``app/bundled``).
- ``KPROF_WORKER_PYTHON``: interpreter that runs ``-m profiling_worker`` (default: the app's own).
- ``KPROF_WARM_WORKER``: ``1`` (default) keeps a warm worker per GPU for CUPTI and cpu jobs;
  ``0`` starts a fresh worker process for every job.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: The repository (or site-packages) directory holding both ``app`` and ``profiling_worker``.
PACKAGE_ROOT = Path(__file__).resolve().parent.parent
BUNDLED_DIR_DEFAULT = Path(__file__).resolve().parent / "bundled"


def results_dir() -> Path:
    """Directory of this server's job bundles (created on first use by the job manager)."""
    return Path(os.environ.get("KPROF_RESULTS_DIR", "results")).resolve()


def bundled_dir() -> Path:
    """Read-only directory of bundles recorded elsewhere (e.g. on an H200) and shipped with the
    app."""
    return Path(os.environ.get("KPROF_BUNDLED_DIR", str(BUNDLED_DIR_DEFAULT))).resolve()


def worker_python() -> str:
    """Interpreter that runs the worker; the GPU environment may differ from the app's."""
    return os.environ.get("KPROF_WORKER_PYTHON", sys.executable)


def warm_worker() -> bool:
    """Whether the job manager keeps warm workers (see profiling_worker/job/serve.py)."""
    return os.environ.get("KPROF_WARM_WORKER", "1") != "0"


def worker_env() -> dict[str, str]:
    """Environment for worker subprocesses: ours, plus PACKAGE_ROOT on PYTHONPATH so that
    ``-m profiling_worker`` works from a source checkout as well as from an install."""
    env = dict(os.environ)
    parts = [str(PACKAGE_ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(parts))
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env
