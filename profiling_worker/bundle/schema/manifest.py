"""``manifest.json``: the status, timings, environment and provenance of one bundle.

The manifest is written last and atomically (tmp file + rename), so a reader that finds one
never sees a half-written file; a bundle directory without a manifest is not a result. Writers
take an exclusive ``flock`` on the bundle directory: the worker writes its result while the job
manager may be recording the worker's pid (:func:`update_manifest`), and neither may overwrite
the other's write with a stale copy.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import enum
import fcntl
import json
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from profiling_worker.bundle.file_mode import temp_file
from profiling_worker.bundle.schema import columns

SCHEMA_VERSION = 1
#: Key of an imported bundle's metric roles: {metric: {"role": "derived" | "normalised",
#: "label": what to print beside the metric, ...}} (profiling_worker.importing.roles).
METRIC_ROLES_KEY = "metric_roles"
#: Key in an imported bundle's ``provenance`` of {file name: SHA-256 (hex) of the file read}: the
#: import of files with the same content as an earlier one is told apart by it (the Import page
#: names the earlier job).
SOURCE_SHA256_KEY = "source_sha256"


def source_digest(manifest: dict[str, Any]) -> tuple[str, ...] | None:
    """The sorted SHA-256 of the files an imported bundle was read from (names left out: a
    browser renames a file it uploads again), None where the manifest records none (not an
    import, or one made before the hashes were recorded)."""
    prov = manifest.get("provenance")
    hashes = prov.get(SOURCE_SHA256_KEY) if isinstance(prov, dict) else None
    if not isinstance(hashes, dict) or not hashes:
        return None
    return tuple(sorted(str(h) for h in hashes.values()))


#: Key of the time (UTC, :func:`now_iso`) at which the worker had written a job's runs and
#: aggregated tables (issue 40): written into the manifest of a job still ``running`` (the result
#: ready, the other tables pending) and kept in its final one.
RESULT_READY_KEY = "result_ready"


class JobStatus(str, enum.Enum):
    """Life cycle of a job. Only DONE bundles hold complete tables."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"

    def __str__(self) -> str:  # "done", not "JobStatus.DONE", in f-strings on every Python
        return str(self.value)

    @property
    def finished(self) -> bool:
        """True for every status a job cannot leave."""
        return self not in (JobStatus.QUEUED, JobStatus.RUNNING)


