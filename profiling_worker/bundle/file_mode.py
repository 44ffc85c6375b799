"""Files written through a temporary name get the mode of an ordinary ``open()``.

``tempfile.mkstemp`` creates files ``0600`` whatever the umask; a bundle written that way cannot
be read by another user, nor by a container's non-root user reading a host folder. After the
rename the file should look as if ``open(path, "w")`` had made it: ``0666`` less the umask, which
:func:`temp_file` gives it from the start.
"""

from __future__ import annotations

import os
import tempfile
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


def temp_file(folder: str | os.PathLike[str], prefix: str, suffix: str = ".tmp"
              ) -> tuple[int, str]:
    """A new file of a random name in ``folder``, open for writing: (descriptor, path).

    Made as ``open(path, "x")`` makes a file: mode ``0666``, less the umask (or as the folder's
    default ACL says), applied by the kernel. Nothing reads the umask or changes the mode after,
    as a file made by ``mkstemp`` (``0600``) needed for every table (issue 40).

    Raises:
        FileExistsError: no free name after :data:`tempfile.TMP_MAX` tries.
        OSError: the folder is not writable.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(tempfile.TMP_MAX):
        path = os.path.join(folder, f"{prefix}{os.urandom(6).hex()}{suffix}")
        try:
            return os.open(path, flags, 0o666), path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name {prefix}*{suffix} in {folder}")


def folder_as_if_made(path: str | os.PathLike[str]) -> None:
    """Give a folder made by ``mkdtemp`` (``0700``) the mode ``mkdir()`` would have given it
    (``0777`` less the umask: ``0755`` as a job bundle's)."""
    os.chmod(path, 0o777 & ~process_umask())
