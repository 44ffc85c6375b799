"""What each source file is, told by its content (never by its name or extension alone).

:func:`gather` expands folders and sniffs every file's first bytes; what each kind is and how
it is told (a CSV header's columns, a magic, the head's lines) is the registry
:mod:`.kinds`.

CSV dialects: ``,`` ``;`` or tab separated, UTF-8 with or without BOM (UTF-16 with BOM too),
CRLF or LF, lines ncu prints before its table (``==PROF==``, program output) skipped, a decimal
comma detected from the values (a spreadsheet's re-save). Anything else gets a message saying
what the file looks like and what is supported.
"""

from __future__ import annotations

import csv
import gzip
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from profiling_worker.bundle.errors import ImportFailed
from profiling_worker.importing import kinds as R, refusals as X
# Re-exported (the "as" form says so to mypy): the app imports it from here.
from profiling_worker.importing.refusals import HINT_NCU_EXPORT as HINT_NCU_EXPORT

_HEAD_BYTES = 64 * 1024
_GZIP_MAGIC = b"\x1f\x8b"
_NCU_NOISE = re.compile(r"^(==[A-Z]+==|\s*$)")
_DELIMITERS = (",", ";", "\t")
#: How an Nsight Systems report begins (a .qdrep of Nsight Systems 2020, import_cases/16).
_NSYS_MAGIC = b"NVIDIA Tegra Profiler Report"
#: Headers of Nsight Systems' CSV exports (``nsys stats --format csv``, ``nsys export``).
_NSYS_COLUMNS = ({"Time (%)", "Total Time (ns)", "Instances"}, {"Start (ns)", "Duration (ns)"},
                 {"Time(%)", "Total Time (ns)"})


@dataclass(frozen=True)
class Sniffed:
    """One source file and what it is.

    ``kind``: the name of one of :func:`.kinds.registered`; ``delimiter``; ``decimal`` (``.`` or
    ``,``); ``skip``: lines before the CSV header (ncu's ``==PROF==`` lines); ``encoding``."""

    path: Path
    kind: str
    delimiter: str = ","
    decimal: str = "."
    skip: int = 0
    encoding: str = "utf-8-sig"


def _decode(head: bytes) -> tuple[str, str] | None:
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return head.decode("utf-16", errors="ignore"), "utf-16"
    if b"\x00" in head:
        return None
    try:
        return head.decode("utf-8-sig"), "utf-8-sig"
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not just a character cut at the end of the head
            return None
        return head[:exc.start].decode("utf-8-sig"), "utf-8-sig"


def _header(line: str) -> tuple[list[str], str]:
    """The fields of a header line and its delimiter (the one that splits it most)."""
    best: tuple[list[str], str] = ([line.strip()], ",")
    for d in _DELIMITERS:
        fields = next(csv.reader([line], delimiter=d), [])
        if len(fields) > len(best[0]):
            best = (fields, d)
    return [f.strip() for f in best[0]], best[1]


def _decimal(lines: list[str], delimiter: str) -> str:
    """``,`` when numbers in the data lines use a decimal comma (only possible when the
    separator is not a comma), else ``.``."""
    if delimiter == ",":
        return "."
    fields = [f.strip() for ln in lines for f in next(csv.reader([ln], delimiter=delimiter), [])]
    comma = sum(bool(re.fullmatch(r"-?\d+,\d+([eE][-+]?\d+)?", f)) for f in fields)
    dot = sum(bool(re.fullmatch(r"-?\d+\.\d+([eE][-+]?\d+)?", f)) for f in fields)
    return "," if comma > dot else "."


def describe_unknown(path: Path, head: bytes) -> str:
    """What a file that is none of the supported kinds looks like, and its kind's fix where it
    has one (``what; fix``), for the note on a folder's file left out."""
    what, fix = unknown_kind(path, head)
    return what if fix is None else f"{what}; {fix}"


