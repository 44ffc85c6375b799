"""Worker errors: each carries a ``kind``, a one-sentence message and a hint with the fix.

``__main__`` turns any :class:`WorkerError` into one ``error`` event and a failed manifest;
anything else becomes ``kind="internal"`` with the log tail.
"""

from __future__ import annotations

from typing import Any


class WorkerError(Exception):
    """Base class. ``kind`` is a stable machine-readable name shown in the app."""

    kind = "worker_error"

    def __init__(self, message: str, hint: str = "", kind: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        if kind:
            self.kind = kind

    def to_event_fields(self) -> dict[str, Any]:
        """The fields of an ``error`` event: kind, message, hint."""
        return {"kind": self.kind, "message": self.message, "hint": self.hint}


class SpecRejected(WorkerError):
    """The spec failed validation (field-named errors in the message)."""

    kind = "spec_invalid"


class BackendUnavailable(WorkerError):
    """The chosen backend cannot run here (missing ncu, old ncu, no libcupti, no GPU ...)."""

    kind = "backend_unavailable"


class ProfilingFailed(WorkerError):
    """nsight-python, ncu or the kernel body failed while profiling."""

    kind = "profiling_failed"


class KernelFailed(WorkerError):
    """An exception inside a kernel body (CUDA out of memory included)."""

    kind = "kernel_failed"


class Cancelled(WorkerError):
    """The worker received SIGTERM."""

    kind = "cancelled"
