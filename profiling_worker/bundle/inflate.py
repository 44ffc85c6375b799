"""The one capped, streamed path for every ``.gz`` and every report read (import, summaries,
deep dive, rule digest, the app's ``.ncu-rep`` download). ``ncu_report`` reads plain files only.

- Inflation streams 1 MiB at a time to a file in :func:`scratch_dir` and stops at
  :func:`inflate_cap` (at most 20x the compressed size, never more than 2 GiB): a bomb costs
  at most that much temporary disk and a few MiB of memory.
- A report (``*.ncu-rep[.gz]``) is walked block by block as it streams
  (:mod:`profiling_worker.bundle.report_walk`): padding after its last block is refused at the byte
  where it starts, before ``ncu_report`` (which takes ~64 MB per MiB of zeros) sees it, and so
  is padding made of valid blocks: the walk's budget of blocks (empty ones and all) stops it
  at the block that exceeds it. Output bytes and blocks are both bounded.
- Temporary files live in a folder named by the process id, removed on exit; a process that
  was killed leaves its folder, and the next one to call :func:`scratch_dir` removes it.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, BinaryIO

from profiling_worker.bundle.report_walk import ReportLayoutError, ReportWalk

#: Most a ``.gz`` may expand to, whatever its size (a report of many launches is a few 100 MB).
MAX_INFLATED_BYTES = 2 * 1024**3
#: Most a ``.gz`` may expand to, as a multiple of its own size (reports seen: 9x to 17x).
MAX_RATIO = 20
#: Floor of the ratio cap, so that a small report is never refused for its ratio alone.
MIN_CAP_BYTES = 64 * 1024**2
_CHUNK = 1 << 20
_SCRATCH_PREFIX = "kprof-scratch-"


class InflateError(ValueError):
    """A ``.gz`` that is not gzip, is cut short, or expands beyond the cap, or a report with
    bytes after its last block; ``hint`` says what to do."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.message = message
        self.hint = hint


class InflateStopped(InflateError):
    """An inflation its caller stopped (the download's client left): nothing is kept."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def sweep_scratch() -> Path:
    """Remove the scratch folders of processes that no longer run (killed before they cleaned
    up: an inflated report, an upload); returns the root ``<tmp>/kprof-scratch-<uid>`` (0700).
    Every worker command and the dashboard's start call it."""
    root = Path(tempfile.gettempdir()) / f"{_SCRATCH_PREFIX}{os.getuid()}"
    root.mkdir(mode=0o700, exist_ok=True)
    for child in root.iterdir():
        if child.name.isdigit() and int(child.name) != os.getpid() and not _alive(int(child.name)):
            shutil.rmtree(child, ignore_errors=True)
    return root


def scratch_dir() -> Path:
    """This process's folder for temporary files (``<tmp>/kprof-scratch-<uid>/<pid>``, 0700),
    after :func:`sweep_scratch`."""
    mine = sweep_scratch() / str(os.getpid())
    mine.mkdir(mode=0o700, exist_ok=True)
    return mine


def inflate_cap(src: Path, max_bytes: int = MAX_INFLATED_BYTES) -> int:
    """Bytes ``src`` may expand to: ``min(max_bytes, max(MAX_RATIO x size, MIN_CAP_BYTES))``."""
    return min(max_bytes, max(MAX_RATIO * src.stat().st_size, MIN_CAP_BYTES))


def is_report_name(name: str) -> bool:
    """True for ``*.ncu-rep`` and ``*.ncu-rep.gz`` (any case)."""
    return name.lower().removesuffix(".gz").endswith(".ncu-rep")


def _walk_for(src: Path) -> ReportWalk | None:
    return ReportWalk(src.name) if is_report_name(src.name) else None


def _layout_error(exc: ReportLayoutError) -> InflateError:
    return InflateError(str(exc), "give the report as Nsight Compute wrote it, with nothing "
                                  "appended (a report followed by other data or zeros is refused "
                                  "before it is read)")


def _copy_capped(fin: gzip.GzipFile, fout: IO[bytes], src: Path, cap: int,
                 walk: ReportWalk | None, stop: threading.Event | None) -> None:
    written = 0
    while chunk := fin.read(_CHUNK):
        if stop is not None and stop.is_set():
            raise InflateStopped(f"{src.name}: inflation stopped after {written:,} bytes",
                                 "nobody waits for it any more")
        written += len(chunk)
        if written > cap:
            raise InflateError(
                f"{src.name}: expands to more than {cap / 1024**2:,.0f} MiB "
                f"({written / max(src.stat().st_size, 1):,.0f}x its {src.stat().st_size:,} "
                f"bytes; the cap is {MAX_RATIO}x, at least {MIN_CAP_BYTES // 1024**2} MiB and "
                f"at most {MAX_INFLATED_BYTES // 1024**3} GiB)",
                "give the plain file, or profile fewer launches")
        if walk is not None:
            walk.feed(chunk)
        fout.write(chunk)


