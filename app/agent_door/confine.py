"""Where the agent door may read and write on the server's machine (issue 41: it read any file
and wrote any ``.html`` path, through links, as the server's user).

- Reads (``import_files``): a file whose real path (links and ``..`` resolved) lies inside the
  result store, the bundled jobs' folder, a user kernel folder (``KPROF_KERNEL_DIRS``) or a
  folder the user allowed for imports (``--import-dir``, ``KPROF_IMPORT_DIRS``; both joined
  with ``os.pathsep``).
- Writes (``write_report``): an ``.html`` file inside the result store, named relative to it
  or by an absolute path inside it; no folder on the way and not the file itself may be a
  link, and the file is opened with ``O_NOFOLLOW`` (a link made meanwhile is not followed).

No Streamlit, no MCP.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

ENV_KERNEL_DIRS = "KPROF_KERNEL_DIRS"
ENV_IMPORT_DIRS = "KPROF_IMPORT_DIRS"


class Confined(ValueError):
    """A path the door may not use; the message names it and says where it may be."""


def _env_dirs(name: str) -> list[Path]:
    return [Path(p).expanduser().resolve() for p in os.environ.get(name, "").split(os.pathsep)
            if p.strip()]


def readable_roots(results: Path, bundled: Path) -> list[Path]:
    """The folders the door reads files from: the result store, the bundled jobs, the user
    kernel folders and the allowed import folders, resolved."""
    roots = [results.resolve(), bundled.resolve(), *_env_dirs(ENV_KERNEL_DIRS),
             *_env_dirs(ENV_IMPORT_DIRS)]
    return list(dict.fromkeys(roots))


def readable_file(given: str, roots: Sequence[Path]) -> Path:
    """The real path of the file ``given`` when it lies inside one of ``roots``.

    Raises:
        Confined: it is not a regular file, or it resolves outside every root.
    """
    try:
        path = Path(given).expanduser().resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise Confined(f"{given}: not a file ({exc})") from exc
    if not path.is_file():
        raise Confined(f"{given}: not a regular file")
    if not any(path.is_relative_to(root) for root in roots):
        raise Confined(f"{given}: outside the folders this server may read "
                       f"({', '.join(str(r) for r in roots)})")
    return path


def report_target(out: str, store: Path) -> Path:
    """Where ``write_report`` writes ``out``: inside the result store ``store`` (a relative
    ``out`` is taken from there); folders missing on the way are made.

    Raises:
        Confined: not an ``.html`` name, a ``..`` part, outside the store, or a link (or a
            non-folder) on the way, or an existing non-regular file or link at ``out``.
    """
    if not out.endswith(".html"):  # never write over a file that is not a report
        raise Confined(f"{out}: not an .html path")
    root = store.resolve()
    path = Path(out).expanduser()
    if ".." in path.parts:
        raise Confined(f"{out}: '..' is not allowed")
    path = path if path.is_absolute() else root / path
    if not path.is_relative_to(root) or path == root:
        raise Confined(f"{out}: outside the result store {root}")
    folder = root
    for part in path.relative_to(root).parts[:-1]:
        folder = folder / part
        _no_link(folder, out, want_dir=True)
        if not folder.exists():
            folder.mkdir()
    _no_link(path, out, want_dir=False)
    return path


def _no_link(path: Path, out: str, want_dir: bool) -> None:
    """Refuse ``path`` when it is a link, or exists as the wrong kind of file."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(mode):
        raise Confined(f"{out}: {path} is a link (never followed)")
    if want_dir and not stat.S_ISDIR(mode):
        raise Confined(f"{out}: {path} is not a folder")
    if not want_dir and not stat.S_ISREG(mode):
        raise Confined(f"{out}: {path} exists and is not a regular file")


def write_new(path: Path, data: bytes) -> int:
    """Write ``data`` to ``path`` without following a link at it (``O_NOFOLLOW``); its size.

    Raises:
        OSError: it cannot be written (``ELOOP``: a link appeared there).
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return len(data)

