"""The kinds of file the importer reads, one :class:`ImportKind` each: how :mod:`.sniff` tells
it by content, what reads it, and the supported-format line it falls under (issue 38).

:func:`registered` is the registry: the kinds below, read by the combined readers of
:mod:`.assemble` (:data:`READERS`), then each module of :mod:`.readers`, a kind with a reader of its
own, which registers itself by declaring ``KIND = ImportKind(..., read=...)``: a new kind of that
sort is that one module. :func:`supported` (the Import page's list and the refusal hint),
:mod:`.how_read`'s kind column, :mod:`.assemble`'s choice of reader and the app's import banner
come from it; the table of ``docs/importing.md`` is tested against it (``test_import_kinds.py``).
Files refused by kind are :mod:`.refusals`.

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

    Raises:
        ValueError: neither or both of ``reader`` and ``read`` given.
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

    def __post_init__(self) -> None:
        if (self.reader in READERS) == (self.read is not None):
            raise ValueError(f"import kind {self.name!r}: give one of reader (one of {READERS}) "
                             "or read (a reader of its own)")


_NSIGHT = ("nsight-python 0.9.4-1.1 CSVs: profiled_data (per run) and processed_data "
           "(aggregated), any output_prefix or file name")
_NCU_CSV = ("Nsight Compute CSV exports: ncu --csv --page raw, --page details or --metrics (with "
            "or without --print-units base)")

#: The kinds of the combined readers, in the order :mod:`.sniff` tries them (a header's most
#: specific kind first).
_COMBINED: tuple[ImportKind, ...] = (
    ImportKind(NSIGHT_AGG, "nsight-python aggregated CSV (processed_data)", NSIGHT_CSVS, _NSIGHT,
               columns=(C.ANNOTATION, C.METRIC, C.AVG)),
    ImportKind(NSIGHT_RAW, "nsight-python per-run CSV (profiled_data)", NSIGHT_CSVS, _NSIGHT,
               columns=(C.ANNOTATION, C.VALUE, C.METRIC)),
    ImportKind(NCU_DETAILS, "Nsight Compute CSV export", NCU_EXPORTS, _NCU_CSV,
               columns=("ID", "Kernel Name", "Metric Name", "Metric Value"), late_header=True),
    ImportKind(NCU_RAW, "Nsight Compute CSV export", NCU_EXPORTS, _NCU_CSV,
               columns=("ID", "Kernel Name"), late_header=True),
    ImportKind(NCU_REPORT, "Nsight Compute report", NCU_REPORTS,
               "Nsight Compute reports: .ncu-rep and .ncu-rep.gz (with or without NVTX ranges)",
               magic=b"NVR\x00"),
    ImportKind(NCU_TEXT, "Nsight Compute console text", NCU_EXPORTS,
               "Nsight Compute console text (ncu --nvtx python3 app.py > log): values as printed",
               lines=lambda lines: any(_CONSOLE_SECTION.match(ln) for ln in lines)),
    ImportKind(NCU_LOG, "ncu log (kept, not read)", NOT_READ,
               lines=lambda lines: any(ln.startswith("==PROF==") for ln in lines[:200])),
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


def hint_supported() -> str:
    """The refusal hint of a file of no supported kind: every line of :func:`supported`."""
    return "supported: " + "; ".join(supported())


def read_by(reader: str) -> tuple[str, ...]:
    """The kinds that ``reader`` (one of :data:`READERS`) reads, in :func:`registered` order."""
    return tuple(k.name for k in registered() if k.reader == reader)


def of_header(fields: Sequence[str]) -> ImportKind | None:
    """The first kind whose :attr:`~ImportKind.columns` the header ``fields`` all hold."""
    held = set(fields)
    return next((k for k in registered() if k.columns and set(k.columns) <= held), None)


__all__ = ["ImportKind", "READERS", "registered", "by_name", "supported",
           "hint_supported", "read_by", "of_header", "NSIGHT_RAW", "NSIGHT_AGG", "NCU_DETAILS",
           "NCU_RAW", "NCU_REPORT", "NCU_LOG", "NCU_TEXT", "NSIGHT_CSVS", "NCU_EXPORTS",
           "NCU_REPORTS", "NOT_READ"]
