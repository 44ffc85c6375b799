"""An SQLite index of every bundle, for the history page: filter, tag, delete, open.

The bundle directories stay the truth; the index (``<results_dir>/index.sqlite``, WAL mode) is a
cache of their manifests plus the one thing bundles do not hold: **tags**, which are stored here
and never written into a bundle (the bundled directory is read-only).

:func:`sync` brings the index up to date cheaply: it stats every ``manifest.json`` and reads
only those whose stamp changed (mtime, inode and size: a job that finished rewrote its
manifest), adds new bundles and
drops rows whose directory is gone. Call it when a page shows history and after a job or an
import finishes; it is safe from several threads and processes (one short transaction).

Tables::

    bundles(job_id PRIMARY KEY, source 'local'|'bundled', path, kernels (JSON list), gpu,
            backend, created_at, status, spec_hash, label, stamp)
    tags(job_id, tag, PRIMARY KEY(job_id, tag))
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.services import result_store
from app.services.result_store import SOURCE_BUNDLED, SOURCE_LOCAL
from profiling_worker.bundle.schema.manifest import manifest_stamp
from profiling_worker.bundle.schema import columns
from profiling_worker.bundle.schema.manifest import JobStatus, ManifestError

INDEX_FILE = "index.sqlite"
#: 2: the ``bundles`` row's cache key is the manifest's stamp (mtime ns, inode, size), was its
#: mtime (s), which one clock tick of a coarse filesystem could leave unchanged across two writes.
SCHEMA_VERSION = 2
TAG_RE = re.compile(r"^[\w.+:/-][\w .+:/-]{0,39}$")
MAX_TAGS_PER_JOB = 20
#: Statuses of a job whose directory the worker may still write: never deleted.
ACTIVE_STATUSES = frozenset({JobStatus.QUEUED, JobStatus.RUNNING})

_SCHEMA = """
CREATE TABLE IF NOT EXISTS bundles (
    job_id TEXT PRIMARY KEY, source TEXT NOT NULL, path TEXT NOT NULL, kernels TEXT NOT NULL,
    gpu TEXT NOT NULL, backend TEXT NOT NULL, created_at TEXT NOT NULL, status TEXT NOT NULL,
    spec_hash TEXT NOT NULL, label TEXT NOT NULL, stamp TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tags (
    job_id TEXT NOT NULL, tag TEXT NOT NULL, PRIMARY KEY (job_id, tag));
CREATE INDEX IF NOT EXISTS tags_by_tag ON tags(tag);
"""


class InvalidTag(ValueError):
    """A tag that is empty, too long (40), has odd characters, or is one too many."""


class NotDeletable(ValueError):
    """The bundle is read-only (bundled with the app) or not in the index."""


@dataclass(frozen=True)
class HistoryRow:
    """One indexed bundle as the history page shows it."""

    job_id: str
    source: str
    path: str
    kernels: tuple[str, ...]
    gpu: str
    backend: str
    created_at: str
    status: JobStatus
    spec_hash: str
    label: str
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class HistoryFilter:
    """What the history page filters on; empty values match everything.

    ``text`` is matched case-insensitively against job id, label, kernels, GPU and tags.
    """

    kernels: tuple[str, ...] = ()
    gpus: tuple[str, ...] = ()
    backends: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    text: str = ""


@dataclass
class SyncResult:
    """What :func:`sync` changed."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    problems: list[result_store.StoreProblem] = field(default_factory=list)


def index_path(results_dir: Path) -> Path:
    """``<results_dir>/index.sqlite``."""
    return Path(results_dir) / INDEX_FILE


def _drop_old_rows(conn: sqlite3.Connection) -> None:
    """Drop the ``bundles`` rows of an index written before ``SCHEMA_VERSION`` (they are a
    cache of the manifests, rebuilt by the next :func:`sync`; the tags stay)."""
    if conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
        conn.execute("DROP TABLE IF EXISTS bundles")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


@contextmanager
def connect(results_dir: Path) -> Iterator[sqlite3.Connection]:
    """A connection to the index (created, WAL mode), committed on success, always closed."""
    results_dir = Path(results_dir)
    results_dir.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(index_path(results_dir), timeout=10.0)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA foreign_keys=ON")
        _drop_old_rows(conn)
        conn.executescript(_SCHEMA)
        with conn:
            yield conn
    finally:
        conn.close()


def _manifests(root: Path | None, source: str, results_dir: Path,
               zips: list[result_store.StoreProblem]) -> Iterator[tuple[Path, str, str]]:
    """The job folders of ``root`` (path, source, manifest stamp); a bundle's zip among them is
    added to ``zips`` (:func:`~app.services.result_store.zip_problem`)."""
    if root is None or not root.is_dir():
        return
    for child in sorted(root.iterdir()):
        if not child.is_dir():
            zips += filter(None, [result_store.zip_problem(child, results_dir)])
            continue
        if (child.is_symlink() or child.name.startswith(".")
                or not result_store.JOB_ID_RE.match(child.name)):
            continue
        try:
            stamp = manifest_stamp(child)
        except OSError:
            stamp = ""  # reported as a problem by read_info below
        yield child, source, stamp


def sync(results_dir: Path, bundled_dir: Path | None = None) -> SyncResult:
    """Bring the index up to date with the bundle directories (reads changed manifests only).

    A job id present in both roots is indexed from ``results_dir``. Directories without a
    readable manifest are returned as problems and not indexed, and so is a bundle's zip copied
    among them (after those). Tags of a bundle that is gone are removed with its row.
    """
    out = SyncResult()
    results_dir = Path(results_dir)
    same = bundled_dir is not None and Path(bundled_dir).resolve() == results_dir.resolve()
    found: dict[str, tuple[Path, str, str]] = {}
    zips: list[result_store.StoreProblem] = []
    for root, source in ((results_dir, SOURCE_LOCAL), (None if same else bundled_dir,
                                                       SOURCE_BUNDLED)):
        for path, src, stamp in _manifests(root, source, results_dir, zips):
            found.setdefault(path.name, (path, src, stamp))
    with connect(results_dir) as conn:
        known = {r[0]: (r[1], r[2], r[3]) for r in
                 conn.execute("SELECT job_id, source, path, stamp FROM bundles")}
        for job_id, (path, source, stamp) in found.items():
            if known.get(job_id) == (source, str(path), stamp):
                continue
            try:
                info = result_store.read_info(path, source)
            except ManifestError as exc:
                out.problems.append(result_store.StoreProblem(path, str(exc)))
                conn.execute("DELETE FROM bundles WHERE job_id = ?", (job_id,))
                continue
            conn.execute(
                "INSERT OR REPLACE INTO bundles VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (job_id, source, str(path), json.dumps(list(info.kernels)), info.gpu_name,
                 info.backend, info.created_at, info.status,
                 result_store.spec_hash(info.manifest), info.label, stamp))
            (out.updated if job_id in known else out.added).append(job_id)
        gone = [j for j in known if j not in found or j in
                {p.path.name for p in out.problems}]
        for job_id in gone:
            conn.execute("DELETE FROM bundles WHERE job_id = ?", (job_id,))
            if job_id not in found:
                conn.execute("DELETE FROM tags WHERE job_id = ?", (job_id,))
                out.removed.append(job_id)
    out.problems += zips
    return out


