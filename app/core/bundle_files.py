"""The files of a bundle as downloads: a zip of the whole bundle, a decompressed ``.ncu-rep``,
and the ``.ncu-rep`` summary (``nsight/report_summary.json``) as tables (pure: stdlib + pandas).

Files are read only where they resolve inside the bundle (a symlink to ``/etc/passwd`` is not
shown), and a ``.gz`` is inflated by streaming to a temporary file with a cap (no gzip bomb).
Everything here reads the disk only when called, so a page can pass these functions to
``st.download_button(data=...)`` as zero-argument callables and nothing is built until a click.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

import pandas as pd

from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.paths import inside_bundle
from profiling_worker.bundle.inflate import InflateError, check_inflates, open_inflated
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.writer import write_table_csv

from app.core import frame_columns as F
from app.core.numbers import fmt_bytes
from profiling_worker.bundle.loader import Bundle, TableUnreadable, table_rows
from app.core.provenance import is_imported

#: The most one download may be (a file, the zip, an inflated ``.ncu-rep``): Streamlit holds a
#: download's bytes in the server's memory while it is sent (docs/performance.md), so a larger
#: one is named with its folder to copy instead (cuBLAS reports are 14-26 MB).
MAX_DOWNLOAD_BYTES = 64 * 1024**2
MAX_INFLATED_BYTES = MAX_DOWNLOAD_BYTES

#: Files that are already compressed: stored in the zip as they are.
_STORED_SUFFIXES = (".gz", ".zip", ".parquet", ".png")


#: Download-name prefix of an imported file as it was uploaded.
ORIGINAL_UPLOAD = "original-upload"
#: What the Files page says about the stored originals and the dashboard's own CSVs.
ORIGINALS_NOTE = (
    f"Files under `{C.NSIGHT_DIR}/` of an imported job are the uploaded files, kept "
    "byte-identical as evidence and offered as `" + ORIGINAL_UPLOAD + "_<name>`: a text cell "
    "in them that starts with `=`, `+`, `-` or `@` is as uploaded and a spreadsheet may run it "
    f"as a formula. The dashboard's own CSVs (`{C.TABLES_DIR}/*.csv`, made on download, and "
    "every table's Download CSV) start such cells with `'`, so a spreadsheet shows them as text.")
#: What the Files page says of a table's CSV that the bundle does not hold (issue 40).
MADE_ON_DOWNLOAD = "made on download"


def made_csvs(bundle: Bundle) -> list[str]:
    """``tables/<name>.csv`` of every ``tables/<name>.parquet`` of the bundle without one beside
    it: the CSVs made from the Parquet file when downloaded (:func:`table_csv_file`; a bundle
    written since issue 40 holds none, an older one holds them all), sorted."""
    present = {f.relpath for f in bundle.files}
    prefix = f"{C.TABLES_DIR}/"
    return sorted(f"{rel.removesuffix('.parquet')}.csv" for rel in present
                  if rel.startswith(prefix) and rel.endswith(".parquet")
                  and "/" not in rel.removeprefix(prefix)
                  and f"{rel.removesuffix('.parquet')}.csv" not in present)


def table_csv_file(bundle_dir: Path, relpath: str) -> BinaryIO:
    """The CSV ``relpath`` (``tables/<name>.csv``, one of :func:`made_csvs`) made from its
    Parquet file (:func:`~profiling_worker.bundle.writer.write_table_csv`: the text the writer
    wrote before issue 40) into a temporary file, returned open for reading at its start; the
    file has no name on disk (closing it frees the space).

    Raises:
        TableUnreadable: the Parquet file cannot be read, or leads out of the bundle.
        FileNotFoundError: the bundle has no such table.
    """
    name = Path(relpath).name.removesuffix(".csv")
    out = tempfile.TemporaryFile()  # noqa: SIM115 - returned open
    try:
        text = io.TextIOWrapper(out, encoding="utf-8", newline="", write_through=True)
        if not write_table_csv(bundle_dir, name, text):
            raise FileNotFoundError(f"{relpath}: the bundle has no {C.TABLES_DIR}/{name}.parquet")
        text.detach()
        out.seek(0)
        return out
    except BaseException:
        out.close()
        raise


#: The fix of a table's CSV that cannot be made (said by the Files page and the route's 422).
UNMADE_FIX = ("its Parquet file is in the bundle's zip as it is; run the job again for a "
              "readable table")


def unmade_csv(relpath: str, exc: Exception) -> str:
    """Why the CSV ``relpath`` is not made: its table cannot be read (``exc`` names the file and
    the cause), with :data:`UNMADE_FIX`."""
    return f"{relpath}: not made, its table cannot be read ({exc}); {UNMADE_FIX}"


def made_csv_problem(bundle_dir: Path, relpath: str) -> str | None:
    """Why the CSV ``relpath`` (one of :func:`made_csvs`) cannot be made (:func:`unmade_csv`),
    as far as its Parquet file's footer tells (read alone: no CSV is made until a click); None
    when the footer reads, or the file is gone. Never raises."""
    try:
        table_rows(bundle_dir, Path(relpath).name.removesuffix(".csv"))
    except (TableUnreadable, OSError) as exc:
        return unmade_csv(relpath, exc)
    return None


def checked_download(make: Callable[[], BinaryIO], what: str, where: str,
                     cap: int) -> BinaryIO:
    """``make()`` (a download made on click: a table's CSV, the zip), refused where it came out
    larger than ``cap`` bytes (its size is known only once made).

    Raises:
        DownloadTooLarge: over ``cap``; the message names ``what`` and ``where`` to copy from.
        TableUnreadable: a CSV whose Parquet file cannot be read (as :func:`table_csv_file`).
    """
    made = make()
    refused = too_large(what, os.fstat(made.fileno()).st_size, where, cap)
    if refused:
        made.close()
        raise DownloadTooLarge(refused)
    return made


class DownloadTooLarge(ValueError):
    """A download made on click that came out over the cap; ``str()`` says which and the fix."""


def is_original_upload(bundle: Bundle, relpath: str) -> bool:
    """True for a file an import copied verbatim from the upload: under ``nsight/`` of an
    imported bundle, other than the report summary the importer writes."""
    return (is_imported(bundle.manifest) and relpath.startswith(f"{C.NSIGHT_DIR}/")
            and relpath != C.REPORT_SUMMARY_FILE)


def download_name(bundle: Bundle, relpath: str) -> str:
    """File name of one file's download: ``original-upload_<name>`` for an original upload
    (:func:`is_original_upload`), else the relative path with ``/`` as ``_``."""
    if is_original_upload(bundle, relpath):
        return f"{ORIGINAL_UPLOAD}_{Path(relpath).name}"
    return relpath.replace("/", "_")


def zip_name(bundle: Bundle) -> str:
    """``<job_id>.zip``."""
    return f"{bundle.job_id}.zip"


def too_large(what: str, size: int, where: str, cap: int | None = None) -> str | None:
    """Why a download of ``size`` bytes is not offered (None: it is): over ``cap`` (default
    :data:`MAX_DOWNLOAD_BYTES`, what the server holds in memory; the download route streams
    more), with the folder to copy it from."""
    limit = MAX_DOWNLOAD_BYTES if cap is None else cap
    if size <= limit:
        return None
    why = " (the server holds it in memory)" if limit == MAX_DOWNLOAD_BYTES else ""
    return (f"{what} is {fmt_bytes(size)}, more than the {fmt_bytes(limit)} a download may "
            f"take{why}; copy it from {where} on the server instead")


def _not_gzip(path: Path) -> str | None:
    """Why the file's first bytes already refuse it (no gzip magic), nothing inflated. Its
    trailer (ISIZE, RFC 1952) is not trusted: a file cut short ends in arbitrary bytes, which
    read as a size of gigabytes (issue 41: a truncated report was refused as 'declares
    3,687.6 MB'); the capped inflation tells a cut, padding and a bomb apart instead."""
    with open(path, "rb") as fh:
        magic = fh.read(2)
    if magic != b"\x1f\x8b":
        return (f"{path.name}: not a readable gzip file (it does not begin with gzip's magic "
                "bytes; give the plain file, or one compressed with gzip)")
    return None


def report_download_problem(path: Path, max_bytes: int = MAX_INFLATED_BYTES) -> str | None:
    """Why the inflated ``.ncu-rep`` of ``path`` (a ``.ncu-rep.gz``) cannot be downloaded: not
    gzip, cut short, padded, or larger than ``max_bytes`` (default :data:`MAX_INFLATED_BYTES`,
    the in-memory download's cap); None when it can.
    Reads its first bytes, then, if they pass, inflates it once keeping nothing (1 MiB at a
    time, at most inflate.py's cap: 20x the file, 64 MiB at least; the report walk needs every
    byte to find padding or a cut)."""
    problem = _not_gzip(path)
    if problem:
        return problem
    try:
        check_inflates(path, max_bytes)
    except InflateError as exc:
        return f"{exc.message} ({exc.hint})"
    return None


def tail_lines(path: Path, lines: int = 200, max_bytes: int = 256 * 1024) -> str:
    """The last ``lines`` lines of the text file ``path``, read from its last ``max_bytes``
    only (a worker.log of many MB is not read whole on every page run); undecodable bytes
    replaced."""
    with open(path, "rb") as fh:
        fh.seek(max(0, fh.seek(0, 2) - max_bytes))
        text = fh.read().decode("utf-8", errors="replace")
    return "\n".join(text.splitlines()[-lines:])


class _Pending(io.RawIOBase):
    """The unseekable output of a streamed zip: bytes written wait here until taken."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self.parts.append(bytes(data))
        return len(data)

    def take(self) -> bytes:
        out, self.parts = b"".join(self.parts), []
        return out


def zip_chunks(bundle: Bundle, chunk_bytes: int = 1 << 20) -> Iterator[bytes]:
    """Every file of the bundle (as listed in ``bundle.files``, and only where it resolves
    inside the bundle) as one zip, made as it is read: each piece is yielded once written
    (about ``chunk_bytes`` of input at a time), so the first bytes come at once and no more
    than a chunk is held (ZIP data descriptors: the sizes follow each file's data).

    Entries are ``<job_id>/<relpath>`` so the archive unpacks into one directory that the app
    can open again; compressed files (``.gz``, ``.parquet`` ...) are stored, the rest deflated.
    The tables' CSVs that the bundle does not hold (:func:`made_csvs`) are made and added, so a
    downloaded zip holds them as an older bundle's does; a table whose Parquet file cannot be
    read has none.
    """
    out = _Pending()
    with zipfile.ZipFile(out, "w") as archive:
        for item in bundle.files:
            path = inside_bundle(bundle.path, item.relpath)
            if path is None:  # gone, or a link out of the bundle
                continue
            info = zipfile.ZipInfo.from_file(path, f"{bundle.job_id}/{item.relpath}")
            with open(path, "rb") as src:
                yield from _zip_entry(archive, info, src, out, chunk_bytes)
        for relpath in made_csvs(bundle):
            try:
                made = table_csv_file(bundle.path, relpath)
            except (TableUnreadable, OSError):  # its damaged Parquet file is in the zip as is
                continue
            info = zipfile.ZipInfo(f"{bundle.job_id}/{relpath}", time.localtime()[:6])
            with made:
                yield from _zip_entry(archive, info, made, out, chunk_bytes)
    yield out.take()  # the central directory


def _zip_entry(archive: zipfile.ZipFile, info: zipfile.ZipInfo, src: BinaryIO, out: _Pending,
               chunk_bytes: int) -> Iterator[bytes]:
    """``src`` added to ``archive`` as ``info`` (stored when already compressed, else
    deflated), the pieces of ``out`` yielded as they are written."""
    info.compress_type = (zipfile.ZIP_STORED if info.filename.endswith(_STORED_SUFFIXES)
                          else zipfile.ZIP_DEFLATED)
    with archive.open(info, "w") as dst:
        while chunk := src.read(chunk_bytes):
            dst.write(chunk)
            yield out.take()
    yield out.take()


def zip_bundle(bundle: Bundle) -> BinaryIO:
    """:func:`zip_chunks` written to a temporary file (not memory), returned open for reading
    (a reader: ``st.download_button`` reads ``io.BufferedReader``); the file has no name left
    on disk."""
    with tempfile.TemporaryDirectory(prefix="kprof-zip-") as tmp:
        with open(Path(tmp) / "bundle.zip", "wb") as fh:
            for piece in zip_chunks(bundle):
                fh.write(piece)
        return open(Path(tmp) / "bundle.zip", "rb")  # noqa: SIM115 - unlinked with tmp


def report_files(bundle: Bundle) -> list[str]:
    """Relative paths of the bundle's Nsight Compute reports (``nsight/*.ncu-rep[.gz]``), in
    the order the worker reads them (plain first)."""
    names = [f.relpath for f in bundle.files if f.relpath.startswith(f"{C.NSIGHT_DIR}/")]
    return ([n for n in names if n.endswith(".ncu-rep")]
            + [n for n in names if is_gzipped_report(n)])


def explains_launches(bundle: Bundle) -> bool:
    """True when the worker can explain the bundle's launches: it has a report, or the deep dive
    the worker wrote from one (``nsight/deep_dive.json[.gz]``: every launch's sections and rules,
    kept when a large report was left out of a bundle)."""
    return bool(report_files(bundle)) or any(f.relpath in C.DEEP_DIVE_FILES for f in bundle.files)


@dataclass(frozen=True)
class LeftOut:
    """A file the bundle's manifest says was left out (``bundled``: path -> reason, written by
    ``scripts/bundle_recorded.py``), with its size in bytes where the manifest kept it
    (``bundled_bytes``; None for bundles made before it did)."""

    relpath: str
    reason: str
    size: int | None


def left_out_files(bundle: Bundle) -> list[LeftOut]:
    """The reports (``.ncu-rep``) the manifest names as left out, i.e. not in the bundle as
    such nor gzip-compressed, in the manifest's order."""
    manifest = bundle.manifest or {}
    notes, sizes = manifest.get("bundled") or {}, manifest.get("bundled_bytes") or {}
    present = {f.relpath for f in bundle.files}
    out = []
    for relpath, reason in notes.items() if isinstance(notes, dict) else ():
        if (str(relpath).endswith(".ncu-rep") and relpath not in present
                and f"{relpath}.gz" not in present):
            size = sizes.get(relpath) if isinstance(sizes, dict) else None
            out.append(LeftOut(str(relpath), str(reason), size if isinstance(size, int) else None))
    return out


def zip_report_note(bundle: Bundle) -> str | None:
    """What to know of the reports in the bundle's zip, where they are gzipped: Nsight
    Compute's tools need the plain ``.ncu-rep``, and ``ncu_report`` 2026.3.1 given the ``.gz``
    raises nothing and reads a report of no ranges (issue 39); None when the bundle has none."""
    gzipped = [r for r in report_files(bundle) if is_gzipped_report(r)]
    if not gzipped:
        return None
    return (f"The zip keeps the Nsight Compute report{'s' if len(gzipped) > 1 else ''} gzipped "
            f"({', '.join(f'`{r}`' for r in gzipped)}): gunzip before opening in ncu-ui, "
            "`ncu --import` or the `ncu_report` module, which reads a `.gz` as an empty report "
            "without an error; or take the decompressed file from its *Download .ncu-rep* "
            "below. The dashboard opens the unzipped bundle as it is.")


def is_gzipped_report(relpath: str) -> bool:
    """True for ``*.ncu-rep.gz`` (how bundled reports are shipped)."""
    return relpath.endswith(".ncu-rep.gz")


def gunzipped_name(relpath: str) -> str:
    """``nsight/x.ncu-rep.gz`` -> ``x.ncu-rep``."""
    return Path(relpath).name.removesuffix(".gz")


def gunzip_file(path: Path, max_bytes: int = MAX_INFLATED_BYTES) -> BinaryIO:
    """The decompressed content of a ``.gz`` file as an open file, inflated by streaming to a
    temporary file (profiling_worker/bundle/inflate.py: 1 MiB at a time, never whole in memory, a
    report walked block by block), at most ``max_bytes``. The file has no name left on disk;
    closing it frees the space.

    Raises:
        InflateError: not gzip, cut short, larger than ``max_bytes`` or 20x the file (a gzip
            bomb, or a report to open from the .gz with ``gunzip`` instead), or a report with
            bytes after its last block.
    """
    return open_inflated(Path(path), max_bytes)


@dataclass(frozen=True)
class ReportSummary:
    """``nsight/report_summary.json`` as tables.

    Attributes:
        overview: Item, Value rows: report file, launches, kernel names, metrics per launch,
            rule results.
        kernels: Kernel, Launches (most launched first).
        rules: one row per rule result (kernel, then the rule's own fields); empty when the
            report holds none (Nsight Compute runs rules only with ``--section``).
    """

    overview: pd.DataFrame
    kernels: pd.DataFrame
    rules: pd.DataFrame


def read_report_summary(bundle: Bundle) -> ReportSummary | None:
    """The bundle's ``.ncu-rep`` summary, or None when it has none.

    Raises:
        ValueError: the file is not valid JSON or not an object.
    """
    path = inside_bundle(bundle.path, C.REPORT_SUMMARY_FILE)
    if path is None:
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{C.REPORT_SUMMARY_FILE} is not a JSON object")
    return summary_tables(data)


def summary_has_no_rules(bundle: Bundle) -> str | None:
    """Why the bundle's report holds no rule results, when its summary already shows that (all
    its launches listed, none with a rule result), so nobody reads the report again; None when
    the summary cannot tell (missing, unreadable, or more launches than it lists)."""
    path = inside_bundle(bundle.path, C.REPORT_SUMMARY_FILE)
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path else None
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("rule_results"):
        return None
    launches = data.get("launches")
    if not isinstance(launches, int) or launches > C.SUMMARY_RULE_LAUNCHES:
        return None
    return (f"{data.get('report', 'the report')}: {counted(launches, 'launch', 'launches')}, "
            "none with a rule result "
            "(Nsight Compute evaluates rules on sections; this job collected a metric list "
            "only: profile a point with a section set, e.g. its deep dive)")


def summary_tables(data: dict[str, Any]) -> ReportSummary:
    """Tables of one summary dict (``report``, ``launches``, ``kernels``,
    ``metrics_per_launch``, ``rule_results``, and from an import ``ncu_version``; missing keys
    read as empty)."""
    kernels = data.get("kernels") or {}
    rules = data.get("rule_results") or []
    overview = pd.DataFrame([
        {F.ITEM: "Report", C.VALUE: str(data.get("report", ""))},
        {F.ITEM: F.LAUNCHES, C.VALUE: str(data.get("launches", ""))},
        {F.ITEM: "Kernel names", C.VALUE: str(len(kernels))},
        {F.ITEM: "Metrics per launch", C.VALUE: str(data.get("metrics_per_launch", ""))},
        {F.ITEM: "Rule results", C.VALUE: str(len(rules))},
        # written by imports only (the worker's summary has no such key: nothing to say there)
        *([{F.ITEM: "ncu version", C.VALUE: str(data["ncu_version"] or "not in file")}]
          if "ncu_version" in data else []),
    ])
    kernel_rows = sorted(((str(k), int(v)) for k, v in kernels.items()), key=lambda kv: -kv[1])
    return ReportSummary(
        overview=overview,
        kernels=pd.DataFrame(kernel_rows, columns=[C.KERNEL, F.LAUNCHES]),
        rules=pd.DataFrame([r for r in rules if isinstance(r, dict)]))
