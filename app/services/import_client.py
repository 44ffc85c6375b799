"""Import uploaded nsight-python output through the worker: save, run, read the outcome.

The app never reads a ``.ncu-rep`` itself (``ncu_report`` is the worker's): uploaded files are
saved under sanitised names in a temporary folder, and the worker's ``import`` command turns
them into bundles of the results directory, one per report or table with the files that
belong to it (:mod:`profiling_worker.importing.grouping`)::

    <worker_python> -m profiling_worker import FILE... --out <results_dir>/<new id> --each

Nothing uploaded is ever executed or unpickled; the worker parses CSVs as text and reports with
``ncu_report``. It prints one JSON event per bundle, naming its ``files``: ``result``
(``bundle``) or ``error`` (``kind``, ``message``, ``hint``).
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

from profiling_worker.importing.kinds import NCU_LOG, NCU_REPORT, NCU_TEXT
from profiling_worker.importing.sniff import (Refused, bundle_root_of, kind_words, sniff_head,
                                              upload_refusal)

#: Largest file one upload may be (MB); also passed to ``st.file_uploader(max_upload_size=)``.
MAX_UPLOAD_MB = 200
#: ``st.file_uploader(type=)``: no browser-side filter. Streamlit's dropzone (react-dropzone)
#: drops an extension with a hyphen from its accept list, so a plain ``.ncu-rep`` was refused
#: ("files are not allowed"); :func:`safe_name` checks every name against
#: :data:`NAME_EXTENSIONS` on import instead, and the worker identifies each file by content.
UPLOAD_TYPES: list[str] | None = None
IMPORT_TIMEOUT_S = 600
#: Extensions an upload may have, longest first (the extension survives sanitising); ``.log``:
#: the ncu log nsight-python writes beside a call's CSVs and report (kept with them, not read).
#: Checked after the content (:func:`_checked_name`): a file is refused as what it holds first.
#: ``.zip``: a dashboard bundle's zip (the Files page's download), reopened as its job; a zip of
#: anything else is refused by its content first.
NAME_EXTENSIONS = (".ncu-rep.gz", ".ncu-rep", ".csv", ".tsv", ".txt", ".log", ".zip")
MAX_NAME_BYTES = 120  # of a saved upload's name (UTF-8)
_NOT_WORD = re.compile(r"[^\w.-]+")  # \w: letters and digits of any script, and _


class UploadRejected(ValueError):
    """An uploaded file that cannot be imported (its name, type or size), with a hint;
    ``name``: the file's name as uploaded (cut to 80 characters)."""

    def __init__(self, message: str, hint: str = "", name: str = ""):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.name = name


@dataclass(frozen=True)
class ImportOutcome:
    """What the import of one group of files did: ``ok`` with the bundle's ``job_id``, or
    ``message``/``hint`` (and the worker's output in ``log``); ``files``: the group's names;
    ``same_as``: an earlier imported job read from files of the same content and when it was
    imported (``app.core.provenance.same_files``), () when there is none; ``note``: what the
    worker said of a reopened bundle zip (a suffixed id, or the job already here);
    ``already_here``: nothing was imported, the bundle zip's job was already on the dashboard
    as ``job_id``."""

    ok: bool
    job_id: str
    message: str = ""
    hint: str = ""
    log: str = ""
    files: tuple[str, ...] = ()
    same_as: tuple[str, str] | tuple[()] = ()
    note: str = ""
    already_here: bool = False


def safe_name(name: str) -> str:
    """A plain file name for an uploaded file: the base name, sanitised by pathvalidate (no
    separators, control or reserved characters, no reserved names such as ``CON``), without
    leading dots (never a hidden file), runs of characters other than letters, digits,
    ``_ . -`` as one ``_``, at most :data:`MAX_NAME_BYTES` bytes with the extension kept.
    Letters and digits of any script stay.

    Raises:
        UploadRejected: not a ``.csv``, ``.tsv``, ``.txt``, ``.log``, ``.ncu-rep``,
            ``.ncu-rep.gz`` or ``.zip`` name (an upload is refused as what its content is first:
            :func:`_checked_name`).
    """
    base = _base(name)
    ext = next((e for e in NAME_EXTENSIONS if base.lower().endswith(e)), None)
    if ext is None:
        raise _refusal(base, Refused(f"a file named {_extension(base)}", _RENAME_HINT,
                                     _NAMES_EXPECTED))
    plain = _NOT_WORD.sub("_", base[:-len(ext)])  # no spaces or shell characters either
    stem = sanitize_filename(plain, replacement_text="_", platform="universal",
                             max_len=MAX_NAME_BYTES - len(ext)).lstrip(". ")
    return (stem or "upload") + ext


