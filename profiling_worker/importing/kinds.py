"""The kinds of file the importer reads, one :class:`ImportKind` each: how :mod:`.sniff` tells
it by content, which reader reads it, and the supported-format line it falls under (issue 38).

:data:`SUPPORTED` (the Import page's list and the refusal hint), :mod:`.how_read`'s kind column
and :mod:`.assemble`'s choice of reader come from :data:`KINDS`; the table of
``docs/importing.md`` is tested against it (``test_import_kinds.py``). Files refused by kind are
:mod:`.refusals`. Adding a kind: its entry below, and a reader only when no reader of
:data:`READERS` reads it.

The layouts: nsight-python 0.9.4-1.1's ``profiled_data`` / ``processed_data`` CSVs, Nsight
Compute 2019.x-2025.3's ``--csv`` pages and console text, ``.ncu-rep`` reports (the cases of
``tests/fixtures/import_cases``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from profiling_worker.bundle.schema import columns as C

NSIGHT_RAW = "nsight_raw"
NSIGHT_AGG = "nsight_agg"
NCU_DETAILS = "ncu_details"
NCU_RAW = "ncu_raw"
NCU_REPORT = "ncu_report"
NCU_LOG = "ncu_log"
NCU_TEXT = "ncu_text"

#: The readers (:mod:`.assemble`): nsight-python's CSVs (:mod:`.csv_job`), Nsight Compute CSV
#: exports and console text (:mod:`.ncu_csv`), reports (:mod:`.report_job`), or none (kept with
#: the files only).
NSIGHT_CSVS, NCU_EXPORTS, NCU_REPORTS, NOT_READ = "nsight_csvs", "ncu_exports", "ncu_reports", \
    "not_read"
READERS = (NSIGHT_CSVS, NCU_EXPORTS, NCU_REPORTS, NOT_READ)

_CONSOLE_SECTION = re.compile(r"^ {4}Section: \S")  # ncu's console text tables


@dataclass(frozen=True)
class ImportKind:
    """One kind of importable file.

    Attributes:
        name: the kind (manifest ``provenance.formats``, ``Sniffed.kind``).
        words: what it is, for the Import page's how-read table.
        reader: which of :data:`READERS` reads it.
        supported: its line of :data:`SUPPORTED` ("": not a format of its own, kept only).
        columns: a CSV header holding all of these is this kind (first match in :data:`KINDS`).
        late_header: the header may follow program output (ncu prints its table after the
            program's own lines); else it is the first line after ncu's ``==PROF==`` lines.
        magic: the file (or the file inside gzip) begins with these bytes.
        lines: a test of the head's decoded lines, for kinds told by neither (console text).
    """

    name: str
    words: str
    reader: str
    supported: str = ""
    columns: tuple[str, ...] = ()
    late_header: bool = False
    magic: bytes = b""
    lines: Callable[[Sequence[str]], bool] | None = None


_NSIGHT = ("nsight-python 0.9.4-1.1 CSVs: profiled_data (per run) and processed_data "
           "(aggregated), any output_prefix or file name")
_NCU_CSV = ("Nsight Compute CSV exports: ncu --csv --page raw, --page details or --metrics (with "
            "or without --print-units base)")

#: Every kind, in the order :mod:`.sniff` tries them (a header's most specific kind first).
KINDS: tuple[ImportKind, ...] = (
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
BY_NAME = {k.name: k for k in KINDS}
#: One line per supported format, for messages and the Import page.
SUPPORTED: tuple[str, ...] = tuple(dict.fromkeys(k.supported for k in KINDS if k.supported))
HINT_SUPPORTED = "supported: " + "; ".join(SUPPORTED)


def read_by(reader: str) -> tuple[str, ...]:
    """The kinds that ``reader`` (one of :data:`READERS`) reads, in :data:`KINDS` order."""
    return tuple(k.name for k in KINDS if k.reader == reader)


def of_header(fields: Sequence[str]) -> ImportKind | None:
    """The first kind whose :attr:`~ImportKind.columns` the header ``fields`` all hold."""
    names = set(fields)
    return next((k for k in KINDS if k.columns and set(k.columns) <= names), None)


__all__ = ["ImportKind", "KINDS", "BY_NAME", "READERS", "SUPPORTED", "HINT_SUPPORTED",
           "read_by", "of_header", "NSIGHT_RAW", "NSIGHT_AGG", "NCU_DETAILS", "NCU_RAW",
           "NCU_REPORT", "NCU_LOG", "NCU_TEXT", "NSIGHT_CSVS", "NCU_EXPORTS", "NCU_REPORTS",
           "NOT_READ"]
