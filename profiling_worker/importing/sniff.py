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
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from profiling_worker.bundle.errors import ImportFailed
from profiling_worker.importing import bundle_zip, kinds as R, refusals as X
# Re-exported (the "as" form says so to mypy): the app imports it from here.
from profiling_worker.importing.refusals import HINT_NCU_EXPORT as HINT_NCU_EXPORT
from profiling_worker.importing.refusals import Refused as Refused
# The Import page tells a bundle's zip (saved as .zip, reopened by the worker) from here, and
# the result store one copied among its job folders.
from profiling_worker.importing.bundle_zip import bundle_root_of as bundle_root_of
from profiling_worker.importing.bundle_zip import is_bundle_zip as is_bundle_zip

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


#: Tables of Nsight Systems' SQLite export (``nsys export --type sqlite``, ``nsys stats``): a
#: ``CREATE TABLE`` of one of these names in the file's schema tells it from any other SQLite
#: database (the schema is text in the file's first pages; no SQL is run on an upload).
_NSYS_TABLES = re.compile(rb"CREATE TABLE\s+[\"'`\[]?(CUPTI_ACTIVITY_KIND_\w+|TARGET_INFO_\w+|"
                          rb"NVTX_EVENTS|StringIds|ThreadNames|META_DATA_\w+|ENUM_NSYS_\w+|"
                          rb"EXPORT_META_DATA|OSRT_API|CUDA_GPU_MEMORY_USAGE_EVENTS)\b")
_SQL_TABLE = re.compile(rb"CREATE TABLE\s+(?:IF NOT EXISTS\s+)?[\"'`\[]?(\w+)")
#: Binary files told by their first bytes: (magic, what the file is, its fix).
_MAGICS: tuple[tuple[bytes, str, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image (a chart saved as a picture?), which holds no values",
     X.HINT_IMPORTABLE),
    (b"\xff\xd8\xff", "a JPEG image, which holds no values", X.HINT_IMPORTABLE),
    (b"GIF8", "a GIF image, which holds no values", X.HINT_IMPORTABLE),
    (b"%PDF-", "a PDF document, which holds no table the importer reads", X.HINT_IMPORTABLE),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an OLE2 file (an Excel 97-2003 .xls workbook?)",
     "save each sheet as CSV (File > Save As > CSV) and upload the .csv files"),
    (b"\x7fELF", "an executable (ELF) file, which is never run or read", X.HINT_IMPORTABLE),
    (b"PAR1", "a Parquet table (a bundle's tables/*.parquet?), which is never read: a bundle "
     "is opened where it is, not imported", X.HINT_IMPORTABLE),
    (b"\x80", "a binary file that begins like a Python pickle (byte 0x80), which is never "
     "unpickled", X.HINT_IMPORTABLE),
)
_REPORT_NAMES = (".ncu-rep", ".ncu-rep.gz")
_REPORT_FIX = ("upload the report file `ncu -o report ...` wrote, as it was written (copied as "
               "binary, never opened and saved as text)")


def describe_unknown(path: Path, head: bytes) -> str:
    """What a file that is none of the supported kinds is and its fix (``what; fix``), for the
    note on a folder's file left out."""
    why = refusal(path.name, head)
    return f"{why.what}; {why.fix}"


def _zip(name: str, head: bytes) -> X.Refused:
    """A zip archive: a spreadsheet by its entries (``xl/``, the ODF mimetype), else by its
    name, or any other archive."""
    if b"mimetypeapplication/vnd.oasis.opendocument.spreadsheet" in head or \
            name.lower().endswith(".ods"):
        return X.Refused("an OpenDocument spreadsheet (.ods, a zip archive)", _SAVE_AS_CSV)
    if b"xl/" in head or name.lower().endswith((".xlsx", ".xlsm")):
        return X.Refused("an Excel workbook (.xlsx, a zip archive)", _SAVE_AS_CSV)
    return X.Refused("a zip archive with no manifest.json at its root or one folder deep (not "
                     "a dashboard bundle's zip, which is reopened as its job)",
                     "unpack it (`unzip FILE`) and upload the files it holds "
                     "(nsight-python's CSVs, Nsight Compute reports)")