def sync_quietly(results_dir: Path, bundled_dir: Path | None = None) -> SyncResult | None:
    """:func:`sync` for a job that just ended (called from the job manager's lane thread):
    None, with the reason on stderr, when the index cannot be written (disk full)."""
    try:
        return sync(results_dir, bundled_dir)
    except sqlite3.OperationalError as exc:
        print(f"kprof history index: not updated: {exc}", file=sys.stderr, flush=True)
        return None


def read_history(results_dir: Path, bundled_dir: Path | None = None
                 ) -> tuple[SyncResult, list[HistoryRow], str]:
    """:func:`sync`, then every row: what the history page shows.

    When the index cannot be written or read (``sqlite3.OperationalError``: disk full, a
    read-only directory) the rows are listed from the bundle directories instead, with the
    tags last indexed where the index can still be read, and the error text is returned
    (empty when the index worked).
    """
    try:
        return sync(results_dir, bundled_dir), rows(results_dir), ""
    except sqlite3.OperationalError as exc:
        error = str(exc)
    try:
        tags = {r.job_id: r.tags for r in rows(results_dir)}
    except sqlite3.OperationalError:
        tags = {}
    bundles, problems = result_store.list_bundles(Path(results_dir), bundled_dir)
    found = [HistoryRow(job_id=b.job_id, source=b.source, path=str(b.path), kernels=b.kernels,
                        gpu=b.gpu_name, backend=b.backend, created_at=b.created_at,
                        status=b.status, spec_hash=result_store.spec_hash(b.manifest),
                        label=b.label, tags=tags.get(b.job_id, ())) for b in bundles]
    return SyncResult(problems=problems), found, error


def _row(r: tuple[Any, ...], tags: dict[str, list[str]]) -> HistoryRow:
    return HistoryRow(job_id=r[0], source=r[1], path=r[2], kernels=tuple(json.loads(r[3])),
                      gpu=r[4], backend=r[5], created_at=r[6], status=JobStatus(r[7]),
                      spec_hash=r[8], label=r[9], tags=tuple(sorted(tags.get(r[0], ()))))


