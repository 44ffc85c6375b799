"""The run side of each backend: the module that ``schema/backends.py`` names in
``Backend.runner``, imported only when a worker needs it (the app never does).

A run-side module has three functions (:class:`RunSide`): ``probe(env)`` says whether the
backend can run in a :func:`~profiling_worker.environment.probe_environment` environment,
``warm_up(entry)`` does once what every job would (a warm worker), and ``run(job)`` profiles one
job. Adding a backend: its module, its :class:`~profiling_worker.schema.backends.Backend` entry
and their tests; nothing else names it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from profiling_worker.schema import backends as B

if TYPE_CHECKING:  # kept light: environment.py imports this module to probe the backends
    from profiling_worker.backends.base import Collection
    from profiling_worker.catalog.registry import Registry
    from profiling_worker.channel import Channel
    from profiling_worker.schema.spec import JobSpec


@dataclass(frozen=True)
class RunJob:
    """One job as a backend's ``run`` sees it.

    Attributes:
        spec: the validated job.
        registry: the kernels it may name.
        annotations: kernel id -> the annotations (regions) to run.
        job_dir: the job's directory (output under it).
        entry: this backend's environment report entry (``available``, ``nsight_mode``...).
        channel: where events go.
        uuid: NVML UUID of the job's GPU, None for the host (cpu).
        ready: called just before the first profiled launch: waits for the preflight checks
            that run in the background (the ncu metric-name query) and raises their error.
    """

    spec: JobSpec
    registry: Registry
    annotations: dict[str, tuple[str, ...]]
    job_dir: Path
    entry: dict[str, Any]
    channel: Channel
    uuid: str | None
    ready: Callable[[], None] = lambda: None

    def body(self, kernel_id: str, device: str, annotate: Any) -> Callable[..., None]:
        """The kernel's body on ``device`` (``cuda``, ``cpu``), ``annotate`` opening its
        regions (kernel failures raise KernelFailed)."""
        from profiling_worker.catalog.registry import make_body

        return make_body(self.registry, kernel_id, self.annotations[kernel_id], device, annotate)


class RunSide(Protocol):
    """What a backend's run-side module provides (module-level functions)."""

    def probe(self, env: dict[str, Any]) -> dict[str, Any]:
        """``{available, nsight_mode, reason, fix}`` (+ backend extras) for ``env``."""

    def warm_up(self, entry: dict[str, Any]) -> None:
        """Imports and device start-up a warm worker does once, before its first job."""

    def run(self, job: RunJob) -> Collection | None:
        """Profile the job; None in a process that must not write results (launch child)."""


def run_side(name: str) -> RunSide:
    """The run-side module of backend ``name``.

    Raises:
        KeyError: no backend of that name.
    """
    return cast(RunSide, importlib.import_module(B.get(name).runner))