_SAVE_AS_CSV = "save each sheet as CSV (one file per sheet) and upload the .csv files"


def _sqlite(head: bytes) -> X.Refused:
    """An SQLite database told by its tables: Nsight Systems' export, or another one."""
    nsys = sorted({m.decode() for m in _NSYS_TABLES.findall(head)})
    if nsys:
        shown = ", ".join(nsys[:3]) + (", ..." if len(nsys) > 3 else "")
        return X.Refused(f"an Nsight Systems SQLite export (tables {shown}): timelines, no "
                         "per-launch Nsight Compute metric", X.HINT_NCU_EXPORT)
    tables = sorted({m.decode() for m in _SQL_TABLE.findall(head)})
    held = (f"tables {', '.join(tables[:4])}{', ...' if len(tables) > 4 else ''}" if tables
            else "no table in its first pages")
    return X.Refused(f"an SQLite database ({held}), not an Nsight Systems or Nsight Compute "
                     "file", X.HINT_IMPORTABLE)


def _binary(name: str, head: bytes) -> X.Refused:
    """What a binary file (not UTF-8 or UTF-16 text) is, by its first bytes, then its name."""
    if head.startswith(_GZIP_MAGIC):
        return X.Refused("a gzip file that holds no Nsight Compute report", "decompress it "
                         "(`gunzip FILE`) and upload the file it holds")
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return _zip(name, head)
    if head.startswith(b"SQLite format 3\x00"):
        return _sqlite(head)
    if head.startswith(_NSYS_MAGIC) or name.lower().endswith((".nsys-rep", ".qdrep")):
        return X.Refused("an Nsight Systems report: timelines, no per-launch Nsight Compute "
                         "metric", X.HINT_NCU_EXPORT)
    for magic, what, fix in _MAGICS:
        if head.startswith(magic):
            return X.Refused(what, fix)
    return X.Refused(f"a binary file of an unknown kind (it {first_bytes(head)})",
                     X.HINT_IMPORTABLE)


def first_bytes(head: bytes, count: int = 8) -> str:
    """``starts with bytes 00 01 67 61 …``: the first ``count`` bytes of a file as hex, for a
    refusal (a Python bytes literal, ``b'\\x00\\x01garbag'``, read as code to a user, cut
    mid-escape); "is empty" for no bytes."""
    if not head:
        return "is empty"
    more = " …" if len(head) > count else ""
    return f"starts with bytes {head[:count].hex(' ')}{more}"


def _text(name: str, head: bytes, text: str) -> X.Refused:
    """What a text file of no supported kind is, by its lines."""
    refused = X.refusal_of(text, name)
    if refused is not None:
        return X.Refused(X.message(refused, name), refused.fix)
    body = text.lstrip()
    if not body:
        return X.Refused("an empty file (0 bytes)" if not head else "a text file with nothing "
                         "in it (only a byte-order mark or blanks)", X.HINT_EMPTY)
    if body.startswith(("{", "[")):
        return X.Refused("JSON text (a bundle's manifest.json or spec.json?): the importer "
                         "reads the files a job was made from, not a bundle's own",
                         X.HINT_IMPORTABLE)
    if body[:15].lower().startswith(("<!doctype html", "<html")):
        return X.Refused("an HTML page (a download that saved the web page, not the file?)",
                         X.HINT_IMPORTABLE)
    lines = [ln for ln in body.splitlines() if not _NCU_NOISE.match(ln)]
    if not lines:
        return X.Refused("ncu's console output with no table in it",
                         "profile again with `--csv`: `ncu --nvtx --csv --page raw python3 "
                         "app.py > raw.csv`")
    if any(cols <= set(_header(ln)[0]) for ln in lines[:50] for cols in _NSYS_COLUMNS):
        return X.Refused("an Nsight Systems CSV export (`nsys stats`): kernels summed over "
                         "their launches, no per-launch Nsight Compute metric", X.HINT_NCU_EXPORT)
    fields, _ = _header(lines[0])
    if len(fields) > 1:
        near = _missing_columns(fields)
        if near is not None:
            return near
        shown = ", ".join(repr(f[:30]) for f in fields[:8]) + (", ..." if len(fields) > 8 else "")
        return X.Refused(f"a table with columns {shown}: neither nsight-python's (Annotation, "
                         "Value or AvgValue, Metric, ...) nor Nsight Compute's (ID, Kernel "
                         "Name, ...)", X.HINT_IMPORTABLE)
    return X.Refused("text that is not a table", X.HINT_IMPORTABLE)


