"""The backends of this worker, one :class:`~profiling_worker.backends.run_side.RunSide` object
per name of ``bundle/schema/backends.py``, and the environment report built from their probes.

Adding a backend: its module (a ``RunSide`` subclass), its
:class:`~profiling_worker.bundle.schema.backends.Backend` entry (which declares its capabilities:
``runs: "auto"``, warm workers, options...), one line in :data:`RUN_SIDES`, and their tests.
Importing this module imports no torch, nsight or CUDA: each backend imports those
inside its warm-up and run.
"""

from __future__ import annotations

from typing import Any

from profiling_worker.probes import environment
from profiling_worker.backends.cpu import CpuBackend
from profiling_worker.backends.cupti import CuptiBackend
from profiling_worker.backends.events import EventsBackend
from profiling_worker.backends.ncu import NcuBackend
from profiling_worker.backends.run_side import BackendStatus, RunSide
from profiling_worker.bundle.schema import backends as B

#: Backend name -> its run side, in the order of ``bundle/schema/backends.py`` NAMES.
RUN_SIDES: dict[str, RunSide] = {side.name: side for side in (
    NcuBackend(), CuptiBackend(), EventsBackend(), CpuBackend())}


def run_side(name: str) -> RunSide:
    """The run side of backend ``name``.

    Raises:
        KeyError: no backend of that name (the message lists the names).
    """
    B.get(name)  # the schema's KeyError names the known backends
    return RUN_SIDES[name]


def choose_backends(env: dict[str, Any]) -> dict[str, BackendStatus]:
    """Each backend's :meth:`~RunSide.probe` of ``env``, by name (in ``B.NAMES`` order).

    Pure: decides from a :func:`~profiling_worker.probes.environment.probe_environment` dict, so
    tests can give any environment. Rules (the version table of docs/gpu-setup.md):
    nsight-python >= 1.1 with ncu >= 2026.2.1 attaches in-process; nsight-python 0.9.x re-runs the
    worker under any ncu (launch mode); CUPTI needs nsight-python >= 1.1, cupti-python >= 13.4 and
    a libcupti >= 13.4; CUDA events need a GPU and a CUDA build of torch.
    """
    return {name: run_side(name).probe(env) for name in B.NAMES}


def environment_report(with_kernels: bool = False,
                       env: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``python -m profiling_worker env`` output (JSON): ``environment`` (probed without
    touching CUDA; ``env``: a :func:`~profiling_worker.probes.environment.probe_environment`
    dict already probed, e.g. by a cold job's
    :class:`~profiling_worker.probes.environment.ProbeInBackground`), ``backends`` (name ->
    :meth:`BackendStatus.to_json`) and, with ``with_kernels``, the kernels a job may name
    (built-in and ``KPROF_KERNEL_DIRS``)."""
    env = environment.probe_environment() if env is None else env
    report = {"environment": env,
              "backends": {n: s.to_json() for n, s in choose_backends(env).items()}}
    if with_kernels:
        from profiling_worker.catalog.registry import load_registry

        report["kernels"] = load_registry().describe()
    return report
