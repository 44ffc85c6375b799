"""Which dashboard server watches a sweep: an ``fcntl.flock`` on ``<sweep>/.submitit/watch.lock``
(beside submitit's files, so never listed as a file of the bundle), held
by the one watcher for as long as it follows the sweep (as the GPU lanes' locks of
:class:`~app.services.job_model.LaneLocks`).

Only the lock's holder submits, retries, cancels and merges the sweep; another server on the
same results folder shows it read-only. The kernel drops the lock when its process ends, also
by SIGKILL, so a server that was killed leaves the sweep free for the next one; a pid in the
manifest cannot say that (two servers starting together both saw the old pid dead and both
watched). The descriptor is close-on-exec: no task or sbatch inherits the lock. No Streamlit.
"""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path

from app.services.sweep_plan import SUBMITIT_DIR

LOCK_FILE = "watch.lock"  # in the sweep's SUBMITIT_DIR, which the bundle's file list leaves out
_HELD: dict[Path, int] = {}  # sweep folder -> the descriptor whose flock this process holds
_MUTEX = threading.Lock()


def claim(path: Path) -> bool:
    """Take the sweep's watch lock without waiting; False when a watcher holds it (another
    server, or another executor of this process).

    Raises:
        OSError: the lock file cannot be made (a read-only or full sweep folder).
    """
    key = path.resolve()
    with _MUTEX:
        if key in _HELD:
            return False
        (key / SUBMITIT_DIR).mkdir(exist_ok=True)
        fd = os.open(key / SUBMITIT_DIR / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        _HELD[key] = fd
        return True


def release(path: Path) -> None:
    """Drop the watch lock of ``path`` (its watcher stopped); nothing if not held here."""
    with _MUTEX:
        fd = _HELD.pop(path.resolve(), None)
    if fd is not None:
        os.close(fd)  # closing the only descriptor of the open file releases the flock


def held(path: Path) -> bool:
    """True while a watcher of this process holds the sweep's lock."""
    with _MUTEX:
        return path.resolve() in _HELD
