"""Gzip inflation streamed to disk with a size cap: the one helper for every ``.ncu-rep.gz``
(import, report summaries). ``ncu_report`` reads plain files only."""

from __future__ import annotations

import contextlib
import gzip
import tempfile
from collections.abc import Iterator
from pathlib import Path

#: Largest file a ``.gz`` may expand to (a report of many launches is a few hundred MB).
MAX_INFLATED_BYTES = 4 * 1024**3
_CHUNK = 1 << 20


class InflateError(ValueError):
    """A ``.gz`` that is not gzip, is cut short, or expands beyond the cap; ``hint`` says what
    to do."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.message = message
        self.hint = hint


def gunzip_to(src: Path, dst: Path, max_bytes: int = MAX_INFLATED_BYTES) -> Path:
    """Inflate ``src`` into ``dst`` chunk by chunk, never holding more than 1 MiB in memory.

    Raises:
        InflateError: not gzip / cut short (``dst`` removed), or more than ``max_bytes``.
    """
    written = 0
    try:
        with gzip.open(src) as fin, open(dst, "wb") as fout:
            while chunk := fin.read(_CHUNK):
                written += len(chunk)
                if written > max_bytes:
                    raise InflateError(f"{src.name}: expands to more than "
                                       f"{max_bytes / 1024**3:.1f} GiB",
                                       "give the plain file, or profile fewer launches")
                fout.write(chunk)
    except (OSError, EOFError) as exc:
        dst.unlink(missing_ok=True)
        raise InflateError(f"{src.name}: not a readable gzip file ({exc})",
                           "give the plain file, or one compressed with gzip") from exc
    except InflateError:
        dst.unlink(missing_ok=True)
        raise
    return dst


@contextlib.contextmanager
def plain_file(path: Path, max_bytes: int = MAX_INFLATED_BYTES) -> Iterator[Path]:
    """``path`` itself, or for ``*.gz`` an inflated copy in a temporary folder removed on exit.

    Raises:
        InflateError: see :func:`gunzip_to`.
    """
    if not path.name.lower().endswith(".gz"):
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="kprof-gunzip-") as tmp:
        yield gunzip_to(path, Path(tmp) / path.name[:-3], max_bytes)