_NAMES_EXPECTED = "a name ending .csv, .tsv, .txt, .log, .ncu-rep, .ncu-rep.gz or .zip"
_RENAME_HINT = ("rename it with the extension of what it holds: .csv for an nsight-python or "
                "`ncu --csv` table, .ncu-rep for a report `ncu -o` wrote, .log for ncu's "
                "console text")


def _base(name: str) -> str:
    """The name without folders, as the browser may send them."""
    return re.split(r"[\\/]", str(name))[-1]


def _extension(base: str) -> str:
    """``.xyz`` of a name (cut to 20 characters), or "without an extension"."""
    stem, dot, ext = base.rpartition(".")
    return f".{ext[:20]}" if dot and stem.strip(".") else "without an extension"


def _refusal(base: str, why: Refused) -> UploadRejected:
    """The upload's refusal by the project's one rule (:class:`~profiling_worker.importing.
    refusals.Refused`): what it is; what was expected; one fix."""
    return UploadRejected(why.message(base[:80]), why.fix, base[:80])


#: The extension a file of each kind is named with (:func:`_renamed`); a CSV kind otherwise.
_KIND_EXTENSIONS = {NCU_REPORT: ".ncu-rep", NCU_TEXT: ".log", NCU_LOG: ".log"}


def _renamed(base: str, data: bytes) -> str:
    """The name an upload of a supported kind may have: its stem with its kind's extension."""
    found = sniff_head(Path("upload"), data[:64 * 1024])
    ext = _KIND_EXTENSIONS.get(found.kind, ".csv") if found else ".csv"
    if found is None and bundle_root_of(data) is not None:
        ext = ".zip"
    if ext == ".ncu-rep" and data[:2] == b"\x1f\x8b":
        ext += ".gz"
    stem = base.rpartition(".")[0] or base
    return f"{stem[:60]}{ext}"


def _checked_name(name: str, data: bytes, max_mb: int) -> str:
    """:func:`safe_name` of an upload that may be saved, checked by content first.

    Raises:
        UploadRejected: by the project's one rule of a refusal (what the file is, what was
            expected, one fix): content of no supported kind, told by the importer's own sniff
            (:func:`~profiling_worker.importing.sniff.upload_refusal`: the CLI says the same of
            the file), an empty file among them; a file over ``max_mb`` MB; a supported kind
            under a name that is not one of :data:`NAME_EXTENSIONS` (rename it).
    """
    base = _base(name)
    why = upload_refusal(base, data)
    if why is not None:
        raise _refusal(base, why)
    if len(data) > max_mb * 1024**2:
        raise _refusal(base, Refused(
            f"{kind_words(base, data)} of {len(data) / 1024**2:.0f} MB",
            "import it on the server instead: `python -m profiling_worker import FILE --out "
            "DIR`", f"at most {max_mb} MB per uploaded file"))
    try:
        return safe_name(name)
    except UploadRejected:
        raise _refusal(base, Refused(
            f"{kind_words(base, data)} by its content, named {_extension(base)}",
            f"rename it `{_renamed(base, data)}` and upload it again",
            _NAMES_EXPECTED)) from None


def save_uploads(files: Iterable[tuple[str, bytes]], folder: Path,
                 max_mb: int = MAX_UPLOAD_MB) -> tuple[list[Path], list[UploadRejected]]:
    """Write uploaded files (name, data) into ``folder`` under :func:`safe_name` names
    (``name-1.csv`` ... when two uploads share a name). A file that cannot be taken (its name
    or type, empty, over ``max_mb`` MB) is left out with its reason; the others are saved.

    Returns:
        The saved paths, and one :class:`UploadRejected` per file left out.

    Raises:
        UploadRejected: no file at all.
        OSError: a file cannot be written (disk full).
    """
    out: list[Path] = []
    rejected: list[UploadRejected] = []
    given = 0
    for name, data in files:
        given += 1
        try:
            clean = _checked_name(name, data, max_mb)
        except UploadRejected as exc:
            rejected.append(exc)
            continue
        target, k = folder / clean, 1
        while target.exists():
            stem, dot, ext = clean.partition(".")
            target, k = folder / f"{stem}-{k}{dot}{ext}", k + 1
        target.write_bytes(data)
        out.append(target)
    if not given:
        raise UploadRejected("no file to import", "choose one or more files first")
    return out, rejected


