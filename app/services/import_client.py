"""Import uploaded nsight-python output through the worker: save, run, read the outcome.

The app never reads a ``.ncu-rep`` itself (``ncu_report`` is the worker's): uploaded files are
saved under sanitised names in a temporary folder, and the worker's ``import`` command turns
them into a bundle of the results directory::

    <worker_python> -m profiling_worker import FILE... --out <results_dir>/<new id>

Nothing uploaded is ever executed or unpickled; the worker parses CSVs as text and reports with
``ncu_report``. Its last stdout line is a JSON event: ``result`` (``bundle``) or ``error``
(``kind``, ``message``, ``hint``).
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import secrets
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pathvalidate import sanitize_filename

#: Largest file one upload may be (MB); also passed to ``st.file_uploader(max_upload_size=)``.
MAX_UPLOAD_MB = 200
#: ``st.file_uploader(type=)``: no browser-side filter. Streamlit's dropzone (react-dropzone)
#: drops an extension with a hyphen from its accept list, so a plain ``.ncu-rep`` was refused
#: ("files are not allowed"); :func:`safe_name` checks every name against
#: :data:`NAME_EXTENSIONS` on import instead, and the worker identifies each file by content.
UPLOAD_TYPES: list[str] | None = None
IMPORT_TIMEOUT_S = 600
#: Extensions an upload may have, longest first (the extension survives sanitising).
NAME_EXTENSIONS = (".ncu-rep.gz", ".ncu-rep", ".csv", ".tsv", ".txt")
MAX_NAME_BYTES = 120  # of a saved upload's name (UTF-8)
_NOT_WORD = re.compile(r"[^\w.-]+")  # \w: letters and digits of any script, and _


class UploadRejected(ValueError):
    """An uploaded file that cannot be imported (its name, type or size), with a hint."""

    def __init__(self, message: str, hint: str = ""):
        super().__init__(message)
        self.message = message
        self.hint = hint


@dataclass(frozen=True)
class ImportOutcome:
    """What an import did: ``ok`` with the bundle's ``job_id``, or ``message``/``hint``."""

    ok: bool
    job_id: str
    message: str = ""
    hint: str = ""
    log: str = ""


def safe_name(name: str) -> str:
    """A plain file name for an uploaded file: the base name, sanitised by pathvalidate (no
    separators, control or reserved characters, no reserved names such as ``CON``), without
    leading dots (never a hidden file), runs of characters other than letters, digits,
    ``_ . -`` as one ``_``, at most :data:`MAX_NAME_BYTES` bytes with the extension kept.
    Letters and digits of any script stay.

    Raises:
        UploadRejected: not a ``.csv``, ``.tsv``, ``.txt``, ``.ncu-rep`` or ``.ncu-rep.gz``.
    """
    base = re.split(r"[\\/]", str(name))[-1]
    ext = next((e for e in NAME_EXTENSIONS if base.lower().endswith(e)), None)
    if ext is None:
        raise UploadRejected(f"{base[:80]}: not a file nsight-python or Nsight Compute writes",
                             "upload nsight-python's CSVs, Nsight Compute CSV exports (.csv, "
                             ".txt) and .ncu-rep (or .ncu-rep.gz) reports")
    plain = _NOT_WORD.sub("_", base[:-len(ext)])  # no spaces or shell characters either
    stem = sanitize_filename(plain, replacement_text="_", platform="universal",
                             max_len=MAX_NAME_BYTES - len(ext)).lstrip(". ")
    return (stem or "upload") + ext


def save_uploads(files: Iterable[tuple[str, bytes]], folder: Path,
                 max_mb: int = MAX_UPLOAD_MB) -> list[Path]:
    """Write uploaded files (name, data) into ``folder`` under :func:`safe_name` names
    (``name-1.csv`` ... when two uploads share a name).

    Raises:
        UploadRejected: no file, an unacceptable name, an empty or too large file.
    """
    out: list[Path] = []
    for name, data in files:
        clean = safe_name(name)
        if not data:
            raise UploadRejected(f"{clean}: the file is empty", "upload the file again")
        if len(data) > max_mb * 1024**2:
            raise UploadRejected(f"{clean}: {len(data) / 1024**2:.0f} MB is more than "
                                 f"{max_mb} MB", "import it with `python -m profiling_worker "
                                 "import FILE --out DIR` on the server instead")
        target, k = folder / clean, 1
        while target.exists():
            stem, dot, ext = clean.partition(".")
            target, k = folder / f"{stem}-{k}{dot}{ext}", k + 1
        target.write_bytes(data)
        out.append(target)
    if not out:
        raise UploadRejected("no file to import", "choose one or more files first")
    return out


def new_job_id(now: _dt.datetime | None = None) -> str:
    """``import-YYYYmmdd-HHMMSS-<4 hex>``: a fresh bundle id (UTC)."""
    now = now or _dt.datetime.now(_dt.timezone.utc)
    return f"import-{now:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def import_argv(worker_python: str, files: Iterable[Path], out: Path) -> list[str]:
    """The worker command line that imports ``files`` into the bundle directory ``out``."""
    return [worker_python, "-m", "profiling_worker", "import", *map(str, files),
            "--out", str(out)]


def _last_event(stdout: str) -> dict[str, Any] | None:
    for line in reversed(stdout.strip().splitlines()):
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and "event" in event:
            return event
    return None


def run_import(files: list[Path], results_dir: Path, worker_python: str,
               env: Mapping[str, str] | None = None, job_id: str | None = None,
               timeout_s: float = IMPORT_TIMEOUT_S) -> ImportOutcome:
    """Run the worker's ``import`` on ``files`` into ``results_dir/<job_id>`` and wait.

    Returns:
        ``ok=True`` with the new ``job_id``; else the worker's message and hint (or the cause
        when it crashed or timed out, with the tail of its output in ``log``).
    """
    job_id = job_id or new_job_id()
    results_dir.mkdir(parents=True, exist_ok=True)
    argv = import_argv(worker_python, files, results_dir / job_id)
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s,
                              env=dict(env) if env is not None else None, check=False)
    except subprocess.TimeoutExpired:
        return ImportOutcome(False, job_id, f"the import took longer than {timeout_s:.0f} s",
                             "import fewer or smaller files")
    except OSError as exc:
        return ImportOutcome(False, job_id, f"the worker could not start ({exc})",
                             "check KPROF_WORKER_PYTHON")
    event = _last_event(proc.stdout) or {}
    log = (proc.stdout + proc.stderr)[-4000:]
    if proc.returncode == 0 and event.get("event") == "result":
        return ImportOutcome(True, job_id, log=log)
    if event.get("event") == "error":
        return ImportOutcome(False, job_id, str(event.get("message", "")),
                             str(event.get("hint", "")), log)
    return ImportOutcome(False, job_id, f"the worker exited with code {proc.returncode}",
                         "see the worker output below", log)
