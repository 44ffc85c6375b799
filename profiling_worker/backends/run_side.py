"""What a backend is on the worker's side: a :class:`RunSide` object that owns its probe, its
warm-up and its run, the typed :class:`BackendStatus` its probe returns, and the
:class:`RunJob` its run gets.

The capabilities the app may read (what a backend measures, which options it applies) are in
``profiling_worker/bundle/schema/backends.py``; ``backends/registry.py`` holds one object per
backend. The environment report (``python -m profiling_worker env``) is JSON, so a status crosses
the process boundary as :meth:`BackendStatus.to_json` and comes back through
:meth:`BackendStatus.from_json`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from profiling_worker.backends import gc_pause

if TYPE_CHECKING:  # kept light: the registry imports every backend to probe it
    from profiling_worker.backends.base import Collection
    from profiling_worker.catalog.registry import Registry
    from profiling_worker.backends.channel import Channel
    from profiling_worker.bundle.schema.backends import Name
    from profiling_worker.bundle.schema.spec import JobSpec


@dataclass(frozen=True)
class BackendStatus:
    """Whether a backend can run here (its entry in the environment report).

    Attributes:
        available: it can run a job in this environment.
        reason: why not, or what it will use (``nsight-python 1.1.0 attach mode, ncu 2026.2.1``).
        fix: what to do when it cannot run ("" when it can).
        nsight_mode: the nsight-python variant it runs (``launch``, ``attach``, ``cupti``;
            None: nsight-python is not used).
        libcupti: the libcupti the CUPTI backend preloads (None for the others).
    """

    available: bool
    reason: str
    fix: str = ""
    nsight_mode: str | None = None
    libcupti: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The report entry: ``{available, nsight_mode, reason, fix}``, plus ``libcupti`` when
        set (the keys the app reads)."""
        entry: dict[str, Any] = {"available": self.available, "nsight_mode": self.nsight_mode,
                                 "reason": self.reason, "fix": self.fix}
        return entry | ({"libcupti": self.libcupti} if self.libcupti else {})

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> BackendStatus:
        """The status of a report entry (a warm worker's cached report, a report file); a
        missing ``available`` reads as not available."""
        return cls(bool(entry.get("available")), str(entry.get("reason") or ""),
                   str(entry.get("fix") or ""), entry.get("nsight_mode"),
                   entry.get("libcupti"))


def unavailable(reason: str, fix: str) -> BackendStatus:
    """A backend's status when it cannot run here: why, and the fix."""
    return BackendStatus(False, reason, fix)


#: The first check of every GPU backend's probe.
NO_GPU = ("no NVIDIA GPU visible to NVML", "run on a machine with an NVIDIA GPU and driver")


@dataclass(frozen=True)
class RunJob:
    """One job as a backend's ``run`` sees it.

    Attributes:
        spec: the validated job.
        registry: the kernels it may name.
        annotations: kernel id -> the annotations (regions) to run.
        job_dir: the job's directory (output under it).
        status: this backend's status in the environment report (``nsight_mode``...).
        channel: where events go.
        uuid: NVML UUID of the job's GPU, None for the host (cpu).
        ready: called just before the first profiled launch: waits for the preflight checks
            that run in the background (the ncu metric-name query) and raises their error.
        measured: called by a backend that times regions right after its last run: from then
            a cancel no longer stops the job, whose tables are written whole
            (:class:`~profiling_worker.job.runner.CancelWatch`).
    """

    spec: JobSpec
    registry: Registry
    annotations: dict[str, tuple[str, ...]]
    job_dir: Path
    status: BackendStatus
    channel: Channel
    uuid: str | None
    ready: Callable[[], None] = lambda: None
    measured: Callable[[], None] = lambda: None

    def body(self, kernel_id: str, device: str, annotate: Any) -> Callable[..., None]:
        """The kernel's body on ``device`` (``cuda``, ``cpu``), ``annotate`` opening its
        regions (kernel failures raise KernelFailed)."""
        from profiling_worker.catalog.registry import make_body

        gc_pause.resume()  # a cold worker's imports are done: nothing is measured with it off
        return make_body(self.registry, kernel_id, self.annotations[kernel_id], device, annotate)


class RunSide(ABC):
    """One backend in the worker: :meth:`probe`, :meth:`warm_up` and :meth:`run`.

    ``name`` is the spec's ``backend`` value (its
    :class:`~profiling_worker.bundle.schema.backends.Backend` entry says what it measures).
    Subclasses keep no per-job state: one object serves every job of a warm worker.
    """

    name: ClassVar[Name]

    @abstractmethod
    def probe(self, env: dict[str, Any]) -> BackendStatus:
        """Whether it can run in this :func:`~profiling_worker.probes.environment.probe_environment`
        environment (pure: decides from the dict)."""

    @abstractmethod
    def warm_up(self, status: BackendStatus) -> None:
        """Imports and device start-up a warm worker does once, before its first job."""

    @abstractmethod
    def run(self, job: RunJob) -> Collection | None:
        """Profile the job; None in a process that must not write results (launch child).

        Raises:
            WorkerError: the job failed (KernelFailed, ProfilingFailed, BackendUnavailable...).
        """
