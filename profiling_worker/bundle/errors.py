"""Worker errors: each carries a ``kind``, a one-sentence message and a hint with the fix.

``__main__`` turns any :class:`WorkerError` into one ``error`` event and a failed manifest;
anything else becomes ``kind="internal"`` with the log tail.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict


class ErrorFields(TypedDict):
    """The fields of an ``error`` event and of a failed manifest's ``error``."""
    kind: str  # stable machine-readable name (WorkerError.kind)
    message: str  # one sentence
    hint: str  # the fix


class JobError(ErrorFields, total=False):
    """A failed job's ``error`` as the app keeps it (``Job.error``, the manifest)."""
    log_tail: str  # the worker log's last lines
    how: str  # a cancelled job's: how its cancel came (Cancelled.how, partial.cancel_how)


class WorkerError(Exception):
    """Base class. ``kind`` is a stable machine-readable name shown in the app."""

    kind = "worker_error"

    def __init__(self, message: str, hint: str = "", kind: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        if kind:
            self.kind = kind

    def to_event_fields(self) -> ErrorFields:
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


OUT_OF_MEMORY_HINT = "choose smaller sizes"


def is_out_of_memory(exc: BaseException) -> bool:
    """True when ``exc`` says memory ran out: CUDA's "out of memory" (torch.cuda.OutOfMemoryError,
    CUDA_ERROR_OUT_OF_MEMORY) or a host allocator's "can't allocate memory"."""
    text = f"{type(exc).__name__}: {exc}".lower()
    return "out of memory" in text or "can't allocate memory" in text


class Cancelled(WorkerError):
    """The worker received SIGTERM (or SIGINT). ``how``: the signal and when, e.g.
    ``"SIGTERM at 2026-12-07T02:10:00+00:00"`` (a partial result's manifest says it)."""

    kind = "cancelled"

    def __init__(self, message: str, hint: str = "", how: str = ""):
        super().__init__(message, hint)
        self.how = how or "signal"

    def to_event_fields(self) -> JobError:
        """kind, message, hint and ``how`` (as data: readers need not parse the message)."""
        return {"kind": self.kind, "message": self.message, "hint": self.hint, "how": self.how}


class DiskFull(WorkerError):
    """Writing the bundle failed because the file system is full (ENOSPC / EDQUOT)."""

    kind = "disk_full"


class ThermalTimeout(ProfilingFailed):
    """nsight-python's thermal control gave up waiting for the GPU to cool down."""

    kind = "thermal_timeout"


class CounterPermission(BackendUnavailable):
    """Nsight Compute may not read the GPU performance counters (ERR_NVGPUCTRPERM)."""

    kind = "counter_permission"


#: What Nsight Compute prints when the user may not read the performance counters.
COUNTER_PERMISSION_MARK = "ERR_NVGPUCTRPERM"
COUNTER_PERMISSION_HINT = (
    "Nsight Compute may not read this GPU's performance counters as this user. An administrator "
    "can allow it: load the driver with NVreg_RestrictProfilingToAdminUsers=0 (e.g. "
    "'options nvidia NVreg_RestrictProfilingToAdminUsers=0' in /etc/modprobe.d, then reload the "
    "driver or reboot), or run the worker as root with CAP_SYS_ADMIN (in Docker: --user 0:0 "
    "--cap-add=SYS_ADMIN; the flag alone does nothing for a non-root user); see "
    "https://developer.nvidia.com/ERR_NVGPUCTRPERM. Meanwhile use the cupti backend or the events "
    "backend: both time kernels without counter access (CUPTI: each kernel's GPU duration; "
    "events: each region's wall time on the stream).")
DISK_FULL_HINT = (
    "free space on the file system of the results directory (`df -h {where}`), or start the "
    "dashboard with --results on a larger disk, then submit again; finished results were not "
    "touched")
THERMAL_HINT = (
    "the GPU did not cool down in time: raise thermal_timeout, lower thermal_wait / thermal_cont "
    "(thermal_mode manual), let the GPU cool, or set thermal_mode to off (then check the NVML "
    "clock trace for throttling)")
_THERMAL_NAMES = frozenset({"CoolingTimeoutError", "ThermalControlError"})
_DISK_FULL_ERRNOS = frozenset({28, 122})  # ENOSPC, EDQUOT (Linux)


def exception_chain(exc: BaseException | None) -> list[BaseException]:
    """``exc`` and every exception it was raised from or during (cycles cut)."""
    chain: list[BaseException] = []
    while exc is not None and all(exc is not seen for seen in chain):
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    return chain


def classify_known(exc: BaseException, where: str = "", logs: str = "") -> WorkerError | None:
    """Name the faults a user can fix from anywhere in ``exc``'s chain: disk full, a thermal
    control timeout, no permission for the GPU counters (also when only ``logs``, the worker
    and ncu log text, names ERR_NVGPUCTRPERM). None when it is none of those."""
    chain = exception_chain(exc)
    for e in chain:
        if isinstance(e, OSError) and e.errno in _DISK_FULL_ERRNOS:
            return DiskFull(f"disk full while writing the result bundle: {e}",
                            DISK_FULL_HINT.format(where=where or "RESULTS_DIR"))
    for e in chain:
        if _THERMAL_NAMES & {c.__name__ for c in type(e).__mro__}:
            return ThermalTimeout(f"thermal control timed out ({type(e).__name__}: {e})",
                                  THERMAL_HINT)
    text = "\n".join(str(e) for e in chain)
    if COUNTER_PERMISSION_MARK in text or COUNTER_PERMISSION_MARK in logs:
        line = next((ln.strip() for ln in (text + "\n" + logs).splitlines()
                     if COUNTER_PERMISSION_MARK in ln), COUNTER_PERMISSION_MARK)
        return CounterPermission(f"no permission to read GPU performance counters: {line[:300]}",
                                 COUNTER_PERMISSION_HINT)
    return None


class ImportFailed(WorkerError):
    """Files given to ``import`` cannot be imported. ``message`` names the file, what it was
    taken for and what is wrong; ``hint`` says what to do."""

    kind = "import_failed"


class ImportInternalError(WorkerError):
    """The importer itself failed on files it had recognised (a bug, not a damaged file)."""

    kind = "import_internal"


def last_error_event(job_dir: Path) -> WorkerError | None:
    """The last ``error`` event in ``job_dir``'s events.jsonl as a WorkerError (what the
    launch-mode child that nsight-python 0.9.x re-runs said failed), None when there is none."""
    from profiling_worker.bundle.schema.columns import EVENTS_FILE
    from profiling_worker.bundle.schema.events import last_event

    event = last_event(job_dir / EVENTS_FILE, "error")
    if event is None:
        return None
    return WorkerError(event.get("message", ""), event.get("hint", ""),
                       kind=event.get("kind", "kernel_failed"))