def refusal(name: str, head: bytes) -> X.Refused:
    """Why a file named ``name`` that begins with ``head`` (its first 64 KiB) is not imported,
    by the one rule of :class:`~.refusals.Refused`: what it is, told by its content (magic
    bytes, then structure: a table's columns, a tool's console lines), then by its name where
    the name promised a kind (a ``.ncu-rep`` that is text, a ``.gz`` that is not gzip); what
    was expected; one fix. For a file :func:`sniff_head` finds no kind in (the CLI and the
    Import page give the same refusal: :func:`refused`, :func:`upload_refusal`)."""
    low = name.lower()
    if low.endswith(".gz") and not head.startswith(_GZIP_MAGIC):
        inner = sniff_head(Path(name[:-3]), head)
        what = (f"{R.by_name()[inner.kind].words}" if inner is not None
                else _content(name[:-3], head).what)
        return X.Refused(f"{what}, named .gz but not gzip-compressed (it "
                         f"{first_bytes(head, 4)}; gzip's are 1f 8b)", "rename it without .gz (a "
                         "plain report is .ncu-rep, a CSV .csv), or compress it: `gzip FILE`",
                         "gzip-compressed content, as the name says")
    why = _content(name, head)
    if low.endswith(_REPORT_NAMES) and not head.startswith(_GZIP_MAGIC):
        return X.Refused(f"{why.what}, not an Nsight Compute report (a .ncu-rep begins with the "
                         "bytes `NVR`)", _REPORT_FIX, "an Nsight Compute report")
    return why


def _content(name: str, head: bytes) -> X.Refused:
    """What the file is by its content alone: a known magic first (a zip's ``PK`` may decode
    as text), then text by its lines, else binary."""
    decoded = _decode(head)
    if decoded is None or head.startswith(_BINARY_MAGICS):
        return _binary(name, head)
    return _text(name, head, decoded[0])


_BINARY_MAGICS = (_GZIP_MAGIC, b"PK\x03\x04", b"PK\x05\x06", b"SQLite format 3\x00", _NSYS_MAGIC,
                  *(magic for magic, _what, _fix in _MAGICS))


#: The kinds whose header must hold their columns (:func:`_missing_columns`), by the tool that
#: writes them, with the fix of an edited file of that tool.
_REQUIRED = (("nsight-python's per-run CSV (profiled_data)", R.NSIGHT_RAW, X.HINT_CSV),
             ("nsight-python's aggregated CSV (processed_data)", R.NSIGHT_AGG, X.HINT_CSV),
             ("Nsight Compute's CSV export", R.NCU_RAW, X.HINT_NCU_CSV))


def _missing_columns(fields: list[str]) -> X.Refused | None:
    """For a header that has most of one kind's required columns but not all (a column
    dropped or renamed by hand): which kind it resembles, which columns it lacks, and that
    tool's fix."""
    names = set(fields)
    for kind, name, fix in _REQUIRED:
        required = R.by_name()[name].columns
        lacks = [c for c in required if c not in names]
        if lacks and len(required) - len(lacks) >= 2:  # two of its names: not a coincidence
            has = ", ".join(c for c in required if c in names)
            plural = "s" if len(lacks) > 1 else ""
            return X.Refused(f"a table like {kind} (it has {has}) but without its "
                             f"{', '.join(lacks)} column{plural} (that tool writes it in every "
                             "such file: was the file edited or cut?)", fix,
                             f"{kind} with its columns {', '.join(required)}")
    return None


