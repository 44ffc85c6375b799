"""The result store: one directory per job, found by reading each directory's manifest.json.

Two roots are listed: the server's own results directory (writable) and the bundled directory
shipped with the app (read-only, e.g. runs recorded on an NVIDIA H200). A directory whose
manifest is missing or unreadable is not a result; it is reported as a :class:`StoreProblem`
instead of being shown as a job, as is a bundle's zip copied among the job folders
(:func:`zip_problem`).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from profiling_worker.bundle.schema import columns

from profiling_worker.bundle.schema.bundle_spec import PartialSpec, backend_of, read_spec
from app.core.environment import gpu_name, job_gpu_index
from profiling_worker.bundle.schema.manifest import JobStatus, ManifestError, read_manifest
from profiling_worker.bundle.schema.spec import JobSpec, SpecInvalid, validate_spec
from profiling_worker.bundle.schema.spec_file import read_spec_json
from profiling_worker.importing.sniff import is_bundle_zip

JOB_ID_RE = re.compile(r"^[A-Za-z0-9_.-]{1,80}$")
SOURCE_LOCAL = "local"
SOURCE_BUNDLED = "bundled"


class InvalidJobId(ValueError):
    """A job id that does not match :data:`JOB_ID_RE` or escapes the store directory."""


#: A listed bundle's backend where neither its manifest nor its spec names one
UNKNOWN_BACKEND = "?"


@dataclass(frozen=True)
class BundleInfo:
    """One listed bundle: what the history table and the job selector show.

    ``created_at`` is the manifest's ISO timestamp (sort key, newest first); ``gpu_name`` comes
    from the manifest environment; ``source`` is ``local`` or ``bundled``.
    """

    job_id: str
    path: Path
    source: str
    status: JobStatus
    kernels: tuple[str, ...]
    backend: str
    created_at: str
    gpu_name: str
    label: str
    manifest: dict[str, Any] = field(repr=False, compare=False, hash=False)

    @functools.cached_property
    def spec(self) -> JobSpec | PartialSpec | None:
        """The typed spec recorded in the manifest
        (:func:`profiling_worker.bundle.schema.bundle_spec.read_spec`; None when the manifest has
        none), read once per listing."""
        return read_spec(self.manifest.get("spec"))


@dataclass(frozen=True)
class StoreProblem:
    """A directory in a store root that is not a readable bundle, and why."""

    path: Path
    reason: str


def check_job_id(job_id: str) -> str:
    """Return ``job_id`` if it is a safe directory name.

    Raises:
        InvalidJobId: it has characters outside ``[A-Za-z0-9_.-]``, is longer than 80, or is
            ``.``/``..``.
    """
    if not isinstance(job_id, str) or not JOB_ID_RE.match(job_id) or job_id in (".", ".."):
        raise InvalidJobId(f"{job_id!r} is not a job id (letters, digits, '_', '.', '-'; 1-80)")
    return job_id


def job_path(root: Path, job_id: str) -> Path:
    """The directory of ``job_id`` inside ``root``; never outside it.

    Raises:
        InvalidJobId: the id is malformed or its resolved path is not a child of ``root``.
    """
    check_job_id(job_id)
    root = root.resolve()
    path = (root / job_id).resolve()
    if path.parent != root:
        raise InvalidJobId(f"{job_id!r} resolves outside the results directory")
    return path


def spec_hash(manifest: dict[str, Any]) -> str:
    """The manifest's ``spec_hash`` (the worker's), else the same hash computed from its spec
    when the spec validates (imported bundles), else ""."""
    if manifest.get("spec_hash"):
        return str(manifest["spec_hash"])
    spec = manifest.get("spec")
    if not isinstance(spec, dict):
        return ""
    try:
        return validate_spec(spec).spec_hash()
    except (SpecInvalid, TypeError, ValueError):
        return ""


def read_info(path: Path, source: str) -> BundleInfo:
    """The :class:`BundleInfo` of one bundle directory.

    Raises:
        ManifestError: no readable manifest.json.
    """
    return _info(path, source, read_manifest(path))


def delete_bundle(results_dir: Path, job_id: str) -> Path:
    """Remove the bundle ``job_id`` from ``results_dir`` (never from the bundled dir).

    Returns:
        The removed directory.

    Raises:
        InvalidJobId: unsafe id.
        FileNotFoundError: no bundle of that id in ``results_dir`` (a bundled one included).
    """
    path = job_path(results_dir, job_id)
    if path.is_symlink() or not (path / columns.MANIFEST_FILE).is_file():
        raise FileNotFoundError(f"{job_id}: no bundle of that id in the results directory")
    shutil.rmtree(path)
    return path


def _info(path: Path, source: str, manifest: dict[str, Any]) -> BundleInfo:
    raw = manifest.get("spec")
    if not isinstance(raw, dict):  # refused before the worker recorded it: the file as written
        raw = spec_as_written(path)
    written = PartialSpec.as_written(raw if isinstance(raw, dict) else {})  # unvalidated: cheap
    env = manifest.get("environment") or {}
    return BundleInfo(
        job_id=path.name,  # the directory name is the id the store can find again
        path=path,
        source=source,
        status=JobStatus(manifest.get("status")),
        kernels=written.kernels,
        backend=backend_of(manifest, written) or UNKNOWN_BACKEND,
        created_at=str(manifest.get("created_at") or manifest.get("started_at") or ""),
        gpu_name=gpu_name(env, job_gpu_index(manifest)),
        label=written.label,
        manifest=manifest,
    )


def spec_as_written(path: Path) -> dict[str, Any]:
    """The JSON object of the job folder ``path``'s ``spec.json`` (a job the worker refused,
    an unknown kernel say, records no spec in its manifest: the panel and History then name
    the kernels and backend the file asked for); empty when it is missing, unreadable or not
    an object."""
    try:
        raw = read_spec_json(path / columns.SPEC_FILE)
    except SpecInvalid:  # missing, unreadable or not JSON: nothing known
        return {}
    return raw if isinstance(raw, dict) else {}


def zip_problem(path: Path, results_dir: Path) -> StoreProblem | None:
    """``path``, a file among a store root's job folders, as a problem when it is a bundle's zip
    (the Files page's download, copied there): why it is no job, and what reopens it (the
    Import page, or the worker's ``import`` into ``results_dir``); None for any other file.
    Only files named ``*.zip`` are opened, as the Files page names them: the roots are listed
    on every script run. Not reopened here: a listing writes nothing (the bundled root is
    read-only, sessions list at once), and a reopen may give the job another id, which its
    user should see (the Import page and the command say so)."""
    if path.suffix.lower() != ".zip" or not is_bundle_zip(path):
        return None
    return StoreProblem(path, zip_reason(path, results_dir, "the results list job folders only")
                        + "; then remove the zip from here")


def zip_reason(path: Path, results_dir: Path, why: str) -> str:
    """What a bundle's zip ``path`` given where a job's folder is read is, ``why`` that is no
    job, and what reopens it as its job in ``results_dir``: the Import page, or the worker's
    ``import`` (the job keeps its id; ``--out`` names the results folder only)."""
    return (f"a dashboard bundle's zip (the Files page's download), not a job's folder: {why}. "
            "Reopen it as its job on the Import page, or: python -m profiling_worker import "
            f"{path} --out {results_dir / path.stem}")


def scan_root(root: Path, source: str, results_dir: Path | None = None
              ) -> tuple[list[BundleInfo], list[StoreProblem]]:
    """Read every child directory of ``root`` with a valid name; a bundle's zip among them is a
    problem (:func:`zip_problem`, reopened into ``results_dir``, default ``root``).

    Returns:
        (bundles, problems); a missing ``root`` gives two empty lists.
    """
    bundles: list[BundleInfo] = []
    problems: list[StoreProblem] = []
    if not root.is_dir():
        return bundles, problems
    for child in sorted(root.iterdir()):
        if not child.is_dir():
            problems += filter(None, [zip_problem(child, results_dir or root)])
            continue
        if child.name.startswith(".") or not JOB_ID_RE.match(child.name):
            continue
        try:
            bundles.append(_listed(child, source))
        except ManifestError as exc:
            problems.append(StoreProblem(child, str(exc)))
    return bundles, problems


#: The most bundles :func:`_listed` remembers (it starts over past this).
LISTED_MAX = 4096
#: Bundle directory -> (its and its manifest's lstat signature, source, the listed bundle).
_LISTED: dict[Path, tuple[tuple[int, ...], str, BundleInfo]] = {}


def _signature(child: Path) -> tuple[int, ...] | None:
    """What changes when a bundle's manifest may have: the directory's and its
    ``manifest.json``'s inode, mode, size and mtime (``lstat``: a directory or manifest
    replaced by a link changes them); None when either is missing."""
    try:
        d = os.lstat(child)
        m = os.lstat(child / columns.MANIFEST_FILE)
    except OSError:
        return None
    return (d.st_dev, d.st_ino, d.st_mode, m.st_ino, m.st_mode, m.st_size, m.st_mtime_ns,
            m.st_ctime_ns)


def _listed(child: Path, source: str) -> BundleInfo:
    """``child``'s :class:`BundleInfo`, read again only when its manifest changed
    (:func:`_signature`): every script run lists both roots before its page (the job selector,
    the banner), and reading and checking the 27 bundled manifests took 5-6 ms of CPU, of the
    30-45 ms a click's run spends before its chart (issue 40; now about 0.5 ms). A manifest
    that fails to read is read again each time (its
    :class:`~profiling_worker.bundle.schema.manifest.ManifestError` is not kept).
    The listed manifest is shared by every caller: read it, never change it."""
    sig = _signature(child)
    hit = _LISTED.get(child)
    if sig is not None and hit is not None and hit[0] == sig and hit[1] == source:
        return hit[2]
    info = _info(child, source, read_manifest(child))
    if sig is not None and sig == _signature(child):  # unchanged while read
        if len(_LISTED) >= LISTED_MAX:
            _LISTED.clear()
        _LISTED[child] = (sig, source, info)
    return info


def list_bundles(results_dir: Path, bundled_dir: Path | None = None
                 ) -> tuple[list[BundleInfo], list[StoreProblem]]:
    """All bundles of both roots, newest first (by ``created_at``, then id).

    A job id present in both roots is listed once, from ``results_dir``.
    """
    local, problems = scan_root(results_dir, SOURCE_LOCAL)
    bundled: list[BundleInfo] = []
    if bundled_dir is not None and bundled_dir.resolve() != results_dir.resolve():
        bundled, more = scan_root(bundled_dir, SOURCE_BUNDLED, results_dir)
        problems += more
    seen = {b.job_id for b in local}
    merged = local + [b for b in bundled if b.job_id not in seen]
    merged.sort(key=lambda b: (b.created_at, b.job_id), reverse=True)
    return merged, problems


def find_bundle(job_id: str, results_dir: Path, bundled_dir: Path | None = None) -> Path | None:
    """Directory of ``job_id`` (results dir first, then bundled), or None if it has no manifest.

    Raises:
        InvalidJobId: for an unsafe id (``../x``, ``a/b``, empty ...).
    """
    for root in (results_dir, bundled_dir):
        if root is None:
            continue
        path = job_path(root, job_id)
        if (path / columns.MANIFEST_FILE).is_file():
            return path
    return None
