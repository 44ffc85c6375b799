"""Add an Nsight Compute section set (``ncu --set NAME``) to the ncu command nsight-python runs.

nsight-python has no option for extra ncu arguments: 0.9.6 builds the shell command
``ncu --log-file ... --metrics ... -f -o REPORT python SCRIPT`` (``collection/ncu.py``,
``launch_ncu``) and 1.1 runs ``[shutil.which("ncu"), "--mode", "attach", ... "--metrics", ...,
"-f", "-o", REPORT]``; both find ``ncu`` on PATH. While a job with a ``section_set`` profiles,
the worker puts a one-line ``ncu`` script first on PATH that runs the real ncu with
``--set NAME`` added to the profiling command (the one that writes a report, ``-o``) and passes
every other call (``--version``, ``--query-metrics``, ``--list-injection-path-64``) unchanged.
ncu collects the set's sections and rules together with the ``--metrics`` list.
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from profiling_worker.bundle.errors import BackendUnavailable

SHIM_DIR = "ncu-set-shim"


def shim_script(real_ncu: str, section_set: str) -> str:
    """The ``ncu`` wrapper: ``--set section_set`` before the arguments of a call with ``-o``."""
    real, chosen = shlex.quote(real_ncu), shlex.quote(section_set)
    return ("#!/bin/sh\n"
            "# written by the profiling worker: nsight-python has no option for extra ncu "
            "arguments\n"
            f'case " $* " in *" -o "*) exec {real} --set {chosen} "$@";; esac\n'
            f'exec {real} "$@"\n')


@contextmanager
def ncu_with_set(section_set: str | None, work_dir: Path) -> Iterator[str | None]:
    """Put the wrapper first on PATH while the block runs (nothing when ``section_set`` is None).

    Args:
        section_set: the ncu section set name (``full``), or None.
        work_dir: the job's folder for the wrapper (``<work_dir>/ncu-set-shim/ncu``).

    Yields:
        The ncu command line prefix recorded in the manifest (``<real ncu> --set full``), or None.

    Raises:
        BackendUnavailable: no ``ncu`` on PATH.
    """
    if not section_set:
        yield None
        return
    shim = work_dir / SHIM_DIR
    # never the wrapper itself (a launch-mode child inherits the PATH that holds it)
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                           if Path(p) != shim)
    real = shutil.which("ncu", path=path)
    if real is None:
        raise BackendUnavailable("no ncu on PATH", "install Nsight Compute and put ncu on PATH")
    shim.mkdir(parents=True, exist_ok=True)
    script = shim / "ncu"
    script.write_text(shim_script(real, section_set))
    script.chmod(0o755)
    before = os.environ.get("PATH", "")
    os.environ["PATH"] = f"{shim}{os.pathsep}{before}"
    try:
        yield f"{real} --set {section_set}"
    finally:
        os.environ["PATH"] = before