def rows(results_dir: Path, flt: HistoryFilter | None = None) -> list[HistoryRow]:
    """Indexed bundles matching ``flt``, newest first (``created_at``, then id)."""
    flt = flt or HistoryFilter()
    with connect(results_dir) as conn:
        tags: dict[str, list[str]] = {}
        for job_id, tag in conn.execute("SELECT job_id, tag FROM tags"):
            tags.setdefault(job_id, []).append(tag)
        found = [_row(r, tags) for r in conn.execute(
            "SELECT job_id, source, path, kernels, gpu, backend, created_at, status, "
            "spec_hash, label FROM bundles ORDER BY created_at DESC, job_id DESC")]
    return [r for r in found if matches(r, flt)]


def matches(row: HistoryRow, flt: HistoryFilter) -> bool:
    """True when ``row`` passes every non-empty field of ``flt``."""
    if flt.kernels and not set(flt.kernels) & set(row.kernels):
        return False
    if flt.gpus and row.gpu not in flt.gpus:
        return False
    if flt.backends and row.backend not in flt.backends:
        return False
    if flt.statuses and row.status not in flt.statuses:
        return False
    if flt.tags and not set(flt.tags) & set(row.tags):
        return False
    text = flt.text.strip().lower()
    if text:
        hay = " ".join([row.job_id, row.label, row.gpu, *row.kernels, *row.tags]).lower()
        return all(word in hay for word in text.split())
    return True


def facets(found: list[HistoryRow]) -> dict[str, list[str]]:
    """Distinct kernels, GPUs, backends, statuses and tags of ``found`` (filter choices)."""
    return {
        "kernels": sorted({k for r in found for k in r.kernels}),
        "gpus": sorted({r.gpu for r in found if r.gpu}),
        "backends": sorted({r.backend for r in found}),
        "statuses": sorted({r.status for r in found}),
        "tags": sorted({t for r in found for t in r.tags}),
    }


def check_tag(tag: str) -> str:
    """The tag, stripped, if it is 1-40 letters, digits, space or ``_ . + : / -``.

    Raises:
        InvalidTag: otherwise.
    """
    tag = (tag or "").strip()
    if not TAG_RE.match(tag):
        raise InvalidTag(f"{tag[:40]!r} is not a tag (1-40 letters, digits, spaces, _ . + : / -)")
    return tag


def add_tag(results_dir: Path, job_id: str, tag: str) -> None:
    """Tag an indexed bundle (bundled ones too: the tag lives in the index).

    Raises:
        InvalidTag: a malformed tag or more than :data:`MAX_TAGS_PER_JOB`.
        KeyError: ``job_id`` is not indexed.
    """
    tag = check_tag(tag)
    with connect(results_dir) as conn:
        if conn.execute("SELECT 1 FROM bundles WHERE job_id = ?", (job_id,)).fetchone() is None:
            raise KeyError(f"{job_id}: not in the history index")
        n = conn.execute("SELECT COUNT(*) FROM tags WHERE job_id = ?", (job_id,)).fetchone()[0]
        if n >= MAX_TAGS_PER_JOB:
            raise InvalidTag(f"{job_id} already has {n} tags (at most {MAX_TAGS_PER_JOB})")
        conn.execute("INSERT OR IGNORE INTO tags VALUES (?, ?)", (job_id, tag))


def remove_tag(results_dir: Path, job_id: str, tag: str) -> None:
    """Remove one tag from a bundle (nothing happens if it had no such tag)."""
    with connect(results_dir) as conn:
        conn.execute("DELETE FROM tags WHERE job_id = ? AND tag = ?", (job_id, tag))


def delete(results_dir: Path, job_id: str) -> Path:
    """Delete a bundle of the results dir: its directory, its index row and its tags.

    Raises:
        NotDeletable: the bundle is bundled with the app (read-only), queued or running, or
            not indexed.
        result_store.InvalidJobId: unsafe id.
    """
    with connect(results_dir) as conn:
        row = conn.execute("SELECT source, status FROM bundles WHERE job_id = ?",
                           (job_id,)).fetchone()
    if row is None:
        raise NotDeletable(f"{job_id}: not in the history index")
    if row[0] != SOURCE_LOCAL:
        raise NotDeletable(f"{job_id}: bundled with the app, read-only")
    if JobStatus(row[1]) in ACTIVE_STATUSES:
        raise NotDeletable(f"{job_id}: the job is {row[1]}; cancel it first")
    try:
        path = result_store.delete_bundle(Path(results_dir), job_id)
    except FileNotFoundError as exc:
        raise NotDeletable(str(exc)) from exc
    with connect(results_dir) as conn:
        conn.execute("DELETE FROM bundles WHERE job_id = ?", (job_id,))
        conn.execute("DELETE FROM tags WHERE job_id = ?", (job_id,))
    return path
