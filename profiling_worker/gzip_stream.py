"""Streamed, capped gzip inflation: a small file that expands to gigabytes (a gzip bomb) is
stopped at a limit instead of filling memory or disk.

Used by the dashboard's ``.ncu-rep`` download (``app/core/bundle_files.py``); an importer that
inflates uploaded ``.ncu-rep.gz`` files can use the same function.
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path
from typing import BinaryIO

CHUNK_BYTES = 1 << 20  # 1 MiB read at a time


class InflateLimit(ValueError):
    """The decompressed content would be larger than the cap."""


def inflate(src: str | os.PathLike[str], dst: BinaryIO, max_bytes: int) -> int:
    """Decompress the gzip file ``src`` into the open binary file ``dst``, chunk by chunk.

    Args:
        src: path of a ``.gz`` file.
        dst: a writable binary file (left at its end).
        max_bytes: the most decompressed bytes accepted.

    Returns:
        The number of decompressed bytes written.

    Raises:
        InflateLimit: more than ``max_bytes`` would be written (at most ``max_bytes`` +
            1 MiB were read; nothing beyond ``max_bytes`` is written).
        OSError: not a gzip file (``gzip.BadGzipFile``), unreadable, or ``dst`` not writable.
        EOFError: the gzip stream is truncated.
    """
    written = 0
    with gzip.open(Path(src), "rb") as handle:
        while chunk := handle.read(CHUNK_BYTES):
            if written + len(chunk) > max_bytes:
                raise InflateLimit(f"{Path(src).name} expands to more than "
                                   f"{max_bytes / 1024**2:.0f} MiB")
            dst.write(chunk)
            written += len(chunk)
    return written
