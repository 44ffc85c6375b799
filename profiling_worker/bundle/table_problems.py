"""What the bundle loader found wrong in a bundle's tables, one record per file and fault.

:func:`profiling_worker.bundle.loader.load_bundle` never raises for a damaged table: it reads what
it can (the CSV beside an unreadable Parquet file, text in a column of numbers as numbers, a
missing aggregated column from the runs table) and records each fault as a
:class:`TableProblem`. The pages show each record's sentence (``Bundle.problems``); the
regression gate decides from the fault, the table and the columns whether it judges the bundle
(:func:`profiling_worker.bundle.gate.sides.refusal`), without reading a file again. A table the
bundle does not have at all is no fault of its files (a failed job has no aggregated table): the
loaded bundle's ``sources`` leaves it out.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Fault(str, Enum):
    """What was wrong with a table (see :class:`TableProblem`)."""

    #: The file is there but cannot be parsed (corrupt, truncated, not Parquet) or is a link out
    #: of the bundle; the table's next file (the CSV beside a Parquet file) was read instead,
    #: when there is one.
    UNREADABLE = "unreadable"
    #: A column of numbers (:data:`profiling_worker.bundle.schema.columns.NUMERIC`) held text; it
    #: was read as numbers, the cells that are no number left empty.
    TEXT_IN_NUMBERS = "text in numbers"
    #: An aggregated statistics column that neither the file, nor the runs table, nor the other
    #: columns give (:mod:`profiling_worker.bundle.stats.aggregated_repair`): left empty.
    NO_COLUMN = "no column"
    #: Aggregated key columns missing and no runs table to rebuild the table from: its rows
    #: cannot be told apart, so the table was left out (empty).
    NO_KEYS = "no key columns"


@dataclass(frozen=True)
class TableProblem:
    """One fault of one table.

    Attributes:
        fault: what was wrong.
        table: the table's name (``aggregated``, ``runs``...).
        file: the file it concerns, relative to the bundle (``tables/aggregated.parquet``);
            for :attr:`Fault.NO_COLUMN` and :attr:`Fault.NO_KEYS` the file the table was read
            from.
        sentence: what the pages say (names the file, the column, what was done).
        columns: the columns concerned (the text column, the missing ones); () for a file.
        cells: :attr:`Fault.TEXT_IN_NUMBERS`: cells that are no number, left empty (0: every
            cell was a number written as text, read exactly).
    """

    fault: Fault
    table: str
    file: str
    sentence: str
    columns: tuple[str, ...] = ()
    cells: int = 0