def unknown_kind(path: Path, head: bytes) -> tuple[str, str | None]:
    """(what a file that is none of the supported kinds looks like, the fix of that kind; None
    where it has none of its own and the supported kinds are the fix): one fix per refusal (an
    SQLite file said the ncu commands in its message and the supported kinds as its fix)."""
    decoded = _decode(head)
    if head.startswith(_GZIP_MAGIC):
        return "a gzip file that holds no Nsight Compute report", None
    if head[:4] == b"PK\x03\x04":
        return ("a zip archive (a spreadsheet .xlsx?)",
                "save the sheet as CSV (one file per sheet), or unpack the archive")
    if head.startswith(b"SQLite format"):
        return ("an SQLite database (an Nsight Systems export?), which is not supported",
                HINT_NCU_EXPORT)
    if head.startswith(b"\x80") or head.startswith(b"PAR1"):
        return "a binary (pickle or Parquet) file, which is never read", None
    if head.startswith(_NSYS_MAGIC) or (decoded is None and path.name.lower().endswith(
            (".nsys-rep", ".qdrep"))):
        return "an Nsight Systems report, which is not supported", HINT_NCU_EXPORT
    if decoded is None:
        return "a binary file of an unknown kind", None
    refused = X.refusal_of(decoded[0], path.name)
    if refused is not None:
        return X.message(refused, path.name), refused.fix
    text = decoded[0].lstrip()
    if not text:
        return ("a text file with nothing in it (only a byte-order mark or blanks)"
                if head.strip() else "an empty file"), None
    if text.startswith(("{", "[")):
        return ("JSON text, which is not supported (a bundle's manifest? open the bundle "
                "instead)"), None
    lines = [ln for ln in text.splitlines() if not _NCU_NOISE.match(ln)]
    if not lines:
        return ("ncu's console output with no table in it",
                "profile again with `--csv`: `ncu --nvtx --csv --page raw python3 app.py > "
                "raw.csv`")
    if any(cols <= set(_header(ln)[0]) for ln in lines[:50] for cols in _NSYS_COLUMNS):
        return ("an Nsight Systems CSV export (`nsys stats`), which holds no per-launch Nsight "
                "Compute metrics and is not supported", HINT_NCU_EXPORT)
    fields, _ = _header(lines[0])
    if len(fields) > 1:
        near = _missing_columns(fields)
        if near:
            return near, None
        shown = ", ".join(repr(f[:30]) for f in fields[:8]) + (", ..." if len(fields) > 8 else "")
        return (f"a table with columns {shown}: neither nsight-python's (Annotation, Value or "
                "AvgValue, Metric, ...) nor Nsight Compute's (ID, Kernel Name, ...)"), None
    return "text that is not a table", None


#: The kinds whose header must hold their columns (:func:`_missing_columns`), by the tool that
#: writes them.
_REQUIRED = (("nsight-python's per-run CSV (profiled_data)", R.NSIGHT_RAW),
             ("nsight-python's aggregated CSV (processed_data)", R.NSIGHT_AGG),
             ("Nsight Compute's CSV export", R.NCU_RAW))


def _missing_columns(fields: list[str]) -> str | None:
    """For a header that has most of one kind's required columns but not all (a column
    dropped or renamed by hand): which kind it resembles and which columns it lacks."""
    names = set(fields)
    for kind, name in _REQUIRED:
        required = R.by_name()[name].columns
        lacks = [c for c in required if c not in names]
        if lacks and len(required) - len(lacks) >= 2:  # two of its names: not a coincidence
            has = ", ".join(c for c in required if c in names)
            return (f"a table like {kind} (it has {has}) but without its "
                    f"{', '.join(lacks)} column{'s' if len(lacks) > 1 else ''} (that tool writes "
                    "it in every such file: was the file edited or cut?)")
    return None