def now_iso() -> str:
    """Now in UTC, ISO 8601 to the second (``2026-11-30T05:46:21+00:00``): the form of every
    manifest timestamp (started_at, finished_at, created_at, submitted_at)."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


class ManifestError(ValueError):
    """A manifest that is missing, not JSON, or lacks required keys."""


_REQUIRED = ("schema_version", "job_id", "status")
_OBJECTS = ("spec", "environment", "backend", "error", "provenance", "gpu")  # dicts when present


@contextlib.contextmanager
def _locked(bundle: Path) -> Iterator[None]:
    """Exclusive ``flock`` of the bundle directory itself (no lock file among the results),
    released when the descriptor closes; none where the file system refuses it."""
    fd = os.open(bundle, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:  # no flock on a directory here (NFS emulates it with write locks,
            pass  # which a read-only descriptor cannot take): the rename alone keeps it whole
        yield
    finally:
        os.close(fd)


def _write(bundle: Path, manifest: dict[str, Any]) -> Path:
    data = {"schema_version": SCHEMA_VERSION, **manifest}
    fd, tmp = temp_file(bundle, ".manifest-")  # 0666 less the umask, as open() makes it
    try:
        # the text made whole, then written at once: json.dump writes each of its few hundred
        # pieces through the file object (0.2 ms of a warm job's manifest)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(data, indent=2, sort_keys=True, default=str))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, bundle / columns.MANIFEST_FILE)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return bundle / columns.MANIFEST_FILE


def manifest_stamp(bundle_dir: str | Path) -> str:
    """Which write of ``manifest.json`` is on disk: ``"<mtime ns>:<inode>:<size bytes>"``.

    The cache key of a bundle. Each write replaces the manifest through a temporary name
    (:func:`_write`), so every write has its own inode: two writes within one tick of a coarse
    clock (1 s on some NFS servers, where Slurm sweeps keep their results) still give two keys,
    where the mtime alone would keep the first write's read ("tables pending") until the next
    change.
    Raises OSError when ``manifest.json`` cannot be stat'ed.
    """
    stat = (Path(bundle_dir) / columns.MANIFEST_FILE).stat()
    return f"{stat.st_mtime_ns}:{stat.st_ino}:{stat.st_size}"


def write_manifest(bundle_dir: str | os.PathLike[str], manifest: dict[str, Any]) -> Path:
    """Write ``manifest.json`` atomically, under the bundle's lock; returns its path.

    Raises:
        OSError: the directory is not writable (disk full included); the old manifest stays.
    """
    bundle = Path(bundle_dir)
    with _locked(bundle):
        return _write(bundle, manifest)


def update_manifest(bundle_dir: str | os.PathLike[str],
                    change: Callable[[dict[str, Any]], dict[str, Any]]) -> Path:
    """Read the manifest (``{}`` when there is none or it is not valid), write ``change`` of
    it, both under the bundle's lock, so that a write made meanwhile by another process (the
    worker's result) is read, never overwritten by a stale copy; returns its path.

    Raises:
        OSError: as :func:`write_manifest`.
    """
    bundle = Path(bundle_dir)
    with _locked(bundle):
        try:
            current = read_manifest(bundle)
        except ManifestError:
            current = {}
        return _write(bundle, change(current))


def read_manifest(bundle_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and check ``manifest.json``.

    Raises:
        ManifestError: missing file, bad JSON, missing keys or an unknown status.
    """
    from profiling_worker.bundle.paths import OutsideBundle, bundle_file

    path = Path(bundle_dir) / columns.MANIFEST_FILE
    try:
        data = json.loads(bundle_file(bundle_dir, columns.MANIFEST_FILE)
                          .read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ManifestError(f"{path.parent.name}: no manifest.json (not a finished "
                            "bundle)") from exc
    except OutsideBundle as exc:
        raise ManifestError(str(exc)) from exc
    except (OSError, ValueError) as exc:
        raise ManifestError(f"{path.parent.name}: manifest.json is not valid JSON ({exc})") from exc
    if not isinstance(data, dict) or any(k not in data for k in _REQUIRED):
        raise ManifestError(f"{path.parent.name}: manifest.json lacks {', '.join(_REQUIRED)}")
    try:
        JobStatus(data["status"])
    except (ValueError, TypeError) as exc:
        raise ManifestError(f"{path.parent.name}: unknown status {data['status']!r}") from exc
    wrong = [k for k in _OBJECTS if data.get(k) is not None and not isinstance(data[k], dict)]
    if wrong:
        raise ManifestError(f"{path.parent.name}: manifest.json has {', '.join(wrong)} that "
                            "is not an object")
    return data


def job_gpu_index(manifest: Mapping[str, Any], spec_gpu: object = None) -> int:
    """NVML index of the job's GPU in ``environment["gpus"]``: the manifest's
    ``gpu.nvml_index`` (the spec's ``gpu`` counts the GPUs visible to the worker, another GPU
    under an inherited CUDA_VISIBLE_DEVICES), else the spec's ``gpu`` (``spec_gpu`` when the
    caller has the spec, else the manifest's; older bundles), else 0."""
    gpu = manifest.get("gpu")
    gpu = gpu if isinstance(gpu, dict) else {}
    spec = manifest.get("spec")
    if spec_gpu is None and isinstance(spec, dict):
        spec_gpu = spec.get("gpu")
    candidates: tuple[Any, ...] = (gpu.get("nvml_index"), spec_gpu)  # JSON: any type
    for value in candidates:
        try:
            return int(value)
        except (TypeError, ValueError):
            continue
    return 0


#: The flat ``environment`` keys an import writes from its files (nsight-python's CSV columns
#: GPU, ComputeClock, MemoryClock; a report's device attributes) -> the ``gpus`` entry key of
#: the worker's NVML probe, and the factor to that key's unit (kHz -> MHz).
_IMPORTED_GPU_KEYS = {"gpu_name": ("name", None),
                      "compute_capability": ("compute_capability", None),
                      "max_sm_clock_khz": ("max_sm_clock_mhz", 1e-3),
                      "max_mem_clock_khz": ("max_mem_clock_mhz", 1e-3)}


def gpu_entry(env: Mapping[str, Any], index: int) -> dict[str, Any]:
    """GPU ``index`` (NVML index) of an ``environment``: its ``gpus`` entry (the worker's
    probe), else the first entry; for an import without ``gpus``, the GPU its files name, in the
    entry's keys and units (``gpu_name`` -> ``name``, ``max_sm_clock_khz`` -> ``max_sm_clock_mhz``
    in MHz...; a key the files give several values for is left out: which GPU ran is unknown);
    {} when neither (the cpu backend)."""
    gpus = env.get("gpus")
    entries = [g for g in gpus if isinstance(g, dict)] if isinstance(gpus, list) else []
    if entries:
        return next((g for g in entries if g.get("index") == index), entries[0])
    out: dict[str, Any] = {}
    for flat, (key, factor) in _IMPORTED_GPU_KEYS.items():
        value = env.get(flat)
        if value in (None, "") or isinstance(value, (list, dict)):
            continue
        try:
            scaled = None if factor is None else float(value) * factor
        except (TypeError, ValueError):  # not a number where the files should give one
            continue
        out[key] = value if scaled is None else int(scaled) if scaled.is_integer() \
            else round(scaled, 3)
    return out


def job_gpu(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`gpu_entry` of the manifest's ``environment`` for the job's GPU
    (:func:`job_gpu_index`): the worker's NVML entry, or the GPU an import's files name."""
    return gpu_entry(manifest.get("environment") or {}, job_gpu_index(manifest))
