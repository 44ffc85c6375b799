"""Restart recovery: jobs a gone server left queued or running end ``interrupted``.

Run once when a server starts (``app/cli.py`` before Streamlit starts, and the job manager's
constructor for servers started otherwise). An orphaned worker still profiling is killed first
(it holds the GPU and nobody watches it); tables of an unfinished run go to ``partial/``.

Also the disk reserve of a job: a small file written at submit and deleted when the job's
final manifest must be written on a full disk, so a job that ran out of space still ends
``failed`` (``disk_full``) on disk instead of staying ``running``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any

from profiling_worker.bundle.errors import DISK_FULL_HINT, DiskFull, JobError
from profiling_worker.bundle.schema import columns
from profiling_worker.bundle.schema.manifest import (RESULT_READY_KEY, JobStatus, ManifestError,
                                                     now_iso, read_manifest, write_manifest)
from profiling_worker.bundle.schema.owner import owner_of

from app.services import worker_client
from app.services.sweep_plan import SWEEP_FILE

PARTIAL_DIR = "partial"  # where the tables of a job that did not finish are set aside
ORPHAN_KILL_WAIT_S = 10.0  # how long a restarted server waits for an orphaned worker to die
RESERVE_FILE = ".disk-reserve"  # hidden: never listed as a bundle file
RESERVE_BYTES = 256 * 1024  # room for a final manifest with its log tail (a few kB)


def mark_interrupted(results_dir: Path) -> list[str]:
    """Mark jobs left queued/running by a process that is gone as ``interrupted``
    (:func:`interrupt_orphaned` on each job folder of ``results_dir``).

    A job whose owner (its manifest's ``server``, else its ``worker``: one run from a shell,
    :func:`profiling_worker.bundle.schema.owner.owner_of`) is a live process on this host
    (another server sharing the directory, a worker run from a shell), or a process on another
    host (its liveness cannot be checked), is left alone, and so is a cluster sweep (a folder
    with ``sweep.json``): its tasks run on in Slurm, and the sweep executor watches it again
    (:mod:`app.services.sweep_resume`). A link to a folder is never followed
    (:func:`job_folders`). Returns the ids it marked.
    """
    marked: list[str] = []
    for child in job_folders(results_dir):
        try:
            manifest = read_manifest(child)
        except (ManifestError, NotADirectoryError):
            continue
        if (child / SWEEP_FILE).is_file():
            continue  # a cluster sweep: resumed, not interrupted
        if interrupt_orphaned(child, manifest):
            marked.append(child.name)
    return marked


def interrupt_orphaned(job_dir: Path, manifest: dict[str, Any]) -> bool:
    """End the job ``interrupted`` when it is unfinished and its owner is gone; True if it
    was. A worker the gone server left running is killed first (it holds the GPU and nobody
    watches it); tables it wrote are moved to ``partial/``, apart from finished results. A
    manifest that cannot be written is said on stderr (False)."""
    if JobStatus(manifest["status"]).finished or owner_alive(owner_of(manifest)):
        return False
    _kill_orphan_worker(job_dir, manifest.get("worker") or {})
    try:
        manifest = read_manifest(job_dir)  # the worker may have finished meanwhile
    except ManifestError:
        return False
    if JobStatus(manifest["status"]).finished:
        return False
    set_aside_unless_ready(job_dir, manifest)
    owner = owner_of(manifest).get("process") or "dashboard server"  # unnamed: written before
    manifest.update(status=JobStatus.INTERRUPTED.value, finished_at=now_iso(),
                    error=interrupted_error(job_dir, str(owner),
                                            ran=manifest["status"] != JobStatus.QUEUED.value,
                                            ready=result_was_ready(manifest)))
    try:
        _write_final(job_dir, manifest)
    except OSError as exc:
        print(f"kprof job manager: cannot mark {job_dir.name} interrupted: {exc}",
              file=sys.stderr, flush=True)
        return False
    return True


def job_folders(results_dir: Path) -> list[Path]:
    """The folders of ``results_dir``, sorted, that recovery may touch: real folders, never a
    link (a link to a folder elsewhere is not the store's: its manifest is not rewritten, its
    tables not moved, its sweep not resumed). Empty when ``results_dir`` is not a folder."""
    if not results_dir.is_dir():
        return []
    return [child for child in sorted(results_dir.iterdir())
            if not child.is_symlink() and child.is_dir()]


def _write_final(job_dir: Path, manifest: dict[str, Any]) -> None:
    """Write a final manifest, in the job's disk reserve when the disk is full."""
    try:
        write_manifest(job_dir, manifest)
    except OSError:
        if not release_space(job_dir):
            raise
        write_manifest(job_dir, manifest)
    release_space(job_dir)