def sniff(path: Path) -> Sniffed | None:
    """What ``path`` is, or None when it is none of the supported kinds (:func:`refused` says
    what it is).

    Raises:
        ImportFailed: the file cannot be read.
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(_HEAD_BYTES)
    except OSError as exc:
        raise ImportFailed(f"{path.name}: cannot be read ({exc.strerror or exc})",
                           "check that the file exists and is readable") from exc
    return sniff_head(path, head)


def sniff_head(path: Path, head: bytes) -> Sniffed | None:
    """:func:`sniff` of a file whose first bytes are ``head`` (up to 64 KiB): None for a file
    named ``.gz`` that is not gzip (pandas would inflate it by its name and fail like a write
    error) or of no supported kind."""
    if path.name.lower().endswith(".gz") and not head.startswith(_GZIP_MAGIC):
        return None
    if head.startswith(_GZIP_MAGIC):
        head = _inflated_head(head)
        kind = next((k for k in R.registered() if k.magic and head.startswith(k.magic)), None)
        return None if kind is None else Sniffed(path, kind.name)
    kind = next((k for k in R.registered() if k.magic and head.startswith(k.magic)), None)
    if kind is not None:
        return Sniffed(path, kind.name)
    decoded = _decode(head)
    if decoded is None:
        return None
    text, encoding = decoded
    if X.refusal_of(text, path.name) is not None:
        return None  # a kind refused by its content (:func:`refusal`)
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


def _inflated_head(head: bytes) -> bytes:
    """The first bytes inside a gzip stream that begins with ``head`` (b"" when they cannot be
    inflated)."""
    try:
        return zlib.decompressobj(wbits=31).decompress(head, 64)
    except zlib.error:
        return b""


def upload_refusal(name: str, data: bytes) -> X.Refused | None:
    """Why an upload named ``name`` (a plain file name) holding ``data`` is not imported, or
    None when its content is one of the supported kinds: the refusal the worker gives the same
    file (:func:`refusal`), so the Import page and the CLI say one thing."""
    head = data[:_HEAD_BYTES]
    if sniff_head(Path(name), head) is not None or bundle_zip.bundle_root_of(data) is not None:
        return None  # a bundle's zip: its entries and manifest are checked on import
    return refusal(name, head)


def kind_words(name: str, data: bytes) -> str | None:
    """What a file of a supported kind is (:attr:`~.kinds.ImportKind.words`), else None."""
    found = sniff_head(Path(name), data[:_HEAD_BYTES])
    if found is None:
        return bundle_zip.WORDS if bundle_zip.bundle_root_of(data) is not None else None
    return R.by_name()[found.kind].words


def _natural(p: Path) -> list[int | str]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p.name)]


def gather(sources: Sequence[Path]) -> tuple[list[Sniffed], list[str]]:
    """The recognised files among ``sources`` (folders expanded, files in natural name order)
    and notes on the files of a folder that were left out (``name: what it is``; a bundle's
    zip: that the import command reopens it as its own job,
    :func:`~.bundle_zip.split_sources`).

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
                if s is not None:
                    found.append(s)
                elif bundle_zip.is_bundle_zip(p):  # reopened by the import command
                    ignored.append(f"{p.name}: {bundle_zip.REOPENED_ON_ITS_OWN}")
                else:
                    ignored.append(f"{p.name}: {describe_unknown(p, _head(p))}")
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
    """The error for a file of no supported kind: :func:`refusal`'s message and its one fix."""
    why = refusal(path.name, head)
    return ImportFailed(why.message(path.name), why.fix)


def _head(path: Path) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(_HEAD_BYTES)
    except OSError:
        return b""
