"""A dashboard bundle shared as a zip (the Files page's "Download the whole bundle"), reopened as
the job it is.

A zip is a bundle by its content: a ``manifest.json`` at its root or one folder deep (the Files
page writes ``<job_id>/<relpath>``: :func:`app.core.bundle_files.zip_chunks`) that
:func:`~profiling_worker.bundle.schema.manifest.read_manifest` accepts, and the folder then loads
with the one loader (:func:`~profiling_worker.bundle.loader.load_bundle`). A zip without such a
``manifest.json`` is not a bundle and keeps the sniffer's refusal (``a zip archive``).

Before anything is written, every entry is checked: a plain relative path inside the bundle's
folder (no ``..``, no absolute or drive path, no backslash: zip-slip), a regular file or folder
(no symlink or device), not encrypted, no name twice, at most :data:`MAX_ENTRIES` entries. The
bytes written are counted as they are inflated (the sizes a zip declares are not trusted) and
stop at the cap of every ``.gz`` (:func:`~profiling_worker.bundle.inflate.inflate_cap`: 20x the
zip, at least 64 MiB, at most 2 GiB): a zip bomb costs at most that much temporary disk. The
bundle is unpacked in a hidden folder of the results directory and renamed into place: a refused
zip leaves nothing.

The job keeps its id where it is free; where a different job has it (in the results or among the
bundled jobs) it gets ``<id>-2`` (``-3`` ...), the manifest's ``job_id`` rewritten and the event's
``note`` saying so; the same job already there (an identical ``manifest.json``) is not imported
twice: the event names the job that is there.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import stat
import tempfile
import zipfile
import zlib
from collections.abc import Collection, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from profiling_worker.bundle.errors import ImportFailed
from profiling_worker.bundle.inflate import (MAX_INFLATED_BYTES, MAX_RATIO, MIN_CAP_BYTES,
                                             inflate_cap)
from profiling_worker.bundle.schema import columns as C

#: Most entries a bundle's zip may hold (a bundle has tens of files).
MAX_ENTRIES = 10_000
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
_CHUNK = 1 << 20
_DRIVE = re.compile(r"^[A-Za-z]:")
_JOB_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
#: What a refused bundle zip was expected to be.
EXPECTED = ("a dashboard bundle's zip as the Files page writes it (`<job_id>/manifest.json`, "
            "`<job_id>/tables/...`)")
HINT_ZIP_AGAIN = ("download the bundle again from the Files page (\"Download the whole "
                  "bundle\") and import that zip unchanged")
#: The words of a bundle zip (:func:`~profiling_worker.importing.sniff.kind_words`).
WORDS = "a dashboard bundle (zip)"


def is_zip(head: bytes) -> bool:
    """True when ``head`` begins like a zip archive."""
    return head[:4] in _ZIP_MAGICS


def manifest_root(names: Sequence[str]) -> str | None:
    """Where the zip's bundle is: ``""`` (``manifest.json`` at the root) or ``"<folder>/"``
    (one folder deep, as the Files page writes it); None when it has no such ``manifest.json``
    (not a bundle).

    Raises:
        ImportFailed: manifests of several bundles (one bundle per zip)."""
    if C.MANIFEST_FILE in names:
        return ""
    roots = sorted({n[:-len(C.MANIFEST_FILE)] for n in names
                    if n.endswith("/" + C.MANIFEST_FILE) and n.count("/") == 1})
    if len(roots) > 1:
        raise ImportFailed(f"a zip of {len(roots)} bundles ({', '.join(r[:-1] for r in roots[:4])}"
                           "); one bundle per zip is imported", "zip each bundle's folder on its "
                           "own (the Files page's download of each job) and import those zips")
    return roots[0] if roots else None


def bundle_root_of(data: bytes) -> str | None:
    """:func:`manifest_root` of an uploaded zip held in memory (None when it is no zip or no
    bundle; its entries are checked when it is imported)."""
    if not is_zip(data[:4]):
        return None
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            return manifest_root(zf.namelist())
    except (zipfile.BadZipFile, ImportFailed, ValueError, OSError):
        return None


def bundle_root(path: Path) -> str | None:
    """:func:`manifest_root` of the zip file ``path`` (None when it is no zip or no bundle).

    Raises:
        ImportFailed: several bundles in it."""
    try:
        with open(path, "rb") as fh:
            if not is_zip(fh.read(4)):
                return None
        with zipfile.ZipFile(path) as zf:
            return manifest_root(zf.namelist())
    except (zipfile.BadZipFile, OSError, ValueError):
        return None


def _refused(name: str, what: str, fix: str = HINT_ZIP_AGAIN) -> ImportFailed:
    return ImportFailed(f"{name}: {what}; expected {EXPECTED}", fix)


def _entry_problem(info: zipfile.ZipInfo, root: str) -> str | None:
    """Why one entry may not be unpacked (None: it may)."""
    name = info.filename
    parts = PurePosixPath(name).parts
    if ("\\" in name or name.startswith("/") or _DRIVE.match(name) or ".." in parts
            or "\x00" in name or not parts):
        return f"an entry whose path leads out of the folder it unpacks into ({name[:120]!r})"
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    if kind == stat.S_IFLNK:
        return f"a symbolic link ({name[:120]!r}), which is never unpacked"
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        return f"an entry that is not a plain file or folder ({name[:120]!r})"
    if info.flag_bits & 0x1:
        return f"an encrypted entry ({name[:120]!r})"
    if not name.startswith(root):
        return (f"an entry outside the bundle's folder {root[:-1]!r} ({name[:120]!r})" if root
                else f"an entry {name[:120]!r} beside the bundle")
    return None


def check_entries(zf: zipfile.ZipFile, root: str, name: str, cap: int) -> None:
    """Refuse a zip whose entries may not be unpacked (:func:`_entry_problem`), that holds more
    than :data:`MAX_ENTRIES` entries or a name twice, or that declares more than ``cap`` bytes.

    Raises:
        ImportFailed: the first problem found."""
    infos = zf.infolist()
    if len(infos) > MAX_ENTRIES:
        raise _refused(name, f"a zip of {len(infos):,} entries (at most {MAX_ENTRIES:,})")
    seen: set[str] = set()
    for info in infos:
        problem = _entry_problem(info, root)
        if problem:
            raise _refused(name, f"a zip with {problem}", "zip the bundle's folder as it is "
                           "(plain files only), or download it again from the Files page")
        if info.filename.rstrip("/") in seen:
            raise _refused(name, f"a zip holding {info.filename[:120]!r} twice")
        seen.add(info.filename.rstrip("/"))
    declared = sum(i.file_size for i in infos)
    if declared > cap:
        raise _too_large(name, declared, cap)


def _too_large(name: str, size: int, cap: int) -> ImportFailed:
    return _refused(name, f"a zip that expands to more than {cap / 1024**2:,.0f} MiB ({size:,} "
                    f"bytes or more; the cap is {MAX_RATIO}x the zip, at least "
                    f"{MIN_CAP_BYTES // 1024**2} MiB and at most "
                    f"{MAX_INFLATED_BYTES // 1024**3} GiB, as for every .gz)",
                    "copy the bundle's folder into the results directory on the server instead")


def extract(zf: zipfile.ZipFile, root: str, dest: Path, name: str, cap: int) -> None:
    """Unpack the entries under ``root`` into ``dest`` (``root`` stripped), counting the bytes
    written, whatever the zip declares, up to ``cap``.

    Raises:
        ImportFailed: more than ``cap`` bytes, or an entry that cannot be inflated."""
    base = dest.resolve()
    written = 0
    for info in zf.infolist():
        rel = info.filename[len(root):]
        if not rel.strip("/"):
            continue
        target = (base / rel).resolve()
        if not target.is_relative_to(base):  # checked before; never written outside
            raise _refused(name, f"a zip with an entry that leads out of its folder ({rel!r})")
        if info.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            with zf.open(info) as src, open(target, "xb") as dst:
                while chunk := src.read(_CHUNK):
                    written += len(chunk)
                    if written > cap:
                        raise _too_large(name, written, cap)
                    dst.write(chunk)
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
            raise _refused(name, f"a zip whose entry {info.filename[:120]!r} cannot be inflated "
                           f"({exc})") from exc


def _load(folder: Path, name: str) -> dict[str, Any]:
    """The manifest of the unpacked bundle, after the one loader read it all.

    Raises:
        ImportFailed: no valid manifest, or the loader refuses the folder."""
    from profiling_worker.bundle.loader import load_bundle
    from profiling_worker.bundle.schema.manifest import ManifestError

    try:
        return load_bundle(folder).manifest
    except ManifestError as exc:
        why = str(exc).split(": ", 1)[-1]
        raise _refused(name, f"a zip holding a bundle whose manifest.json is not valid ({why})"
                       ) from exc


#: Keys a reopened job's manifest changes (:func:`_same_job` leaves them out).
_REOPEN_KEYS = ("job_id", "reopened")


def _same_job(manifest: dict[str, Any], there: Path) -> bool:
    """True when the bundle ``there`` is the job of ``manifest`` (the same manifest, but for
    the id and the record of a reopening)."""
    try:
        theirs = json.loads((there / C.MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(theirs, dict) and all(
        {k: v for k, v in m.items() if k not in _REOPEN_KEYS}
        == {k: v for k, v in manifest.items() if k not in _REOPEN_KEYS} for m in (theirs,))


def import_bundle_zip(path: Path, out_dir: Path, *, reserved: Collection[Path] = ()
                      ) -> dict[str, Any]:
    """Reopen the bundle zip ``path`` as a job of ``out_dir``.

    Args:
        reserved: the bundled jobs' folders (their ids are taken too).

    Returns:
        A ``result`` event (``bundle``: its folder; ``files``: the zip's name; ``note``: a
        suffixed id or the job that was already there, else "") or an ``error`` event
        (``kind``, ``message``, ``hint``, ``files``), as ``import --each`` prints them.
    """
    name = path.name
    try:
        return _import(path, Path(out_dir), reserved)
    except ImportFailed as exc:
        return {"event": "error", **exc.to_event_fields(), "files": [name],
                "job_id": path.stem}
    except Exception as exc:  # a fault here must not cost the other files their import
        from profiling_worker.bundle.errors import ImportInternalError

        fault = ImportInternalError(
            f"the reopening of {name[:120]} failed ({type(exc).__name__}: {str(exc)[:300]}); "
            "this is a fault of the importer, not of the zip", "report this with the zip; the "
            "other files of the import have their own results")
        return {"event": "error", **fault.to_event_fields(), "files": [name],
                "job_id": path.stem}


def _import(path: Path, out_dir: Path, reserved: Collection[Path]) -> dict[str, Any]:
    from profiling_worker.bundle.file_mode import folder_as_if_made
    from profiling_worker.bundle.schema.manifest import JobStatus, now_iso, write_manifest

    name = path.name
    root = bundle_root(path)
    if root is None:
        raise _refused(name, "a zip archive with no manifest.json at its root or one folder "
                       "deep: not a dashboard bundle", "unpack it (`unzip FILE`) and upload the "
                       "files it holds (nsight-python's CSVs, Nsight Compute reports)")
    cap = inflate_cap(path)
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".import-zip-", dir=out_dir))
    try:
        with zipfile.ZipFile(path) as zf:
            check_entries(zf, root, name, cap)
            extract(zf, root, tmp, name, cap)
        manifest = _load(tmp, name)
        wanted = str(manifest.get("job_id", ""))
        if not _JOB_ID_RE.match(wanted) or ".." in wanted:
            raise _refused(name, f"a bundle whose job_id {wanted[:80]!r} is not a plain folder "
                           "name (letters, digits, '_', '.', '-')")
        by_id = {p.name: p for p in reserved}
        job_id, k = wanted, 1
        while (there := by_id.get(job_id) or out_dir / job_id).exists():
            if _same_job(manifest, there):
                shutil.rmtree(tmp, ignore_errors=True)
                return {"event": "result", "status": JobStatus.DONE.value, "bundle": str(there),
                        "files": [name], "already_here": True,
                        "note": f"this job is already on this dashboard as "
                        f"{job_id} (the same manifest.json): nothing was imported, {job_id} is "
                        "shown"}
            k += 1
            job_id = f"{wanted}-{k}"
        note = ""
        if job_id != wanted:
            note = (f"job id {wanted} is taken on this dashboard by a different job: imported "
                    f"as {job_id}")
        write_manifest(tmp, {**manifest, "job_id": job_id,
                             "reopened": {"zip": name, "job_id": wanted, "at": now_iso()}})
        folder_as_if_made(tmp)
        final = out_dir / job_id
        try:
            tmp.rename(final)
        except OSError as exc:
            raise ImportFailed(f"{job_id}: cannot create the bundle in {out_dir.name} "
                               f"({exc.strerror or exc})", "check that the results folder is "
                               "writable") from exc
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return {"event": "result", "status": JobStatus.DONE.value, "bundle": str(final),
            "files": [name], "note": note}


def is_bundle_zip(path: Path) -> bool:
    """True when the file ``path`` holds a bundle's zip (:func:`bundle_root`); a zip of several
    bundles counts (its import says why it is refused)."""
    try:
        return path.is_file() and bundle_root(path) is not None
    except ImportFailed:
        return True


#: The note on a bundle zip found in a folder given to ``import``: not read into the bundle of
#: the folder's other files, reopened on its own (:func:`split_sources`).
REOPENED_ON_ITS_OWN = f"{WORDS}, reopened as its own job"


def split_sources(sources: Sequence[Path]) -> tuple[list[Path], list[Path]]:
    """The bundle zips among ``sources`` (:func:`is_bundle_zip`: files given by name, and the
    files of a folder given, as the folder's other files are read) and the rest, each in its
    order. A folder stays among the rest unless it held bundle zips and nothing else: its other
    files make their own import, which notes the zips (:data:`REOPENED_ON_ITS_OWN`). A fresh
    user's find: a folder's bundle zip was left out as "a zip archive with no manifest.json",
    which it has; a user who gives the folder expects what naming each file does."""
    zips: list[Path] = []
    rest: list[Path] = []
    for src in map(Path, sources):
        if not src.is_dir():
            (zips if is_bundle_zip(src) else rest).append(src)
            continue
        files = sorted(p for p in src.iterdir() if p.is_file())
        inside = [p for p in files if is_bundle_zip(p)]
        zips += inside
        if not inside or len(inside) < len(files):
            rest.append(src)
    return zips, rest


__all__ = ["MAX_ENTRIES", "REOPENED_ON_ITS_OWN", "WORDS", "bundle_root", "bundle_root_of",
           "check_entries", "extract", "import_bundle_zip", "is_bundle_zip", "is_zip",
           "manifest_root", "split_sources"]