def _inflate_into(src: Path, fout: IO[bytes], max_bytes: int,
                  stop: threading.Event | None = None) -> None:
    try:
        with gzip.open(src) as fin:
            _copy_capped(fin, fout, src, inflate_cap(src, max_bytes), _walk_for(src), stop)
    except ReportLayoutError as exc:
        raise _layout_error(exc) from exc
    except EOFError as exc:  # gzip's stream ends before its end-of-stream marker
        raise InflateError(f"{src.name}: a gzip file cut short ({exc}): an interrupted copy or "
                           "download", "copy the file again from where it was written (compare "
                           "its size with the original's), then import it") from exc
    except OSError as exc:
        raise InflateError(f"{src.name}: not a readable gzip file ({exc})",
                           "give the plain file, or one compressed with gzip") from exc


def gunzip_to(src: Path, dst: Path, max_bytes: int = MAX_INFLATED_BYTES,
              stop: threading.Event | None = None) -> Path:
    """Inflate ``src`` into ``dst`` chunk by chunk (never more than 1 MiB in memory), at most
    :func:`inflate_cap` bytes, walking a report's blocks as they come; ``stop``, once set, ends
    it at the next chunk.

    Raises:
        InflateError: not gzip / cut short, more than the cap, or a report with bytes after its
            last block; :class:`InflateStopped` once ``stop`` is set (``dst`` removed in every
            case).
    """
    try:
        with open(dst, "wb") as fout:
            _inflate_into(src, fout, max_bytes, stop)
    except InflateError:
        dst.unlink(missing_ok=True)
        raise
    return dst


def check_inflates(src: Path, max_bytes: int = MAX_INFLATED_BYTES) -> None:
    """Inflate ``src`` keeping nothing (each 1 MiB chunk walked, then dropped): whether
    :func:`gunzip_to` would succeed, before it is offered (the Files page's ``.ncu-rep``).

    Raises:
        InflateError: as :func:`gunzip_to`.
    """
    with open(os.devnull, "wb") as sink:
        _inflate_into(src, sink, max_bytes)


def check_report(path: Path) -> ReportWalk:
    """Walk a plain report's blocks (reads it once, 1 MiB at a time).

    Returns:
        The finished walk: its ``blocks`` and :meth:`~ReportWalk.missing` (bytes a report cut
        short lacks at its end, 0 for a whole one).

    Raises:
        InflateError: bytes after the report's last block, or not a report layout.
    """
    walk = ReportWalk(path.name)
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(_CHUNK):
                walk.feed(chunk)
    except ReportLayoutError as exc:
        raise _layout_error(exc) from exc
    return walk


@contextlib.contextmanager
def plain_file(path: Path, max_bytes: int = MAX_INFLATED_BYTES) -> Iterator[Path]:
    """``path`` itself, or for ``*.gz`` an inflated copy in :func:`scratch_dir`, removed on
    exit; a report (``*.ncu-rep[.gz]``) is walked first either way.

    Raises:
        InflateError: see :func:`gunzip_to` and :func:`check_report`.
    """
    if not path.name.lower().endswith(".gz"):
        if is_report_name(path.name):
            check_report(path)
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="gunzip-", dir=scratch_dir()) as tmp:
        yield gunzip_to(path, Path(tmp) / path.name[:-3], max_bytes)


def open_inflated(src: Path, max_bytes: int = MAX_INFLATED_BYTES,
                  stop: threading.Event | None = None) -> BinaryIO:
    """The inflated content of ``src`` as an open file that has no name left on disk (closing
    it, or the process ending, frees the space); ``stop`` as :func:`gunzip_to`'s.

    Raises:
        InflateError: see :func:`gunzip_to`.
    """
    with tempfile.TemporaryDirectory(prefix="open-", dir=scratch_dir()) as tmp:
        plain = gunzip_to(src, Path(tmp) / "inflated", max_bytes, stop)
        return open(plain, "rb")  # noqa: SIM115 - the caller reads it; unlinked with tmp