def new_job_id(now: _dt.datetime | None = None) -> str:
    """``import-YYYYmmdd-HHMMSS-<4 hex>``: a fresh bundle id (UTC)."""
    now = now or _dt.datetime.now(_dt.timezone.utc)
    return f"import-{now:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def import_argv(worker_python: str, files: Iterable[Path], out: Path,
                nvtx: str = "innermost") -> list[str]:
    """The worker command line that imports ``files`` into bundles ``out`` (one group of
    files) or ``out-1``, ``out-2`` ... (several), one per report or table; ``nvtx``: a
    launch's region in nested NVTX ranges of an ncu CSV or console text (``innermost`` or
    ``stack``)."""
    return [worker_python, "-m", "profiling_worker", "import", *map(str, files),
            "--out", str(out), "--each", "--nvtx", nvtx]


def _events(stdout: str) -> list[dict[str, Any]]:
    """The worker's ``result`` and ``error`` events, in order (other lines skipped)."""
    out = []
    for line in stdout.strip().splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("event") in ("result", "error"):
            out.append(event)
    return out


def _outcome(event: dict[str, Any], job_id: str, log: str) -> ImportOutcome:
    files = tuple(str(f) for f in event.get("files") or ())
    if event["event"] == "result":
        return ImportOutcome(True, Path(str(event.get("bundle", job_id))).name, files=files,
                             note=str(event.get("note") or ""),
                             already_here=bool(event.get("already_here")))
    return ImportOutcome(False, str(event.get("job_id", job_id)), str(event.get("message", "")),
                         str(event.get("hint", "")), log, files)


def _text(out: str | bytes | None) -> str:
    return out.decode("utf-8", errors="replace") if isinstance(out, bytes) else out or ""


def run_import(files: list[Path], results_dir: Path, worker_python: str,
               env: Mapping[str, str] | None = None, job_id: str | None = None,
               timeout_s: float = IMPORT_TIMEOUT_S, nvtx: str = "innermost"
               ) -> list[ImportOutcome]:
    """Run the worker's ``import --each`` on ``files`` into ``results_dir/<job_id>`` (or
    ``<job_id>-1`` ...) and wait (at most ``timeout_s`` s for all of them).

    Returns:
        One outcome per group of files the worker imported (``ok`` with the new ``job_id``) or
        refused (its message and hint), in the worker's order; then one failure for the files it
        said nothing of (it crashed, timed out or could not start: the cause, and the tail of
        its output in ``log``). Bundles finished before a crash or timeout are kept.
    """
    job_id = job_id or new_job_id()
    results_dir.mkdir(parents=True, exist_ok=True)
    argv = import_argv(worker_python, files, results_dir / job_id, nvtx)
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s,
                              env=dict(env) if env is not None else None, check=False)
        stdout, stderr = proc.stdout, proc.stderr
        cause = (f"the worker exited with code {proc.returncode} before importing these",
                 "see the worker output below")
    except subprocess.TimeoutExpired as exc:
        stdout, stderr = _text(exc.stdout), _text(exc.stderr)
        cause = (f"the import took longer than {timeout_s:.0f} s",
                 "import fewer or smaller files")
    except OSError as exc:
        return [ImportOutcome(False, job_id, f"the worker could not start ({exc})",
                              "check KPROF_WORKER_PYTHON", files=tuple(p.name for p in files))]
    log = (stdout + stderr)[-4000:]
    outcomes = [_outcome(e, job_id, log) for e in _events(stdout)]
    told = {name for o in outcomes for name in o.files}
    rest = tuple(p.name for p in files if p.name not in told)
    if rest:
        outcomes.append(ImportOutcome(False, job_id, *cause, log, rest))
    return outcomes