def start_failed_error(worker_python: str, exc: OSError) -> JobError:
    """The error of a job whose worker interpreter could not be started."""
    return {
        "kind": "worker_python_missing" if isinstance(exc, FileNotFoundError)
        else "worker_start_failed",
        "message": f"Cannot start the worker interpreter {worker_python}: {exc}",
        "hint": "Set KPROF_WORKER_PYTHON to a Python that has profiling_worker (and, for GPU "
                "backends, nsight-python and torch) installed, then submit again.",
        "log_tail": "",
    }


def internal_error(job_dir: Path, exc: Exception) -> JobError:
    """The error of a job the job manager itself failed to run (a bug: see the server log)."""
    return {"kind": "internal",
            "message": f"The job manager failed running this job: {type(exc).__name__}: {exc}",
            "hint": "Read the server log; submit the job again.",
            "log_tail": safe_log_tail(job_dir)}


def interrupted_error(job_dir: Path, owner: str = "dashboard server",
                      ran: bool = True, ready: bool = False) -> JobError:
    """The error of a job whose owner (``owner``: the process that queued or ran it, as a
    manifest names it) stopped before it finished; ``ran``: its worker had started (a queued
    job never ran, and a fresh user of session 23 read of one that it "keeps none of its
    runs", with tables set aside); ``ready``: its worker had written its result (runs and
    aggregated, :func:`result_was_ready`), which the job keeps."""
    if not ran:
        return {"kind": "interrupted",
                "message": f"The {owner} stopped while this job was queued: it never ran.",
                "hint": "Submit the job again.", "log_tail": ""}
    if ready:
        return {"kind": "interrupted",
                "message": f"The {owner} stopped while this job's worker wrote its bundle, "
                           "after its runs and aggregated tables.",
                "hint": f"{RESULT_KEPT} Submit the job again for the whole bundle.",
                "log_tail": safe_log_tail(job_dir)}
    return {"kind": "interrupted",
            "message": f"The {owner} stopped while this job was running.",
            # a fresh user of session 22 looked for the partial/ this promised: a killed
            # worker writes no tables, so there was none
            "hint": "Submit the job again. A worker stopped this way keeps none of its runs; "
                    f"any tables it had written are set aside in {PARTIAL_DIR}/, not a result.",
            "log_tail": safe_log_tail(job_dir)}


#: What a job whose worker stopped after saying its result ready keeps (issue 40).
RESULT_KEPT = ("Its runs and aggregated tables were written whole and are kept; the tables the "
               "worker had not written yet are named missing.")


def result_was_ready(manifest: dict[str, Any]) -> bool:
    """True when the worker said in ``manifest`` that it had written the job's runs and
    aggregated tables (``result_ready``, :func:`profiling_worker.bundle.writer.
    mark_result_ready`)."""
    return isinstance(manifest.get(RESULT_READY_KEY), str)


def set_aside_unless_ready(job_dir: Path, manifest: dict[str, Any]) -> None:
    """:func:`set_aside_partial` for a job that did not finish, unless its worker had said its
    result ready (:func:`result_was_ready`): each table is written whole (a temporary name,
    then a rename), so its runs and aggregated tables are a result, and the loader names the
    tables it lacks (``Bundle.missing``)."""
    if not result_was_ready(manifest):
        set_aside_partial(job_dir)


