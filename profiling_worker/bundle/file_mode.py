"""Files written through a temporary name get the mode of an ordinary ``open()``.

``tempfile.mkstemp`` creates files ``0600`` whatever the umask; a bundle written that way cannot
be read by another user, nor by a container's non-root user reading a host folder. After the
rename the file should look as if ``open(path, "w")`` had made it: ``0666`` less the umask.
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_UMASK = 0o022


def process_umask() -> int:
    """This process's umask, read from ``/proc/self/status`` (Linux 4.7+) without changing it
    (``os.umask`` can only be read by setting it, which races with other threads); 0o022
    where it cannot be read."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return DEFAULT_UMASK


def opened_mode() -> int:
    """The mode ``open(path, "w")`` gives a new file: ``0666`` less the umask."""
    return 0o666 & ~process_umask()


def as_if_opened(fd_or_path: int | str | os.PathLike[str], mode: int | None = None) -> None:
    """Give a file made by ``mkstemp`` the mode ``open()`` would have given it (``mode``: that
    of :func:`opened_mode`, when the caller has it already for several files)."""
    mode = opened_mode() if mode is None else mode
    if isinstance(fd_or_path, int):
        os.fchmod(fd_or_path, mode)
    else:
        os.chmod(fd_or_path, mode)


def folder_as_if_made(path: str | os.PathLike[str]) -> None:
    """Give a folder made by ``mkdtemp`` (``0700``) the mode ``mkdir()`` would have given it
    (``0777`` less the umask: ``0755`` as a job bundle's)."""
    os.chmod(path, 0o777 & ~process_umask())