def sniff(path: Path) -> Sniffed | None:
    """What ``path`` is, or None when it is none of the supported kinds.

    Raises:
        ImportFailed: the file cannot be read, or is named ``.gz`` and is not gzip.
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(_HEAD_BYTES)
    except OSError as exc:
        raise ImportFailed(f"{path.name}: cannot be read ({exc.strerror or exc})",
                           "check that the file exists and is readable") from exc
    if path.name.lower().endswith(".gz") and not head.startswith(_GZIP_MAGIC):
        # else pandas would inflate it by its name and fail like a write error
        raise ImportFailed(f"{path.name}: named .gz but not gzip-compressed (it starts with "
                           f"{head[:4]!r})", "rename it without .gz (a plain report is "
                           ".ncu-rep, a CSV .csv), or compress it with gzip")
    magic = _magic_kind(path, head)
    if magic is not None or head.startswith(_GZIP_MAGIC):
        return magic
    decoded = _decode(head)
    if decoded is None:
        return None
    text, encoding = decoded
    if X.refusal_of(text, path.name) is not None:
        return None  # a kind refused by name (describe_unknown, fix_for)
    lines = text.splitlines()
    skip = 0
    while skip < len(lines) and _NCU_NOISE.match(lines[skip]):
        skip += 1
    for i in range(skip, min(len(lines), skip + 200)):  # program output before ncu's table
        fields, delimiter = _header(lines[i])
        kind = R.of_header(fields)
        if kind is not None and (i == skip or kind.late_header):
            return Sniffed(path, kind.name, delimiter, _decimal(lines[i + 1:i + 50], delimiter),
                           i, encoding)
    told = next((k for k in R.registered() if k.lines is not None and k.lines(lines)), None)
    return None if told is None else Sniffed(path, told.name, encoding=encoding)


def _magic_kind(path: Path, head: bytes) -> Sniffed | None:
    """The kind whose magic begins the file, or the gzip-compressed file (None: no magic
    matches, or the gzip stream cannot be read)."""
    if head.startswith(_GZIP_MAGIC):
        try:
            with gzip.open(path) as fh:
                head = fh.read(max(len(k.magic) for k in R.registered()))
        except (OSError, EOFError):
            return None
    kind = next((k for k in R.registered() if k.magic and head.startswith(k.magic)), None)
    return None if kind is None else Sniffed(path, kind.name)


def _natural(p: Path) -> list[int | str]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p.name)]


def gather(sources: Sequence[Path]) -> tuple[list[Sniffed], list[str]]:
    """The recognised files among ``sources`` (folders expanded, files in natural name order)
    and notes on the files of a folder that were left out (``name: what it is``).

    Raises:
        ImportFailed: a source does not exist, or a file given by name is of no supported kind
            (the message says what it looks like).
    """
    found: list[Sniffed] = []
    ignored: list[str] = []
    for src in map(Path, sources):
        if src.is_dir():
            for p in sorted((p for p in src.iterdir() if p.is_file()), key=_natural):
                s = sniff(p)
                if s is None:
                    ignored.append(f"{p.name}: {describe_unknown(p, _head(p))}")
                else:
                    found.append(s)
        elif src.is_file():
            s = sniff(src)
            if s is None:
                raise refused(src, _head(src))
            found.append(s)
        else:
            raise ImportFailed(f"{src.name}: no such file or folder",
                               "check the path of the nsight-python output")
    return found, ignored


def refused(path: Path, head: bytes) -> ImportFailed:
    """The error for a file of no supported kind: named by its kind with that kind's fix
    (:mod:`.refusals`), else what it looks like with the supported kinds."""
    decoded = _decode(head)
    kind = X.refusal_of(decoded[0], path.name) if decoded else None
    if kind is not None:
        return ImportFailed(f"{path.name}: {X.message(kind, path.name)}; nothing to import",
                            kind.fix)
    what, fix = unknown_kind(path, head)
    if fix is not None:  # a kind of its own, with its own fix: that one alone
        return ImportFailed(f"{path.name}: {what}", fix)
    return ImportFailed(f"{path.name}: {what}; it is not a file nsight-python or Nsight "
                        "Compute writes", R.hint_supported())


def _head(path: Path) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(_HEAD_BYTES)
    except OSError:
        return b""