def set_aside_partial(job_dir: Path) -> None:
    """Move the ``tables/`` of a job that did not finish to ``partial/tables`` so no view
    reads them as results; the files stay for inspection."""
    tables = job_dir / columns.TABLES_DIR
    if not tables.is_dir():
        return
    dest = job_dir / PARTIAL_DIR / columns.TABLES_DIR
    try:
        dest.parent.mkdir(exist_ok=True)
        if dest.exists():
            shutil.rmtree(dest)
        tables.rename(dest)
    except OSError as exc:
        print(f"kprof job manager: cannot set aside {tables}: {exc}", file=sys.stderr, flush=True)


def _kill_orphan_worker(job_dir: Path, worker: dict[str, Any]) -> None:
    """SIGKILL the process group of the job's worker if it still runs on this host (checked
    against /proc/<pid>/cmdline, so a reused pid is never hit) and wait for it to go."""
    pid = worker.get("pid")
    if worker.get("host") != socket.gethostname() or not isinstance(pid, int) or pid <= 1:
        return
    # a warm worker (profiling_worker serve) has no job dir in its argv: match it by its command
    marker = b"serve" if worker.get("warm") else str(job_dir).encode()
    started = _start_time(pid)
    if started is None or not _is_worker_of(pid, marker):
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    # Wait on the process itself, not its argv: a dying process's cmdline reads empty before
    # it is gone (under load for a while), and a reused pid has another start time.
    deadline = time.monotonic() + ORPHAN_KILL_WAIT_S
    while _start_time(pid) == started and time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)  # reap it if it is our own child (tests)
        time.sleep(0.05)


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (state first), None if gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _start_time(pid: int) -> str | None:
    """``pid``'s start time (clock ticks since boot, /proc/<pid>/stat field 22) while it lives
    and is not a zombie, else None."""
    fields = _stat_fields(pid)
    return fields[19] if fields and len(fields) > 19 and fields[0] != "Z" else None


def _is_worker_of(pid: int, marker: bytes) -> bool:
    """True while ``pid`` is a live profiling_worker process with ``marker`` in its argv."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return _start_time(pid) is not None and b"profiling_worker" in argv and marker in argv


def safe_log_tail(job_dir: Path) -> str:
    try:
        return worker_client.log_tail(job_dir)
    except OSError:
        return ""


def owner_alive(server: dict[str, Any]) -> bool:
    """True while the server a manifest names (``{"pid", "host"}``) may still run: its pid
    lives on this host, or it is on another host (not ours to judge). This process's own pid
    counts as gone (a server that restarted in place)."""
    pid = server.get("pid")
    if server.get("host") not in (None, socket.gethostname()):
        return True  # a server on another host sharing the directory: not ours to judge
    if not isinstance(pid, int) or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True



def reserve_space(job_dir: Path) -> None:
    """Write the job's disk reserve (:data:`RESERVE_BYTES` of zeros, really allocated).

    Raises:
        OSError: the disk is already full (the job is not accepted).
    """
    with open(job_dir / RESERVE_FILE, "wb") as fh:
        fh.write(b"\0" * RESERVE_BYTES)


def release_space(job_dir: Path) -> bool:
    """Delete the job's disk reserve; True if there was one."""
    try:
        (job_dir / RESERVE_FILE).unlink()
        return True
    except FileNotFoundError:
        return False


def disk_full_error(job_dir: Path, error: JobError | None) -> JobError | None:
    """``error`` as a ``disk_full`` error when the job's file system has (almost) no space
    left and the worker left no better reason; else ``error`` unchanged."""
    known = error.get("kind") if error else None
    if known not in (None, "worker_died"):
        return error
    try:
        free = shutil.disk_usage(job_dir).free
    except OSError:
        return error
    if free > RESERVE_BYTES:
        return error
    return {"kind": DiskFull.kind,
            "message": f"The disk of the results directory is full ({free} bytes free): the "
                       "worker could not write its result.",
            "hint": DISK_FULL_HINT.format(where=job_dir.parent),
            "log_tail": safe_log_tail(job_dir)}
