"""Where the shown job's numbers come from, in one sentence for the banner above every page:
recorded by this project's worker (on which GPU), or imported from files made elsewhere
(which files, which tool and version). Read from the manifest's ``provenance`` and
``environment``, never assumed."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from profiling_worker.bundle.number_text import when_text
from profiling_worker.bundle.schema import backends as B
from profiling_worker.bundle.schema.manifest import JobStatus, source_digest
from profiling_worker.importing.kinds import NOT_READ, by_name

from app.core.environment import gpu_name, job_gpu_index
from app.core.markdown import code, esc

_MAX_FILES = 4  # more names make the banner a paragraph; the manifest lists them all


def is_imported(manifest: dict[str, Any]) -> bool:
    """True for a bundle written by the importer (manifest ``provenance.imported_from``)."""
    prov = manifest.get("provenance")
    return isinstance(prov, dict) and bool(prov.get("imported_from"))


def _tool_versions(manifest: dict[str, Any]) -> list[str]:
    nspy = (manifest.get("provenance") or {}).get("nsight_python_version")
    return [f"nsight-python {nspy}"] if nspy else []


def import_banner(manifest: dict[str, Any]) -> str:
    """One sentence naming the files an imported job's values were read from (not its logs),
    their kinds and the tool versions the files tell, saying the worker did not record them,
    and naming given files that were not read (manifest ``provenance.not_read``)."""
    prov = manifest.get("provenance") or {}
    unread = [str(f) for f in prov.get("not_read") or []]
    formats = prov.get("formats") or {}
    known = by_name()  # the importer's kinds; one it no longer knows is a "file"
    kind = {str(f): known[str(k)] for f, k in formats.items() if str(k) in known}
    files = [str(f) for f in prov.get("imported_from") or []  # a log holds no values
             if str(f) not in unread and (str(f) not in kind or kind[str(f)].reader != NOT_READ)]
    kinds = list(dict.fromkeys(kind[f].words if f in kind else "file" for f in files))
    names = ", ".join(code(f) for f in files[:_MAX_FILES])  # names from files: as text
    if len(files) > _MAX_FILES:
        names += f" and {len(files) - _MAX_FILES} more"
    tools = _tool_versions(manifest)
    gpu = gpu_name(manifest.get("environment") or {}, job_gpu_index(manifest))
    text = (f"Imported job: values read from {names} ({'; '.join(kinds)}"
            + (f"; {esc(', '.join(tools))}" if tools else "") + ")"
            + (f", measured on {esc(gpu)} elsewhere" if gpu
               else ", measured elsewhere on a GPU the files do not name")
            + ", not recorded by this project's worker"
            + (f"; given but not read: {', '.join(code(f) for f in unread[:_MAX_FILES])}"
               if unread else ""))
    return text


#: What an nsight-python job measures (worker jobs, and imports of nsight-python's CSVs).
ANNOTATED_SCOPE = (
    "Only the work inside the annotated region (`nsight.annotate`) is profiled: tensor "
    "allocation, data setup, warm-up and anything else outside the region are not measured.")
#: What an import of Nsight Compute output alone measures: its regions are NVTX ranges or,
#: without them, kernel names (profiling_worker.extract.kernel_regions), never nsight.annotate.
NCU_IMPORT_SCOPE = (
    "Imported from Nsight Compute output: a region is an NVTX range of the profiled program "
    "or, where it had none, a kernel's name. Only the kernel launches Nsight Compute profiled "
    "are measured: allocation, data setup and other work between them are not.")
#: What a job of the cpu backend measures (profiling_worker/backends/cpu.py): no nsight there.
HOST_SCOPE = (
    "Only the work inside each annotated region is timed, on the host (cpu backend: "
    "`time.perf_counter_ns` around the region; nsight-python and Nsight Compute are not used): "
    "tensor allocation, data setup, warm-up and anything else outside the region are not measured.")
_NSIGHT_PYTHON_KINDS = ("nsight_raw", "nsight_agg")


def host_timer_warning(status: JobStatus, threads: int | None = None) -> str:
    """The warning over a cpu-backend job, one line at 1000 px, in the tense of its
    ``status``: the times a queued job *will* record, a running or finished job's times *here*
    (issue 37: "used" was said before the job had run). ``threads``: the torch threads it is
    timed with (``Bundle.cpu_threads``; None, a job recorded before they were set: not said)."""
    measured = B.host_measurement(threads)
    if status is JobStatus.QUEUED:
        return f"Every time this job records will be {measured} (cpu backend)."
    return f"Every time here is {measured} (cpu backend)."


def profiled_scope(manifest: dict[str, Any] | None, backend: str = "") -> str:
    """The sentence saying what a region is and what was measured, from the job's provenance:
    :data:`NCU_IMPORT_SCOPE` for a job imported from Nsight Compute output without
    nsight-python's CSVs (manifest ``provenance.formats``), :data:`HOST_SCOPE` for a job of the
    cpu backend, else :data:`ANNOTATED_SCOPE`.

    ``backend`` is the backend the job recorded (``Bundle.backend``: the manifest's
    ``backend.name``, else its spec's), so that a job cancelled before the worker named it in
    the manifest is told as its spec says; "" reads the manifest's ``backend.name`` alone."""
    backend = backend or str(((manifest or {}).get("backend") or {}).get("name") or "")
    if backend and not B.on_gpu(backend):
        return HOST_SCOPE
    if not manifest or not is_imported(manifest):
        return ANNOTATED_SCOPE
    formats = (manifest.get("provenance") or {}).get("formats") or {}
    if any(k in _NSIGHT_PYTHON_KINDS for k in formats.values()):
        return ANNOTATED_SCOPE
    return NCU_IMPORT_SCOPE


def banner(manifest: dict[str, Any] | None, gpu_here: bool) -> str | None:
    """The provenance banner for the shown job: the import sentence for an imported job (with
    or without a GPU here); without a GPU, where a worker-recorded job was measured; None when
    a GPU is here and the job is the worker's own."""
    if manifest and is_imported(manifest):
        return import_banner(manifest)
    if gpu_here:
        return None
    gpu = gpu_name((manifest or {}).get("environment") or {}, job_gpu_index(manifest or {}))
    if not gpu:  # no job shown, or a cpu-backend job: nothing to attribute to a GPU
        return "No GPU here: jobs run on the cpu backend only"
    return f"No GPU here: showing results recorded on {esc(gpu)} by this project's worker"


def imported_at(manifest: dict[str, Any]) -> str:
    """When a bundle was imported (manifest ``timings.imported_at``, else ``provenance.date``),
    as ``2026-12-06 09:40:12 UTC``; "" where the manifest says not."""
    said = (manifest.get("timings") or {}).get("imported_at") \
        or (manifest.get("provenance") or {}).get("date") or ""
    return when_text(said)


def same_files(job_id: str, manifest: dict[str, Any],
               others: Iterable[tuple[str, dict[str, Any]]]) -> tuple[str, str] | None:
    """The earliest other imported job read from files of the same content as ``job_id``'s
    (the same SHA-256 of each source file, whatever their names:
    :func:`~profiling_worker.bundle.schema.manifest.source_digest`), and when it was imported
    (:func:`imported_at`); None where there is none or ``manifest`` records no hashes.
    Importing the same files twice made a second job without a word.

    Args:
        job_id: the job just imported.
        manifest: its manifest.
        others: (job id, manifest) of the jobs to look among (``job_id`` itself is skipped).
    """
    digest = source_digest(manifest)
    if digest is None:
        return None
    same = [(imported_at(m), other) for other, m in others
            if other != job_id and source_digest(m) == digest]
    if not same:
        return None
    when, first = min(same)
    return first, when


__all__ = ["ANNOTATED_SCOPE", "HOST_SCOPE", "banner", "host_timer_warning", "import_banner",
           "imported_at",
           "is_imported", "same_files",
           "NCU_IMPORT_SCOPE", "profiled_scope"]
