"""The kinds of file the importer reads, one :class:`ImportKind` each: how :mod:`.sniff` tells
it by content, what reads it, and the supported-format line it falls under (issue 38).

:func:`registered` is the registry: the kinds below, read by the combined readers of
:mod:`.assemble` (:data:`READERS`), then each module of :mod:`.readers`, a kind with a reader of its
own, which registers itself by declaring ``KIND = ImportKind(..., read=...)``: a new kind of that
sort is that one module. :func:`supported` (the Import page's list and the refusal hint),
:mod:`.how_read`'s kind column, :mod:`.assemble`'s choice of reader and the app's import banner
come from it, and so does the table of ``docs/importing.md`` (:mod:`.formats_table`, from each
kind's :attr:`~ImportKind.layouts`). Files refused by kind are :mod:`.refusals`.

The layouts: nsight-python 0.9.4-1.1's ``profiled_data`` / ``processed_data`` CSVs, Nsight
Compute 2019.x-2025.3's ``--csv`` pages and console text, ``.ncu-rep`` reports (the cases of
``tests/fixtures/import_cases``).
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from profiling_worker.bundle.schema import columns as C
from profiling_worker.importing import readers

if TYPE_CHECKING:  # the readers import this module: a Job only in annotations
    from profiling_worker.importing.job import Job

NSIGHT_RAW = "nsight_raw"
NSIGHT_AGG = "nsight_agg"
NCU_DETAILS = "ncu_details"
NCU_RAW = "ncu_raw"
NCU_REPORT = "ncu_report"
NCU_LOG = "ncu_log"
NCU_TEXT = "ncu_text"

#: The combined readers (:mod:`.assemble`): nsight-python's CSVs (:mod:`.csv_job`), Nsight
#: Compute CSV exports and console text (:mod:`.ncu_csv`), reports (:mod:`.report_job`), or
#: none (kept with the files only).
NSIGHT_CSVS, NCU_EXPORTS, NCU_REPORTS, NOT_READ = "nsight_csvs", "ncu_exports", "ncu_reports", \
    "not_read"
READERS = (NSIGHT_CSVS, NCU_EXPORTS, NCU_REPORTS, NOT_READ)

_CONSOLE_SECTION = re.compile(r"^ {4}Section: \S")  # ncu's console text tables


@dataclass(frozen=True)
class Layout:
    """One layout of a kind's files: a row of the supported formats table (``docs/importing.md``,
    written by :mod:`.formats_table`), in Markdown.

    Attributes:
        format: what the file is and what wrote it.
        versions: the tool versions read, and which of them were checked on a recorded file.
        told_by: what tells it by content (names each of the kind's ``columns`` in backticks).
        read_as: what the import makes of it.
    """

    format: str
    versions: str
    told_by: str
    read_as: str


@dataclass(frozen=True)
class ImportKind:
    """One kind of importable file.

    Attributes:
        name: the kind (manifest ``provenance.formats``, ``Sniffed.kind``).
        words: what it is, for the Import page's how-read table and the import banner.
        reader: which of :data:`READERS` reads it ("" for a kind with its own ``read``).
        supported: its line of :func:`supported` ("": not a format of its own, kept only).
        columns: a CSV header holding all of these is this kind (first match in :func:`registered`).
        late_header: the header may follow program output (ncu prints its table after the
            program's own lines); else it is the first line after ncu's ``==PROF==`` lines.
        magic: the file (or the file inside gzip) begins with these bytes.
        lines: a test of the head's decoded lines, for kinds told by neither (console text).
        read: a reader of its own (the kinds of :mod:`.readers`): the given files of this kind,
            in the order :func:`~.sniff.gather` found them -> the job; such files are read
            alone, never beside files of another kind (:mod:`.assemble` refuses that).
        layouts: its rows of the supported formats table, one per layout (at least one).

    Raises:
        ValueError: neither or both of ``reader`` and ``read`` given; no layout.
    """

    name: str
    words: str
    reader: str = ""
    supported: str = ""
    columns: tuple[str, ...] = ()
    late_header: bool = False
    magic: bytes = b""
    lines: Callable[[Sequence[str]], bool] | None = None
    read: Callable[[list[Path]], Job] | None = None
    layouts: tuple[Layout, ...] = ()

    def __post_init__(self) -> None:
        if (self.reader in READERS) == (self.read is not None):
            raise ValueError(f"import kind {self.name!r}: give one of reader (one of {READERS}) "
                             "or read (a reader of its own)")
        if not self.layouts:
            raise ValueError(f"import kind {self.name!r}: give its layouts=(Layout(format, "
                             "versions, told_by, read_as), ...), the rows of docs/importing.md's "
                             "table of supported formats")


_NSIGHT = ("nsight-python 0.9.4-1.1 CSVs: `profiled_data` (per run) and `processed_data` "
           "(aggregated), any `output_prefix` or file name")
_NCU_CSV = ("Nsight Compute CSV exports: `ncu --csv --page raw`, `--page details` or `--metrics` "
            "(with or without `--print-units base`)")

_NSPY_VERSIONS = "0.9.4, 0.9.5, 0.9.6, 1.0, 1.1"
_NCU_CHECKED = "ncu 2025.3 (checked)"
_NCU_COLUMNS = ("ID", "Kernel Name")
_DETAILS_COLUMNS = (*_NCU_COLUMNS, "Metric Name", "Metric Value")

#: The kinds of the combined readers, in the order :mod:`.sniff` tries them (a header's most
#: specific kind first).
_COMBINED: tuple[ImportKind, ...] = (
    ImportKind(NSIGHT_AGG, "nsight-python aggregated CSV (processed_data)", NSIGHT_CSVS, _NSIGHT,
               columns=(C.ANNOTATION, C.METRIC, C.AVG), layouts=(Layout(
                   "nsight-python aggregated CSV (`processed_data`)", _NSPY_VERSIONS,
                   "columns `Annotation`, `Metric`, `AvgValue`",
                   "paired with the per-run file it was written from (same counts, minima, "
                   "maxima); alone: taken as written, CI95 recomputed with Student-t from "
                   "`StdDev` and `NumRuns`"),)),
    ImportKind(NSIGHT_RAW, "nsight-python per-run CSV (profiled_data)", NSIGHT_CSVS, _NSIGHT,
               columns=(C.ANNOTATION, C.VALUE, C.METRIC), layouts=(Layout(
                   "nsight-python per-run CSV (`profiled_data`)", _NSPY_VERSIONS,
                   "columns `Annotation`, `Value`, `Metric`",
                   "runs; aggregated recomputed (Student-t CI95, median)"),)),
    ImportKind(NCU_DETAILS, "Nsight Compute CSV export", NCU_EXPORTS, _NCU_CSV,
               columns=_DETAILS_COLUMNS, late_header=True, layouts=(
                   Layout("Nsight Compute CSV, `--page details` / `--metrics` printed live",
                          f"{_NCU_CHECKED}; with rule columns (`Rule Name` .. `Estimated "
                          "Speedup`): a metric row ends after `Metric Value` (18 fields under 22 "
                          "columns)",
                          "`ID`, `Kernel Name`, `Metric Name`, `Metric Value`",
                          "launches; rule rows -> rule results (`nsight/report_summary.json`, "
                          "Files page)"),
                   Layout("Nsight Compute CSV, details, 2019.x-2020.1 layout",
                          "a public ncu 2020.1 export "
                          "(`tests/fixtures/import_cases/15-ncu-2020-details`)",
                          "`ID`, `Kernel Name`, `Metric Name`, `Metric Value`, `Kernel Time` (a "
                          "time stamp), no `Grid Size` / `Block Size` columns",
                          "grid and block from the `Launch Statistics` rows of those names"))),
    ImportKind(NCU_RAW, "Nsight Compute CSV export", NCU_EXPORTS, _NCU_CSV,
               columns=_NCU_COLUMNS, late_header=True, layouts=(
                   Layout("Nsight Compute CSV, `ncu --csv --page raw`", _NCU_CHECKED,
                          "`ID`, `Kernel Name`, one column per metric, a units row",
                          "launches (units converted: ns, byte, Hz, byte/s, %)"),
                   Layout("Nsight Compute CSV, raw page without `Grid Size` / `Block Size` "
                          "columns (2019.x-2021)", "-",
                          "`ID`, `Kernel Name`, metric columns",
                          "grid and block from `launch__grid_size` / `launch__block_size`; "
                          "without those, configs follow kernel names (a note says so)"))),
    ImportKind(NCU_REPORT, "Nsight Compute report", NCU_REPORTS,
               "Nsight Compute reports: .ncu-rep and .ncu-rep.gz (with or without NVTX ranges)",
               magic=b"NVR\x00", layouts=(Layout(
                   "Nsight Compute report `.ncu-rep`, `.ncu-rep.gz`", "any ncu_report reads",
                   "`NVR` magic (inside gzip too)",
                   "launches; runs and aggregated when alone"),)),
    ImportKind(NCU_TEXT, "Nsight Compute console text", NCU_EXPORTS,
               "Nsight Compute console text (`ncu --nvtx python3 app.py > log`): values as printed",
               lines=lambda lines: any(_CONSOLE_SECTION.match(ln) for ln in lines),
               layouts=(Layout(
                   "Nsight Compute console text (`ncu --nvtx python3 app.py > log`, `ncu -i rep`)",
                   f"{_NCU_CHECKED}; the 2019.x-2021 layout too (`<kernel>, 2020-Jul-28 "
                   "06:48:36, Context 1, Stream 7`, tables without a header row; a public "
                   "nv-nsight-cu-cli 2020 output, `import_cases/16`): grid and block from its "
                   "Launch Statistics rows",
                   "`    Section: ` lines with text tables",
                   "launches: metric name / unit / value as printed (display units, rounded: a "
                   "note says so); rule lines (`OPT`, `WRN` ...) -> rule results; console text of "
                   "another layout is refused naming it, with the command below"),)),
    ImportKind(NCU_LOG, "ncu log (kept, not read)", NOT_READ,
               lines=lambda lines: any(ln.startswith("==PROF==") for ln in lines[:200]),
               layouts=(Layout("ncu log", "-", "`==PROF==` lines, no table",
                               "kept with the files, not read; alone: refused as \"ncu's log "
                               "with no profiled values\""),)),
)


@functools.cache
def registered() -> tuple[ImportKind, ...]:
    """Every kind, in the order :mod:`.sniff` tries them: the combined readers' kinds, then the
    ``KIND`` of each module of :mod:`.readers` in name order (imported on the first call).

    Raises:
        TypeError: a module of :mod:`.readers` without an :class:`ImportKind` named ``KIND``.
        ValueError: two kinds of one name.
    """
    own: list[ImportKind] = []
    for found in pkgutil.iter_modules(readers.__path__):
        module = importlib.import_module(f"{readers.__name__}.{found.name}")
        declared = getattr(module, "KIND", None)
        if not isinstance(declared, ImportKind):
            raise TypeError(f"{module.__name__}: a module of importing/readers declares its "
                            "import kind as KIND = ImportKind(..., read=...)")
        own.append(declared)
    kinds = (*_COMBINED, *own)
    names = [k.name for k in kinds]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"import kinds named twice: {twice}")
    return kinds


@functools.cache
def by_name() -> dict[str, ImportKind]:
    """The registered kinds by name (manifest ``provenance.formats``, ``Sniffed.kind``)."""
    return {k.name: k for k in registered()}


def supported() -> tuple[str, ...]:
    """One line per supported format, for messages and the Import page."""
    return tuple(dict.fromkeys(k.supported for k in registered() if k.supported))


def read_by(reader: str) -> tuple[str, ...]:
    """The kinds that ``reader`` (one of :data:`READERS`) reads, in :func:`registered` order."""
    return tuple(k.name for k in registered() if k.reader == reader)


def of_header(fields: Sequence[str]) -> ImportKind | None:
    """The first kind whose :attr:`~ImportKind.columns` the header ``fields`` all hold."""
    held = set(fields)
    return next((k for k in registered() if k.columns and set(k.columns) <= held), None)


__all__ = ["ImportKind", "Layout", "READERS", "registered", "by_name", "supported",
           "read_by", "of_header", "NSIGHT_RAW", "NSIGHT_AGG", "NCU_DETAILS",
           "NCU_RAW", "NCU_REPORT", "NCU_LOG", "NCU_TEXT", "NSIGHT_CSVS", "NCU_EXPORTS",
           "NCU_REPORTS", "NOT_READ"]
