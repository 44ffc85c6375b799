"""Nsight Compute's console text (``ncu --nvtx python3 app.py > log``, or ``ncu -i rep``) ->
an :class:`~.ncu_rows.NcuTable`, like a details-page export.

Layout (read from ncu 2025.3.1 output, import_cases 12 and 14; ncu 2020's in import_cases 16
prints ``<kernel>, 2020-Jul-28 06:48:36, Context 1, Stream 7`` and no table header)::

    [944] python3.12@127.0.0.1                          <- process
      <kernel> (2, 64, 1)x(384, 1, 1), Context 1, Stream 7, Device 0, CC 9.0   <- one launch
        NVTX Start/End Ranges:                           <- optional, then domain and <id,name>
        NVTX Push/Pop Stack for Thread 944:              <- optional, then domain and <depth,name>
        Section: GPU Speed Of Light Throughput
        ----------------------- ----------- ------------  <- column widths
        Metric Name             Metric Unit Metric Value
        ----------------------- ----------- ------------
        Duration                         us        17.95  <- display units and precision
        ----------------------- ----------- ------------
        OPT   Est. Speedup: 50%                          <- rule results, wrapped text

Values are as printed: display units (``us``, ``Ghz``, ``Kbyte``) rounded to the shown digits,
which the import notes. Launches are numbered in the order printed (the ``ID`` of a CSV export).
Text that has ncu's ``==PROF==`` lines and sections but no launch line of this layout (another
ncu version's console text) is refused with the command that writes an importable file.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from profiling_worker.bundle.errors import ImportFailed
from profiling_worker.importing import ncu_version
from profiling_worker.importing.ncu_rows import NcuTable
from profiling_worker.importing.sniff import Sniffed
from profiling_worker.bundle.schema import columns as C

HINT_EXPORT = ("write an importable file from the same run: `ncu --nvtx -o report python3 "
               "app.py` (then upload report.ncu-rep), or `ncu --nvtx --csv --page raw "
               "python3 app.py > raw.csv`")
_LAUNCH = re.compile(r"^  (?P<kernel>\S.*?) \((?P<grid>\d+, \d+, \d+)\)x\((?P<block>\d+, \d+, "
                     r"\d+)\)(?:, Context \d+, Stream \d+)?(?:, Device \d+, CC [\d.]+)?\s*$")
#: ncu 2019.x-2021 print the launch's time stamp instead of its grid and block.
_LAUNCH_OLD = re.compile(r"^  (?P<kernel>\S.*?), \d{4}-[A-Z][a-z]{2}-\d{2} \d{2}:\d{2}:\d{2}, "
                         r"Context \d+, Stream \d+\s*$")
_RANGE = re.compile(r"^\s{8,}<(\d+),(.*)>\s*$")
_RULE = re.compile(r"^ {4}(OPT|WRN|INF|ERR)\s{2,}(.*)$")
_SPEEDUP = re.compile(r"Est\. (Local |Global )?Speedup: ([\d.]+)%")
_DASHES = re.compile(r"^ {4}-+( -+)+\s*$")
_HEADER = re.compile(r"^\s+Metric Name\s+Metric Unit\s+Metric Value\s*$")


class _Launch:
    """One launch's lines as they are read (grid and block None where the launch line does
    not print them: then they are its Launch Statistics rows)."""

    def __init__(self, index: int, kernel: str, grid: str | None, block: str | None):
        self.id, self.kernel = str(index), kernel
        self.grid = f"({grid})" if grid else None
        self.block = f"({block})" if block else None
        self.push_pop: list[str] = []
        self.start_end: list[str] = []
        self.metrics: list[tuple[str, str, str, str]] = []  # section, name, unit, value
        self.rules: list[dict[str, str]] = []

    def launch_parameter(self, name: str) -> str:
        """``Grid Size`` / ``Block Size`` from the launch line, else its Launch Statistics."""
        given = self.grid if name == "Grid Size" else self.block
        return given or next((v for sec, n, _, v in self.metrics
                              if sec == "Launch Statistics" and n == name), "")


def _spans(dashes: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"-+", dashes)]


def _cells(line: str, spans: list[tuple[int, int]]) -> list[str]:
    """A table row cut at the dash line's columns (the last column runs to the line's end)."""
    ends = [s for s, _ in spans[1:]] + [len(line)]
    return [line[s:e].strip() for (s, _), e in zip(spans, ends)]


class _Reader:
    """Line by line; a section's table is ``Section:``, a dash line (the column widths), an
    optional ``Metric Name / Metric Unit / Metric Value`` header and dash line (ncu 2021.2
    on), the rows, a closing dash line."""

    def __init__(self) -> None:
        self.launches: list[_Launch] = []
        self.section = ""
        self.target: list[str] | None = None  # the NVTX list being read
        self.spans: list[tuple[int, int]] = []
        self.table = ""  # "", "section", "open", "header", "rows"
        self.old_layout = False  # launch lines with a time stamp (ncu 2019.x-2021)

    def line(self, text: str) -> None:
        launch = _LAUNCH.match(text) or _LAUNCH_OLD.match(text)
        if launch:
            self.old_layout |= launch.re is _LAUNCH_OLD
            found = launch.groupdict()
            self.launches.append(_Launch(len(self.launches), found["kernel"],
                                         found.get("grid"), found.get("block")))
            self.target, self.table = None, ""
            return
        if not self.launches:
            return
        cur = self.launches[-1]
        stripped = text.strip()
        if stripped.startswith("NVTX Push/Pop Stack"):
            self.target = cur.push_pop
        elif stripped.startswith("NVTX Start/End Ranges"):
            self.target = cur.start_end
        elif stripped.startswith("Section: "):
            self.section, self.target, self.table = stripped[9:], None, "section"
        elif _DASHES.match(text):
            self._dashes(text)
        elif self.target is not None and (m := _RANGE.match(text)):
            self.target.append(m.group(2))
        elif self.table == "open" and _HEADER.match(text):
            self.table = "header"
        elif self.table in ("open", "rows") and stripped:
            name, unit, value = (_cells(text, self.spans) + ["", "", ""])[:3]
            cur.metrics.append((self.section, name, unit, value))
            self.table = "rows"
        else:
            self._rule(cur, text)

    def _dashes(self, text: str) -> None:
        if self.table == "section":
            self.spans, self.table = _spans(text), "open"
        elif self.table == "header":
            self.table = "rows"
        elif self.table in ("open", "rows"):
            self.table = ""  # the table's closing line; later dash lines part rule results

    def _rule(self, cur: _Launch, text: str) -> None:
        rule = _RULE.match(text)
        if rule:
            cur.rules.append({"section_identifier": self.section, "type": rule.group(1),
                              "rule_message": rule.group(2).strip()})
        elif cur.rules and text.startswith(" " * 10) and text.strip():
            cur.rules[-1]["rule_message"] += " " + text.strip()


_COMMA_DECIMAL = re.compile(r"^-?\d{1,3}(?: \d{3})*,\d+$|^-?\d{1,3}(?: \d{3})+$")
_POINT_DECIMAL = re.compile(r"^-?[\d,]*\.\d+$")


def _locale_numbers(values: pd.Series) -> tuple[pd.Series, bool]:
    """Values printed in a locale with a decimal comma and space-grouped digits (``875,84``,
    ``13 181 137``: ncu prints numbers in the machine's locale) as C-locale text, and whether
    the file was such. Decided for the whole file: a comma decimal somewhere and a point
    decimal nowhere (``1,250`` alone stays ncu's thousands separator)."""
    text = values.astype(str).str.strip()
    comma = text.str.fullmatch(_COMMA_DECIMAL.pattern)
    if not (comma & ~text.str.fullmatch(r"-?\d{1,3}(,\d{3})+")).any() or \
            text.str.fullmatch(_POINT_DECIMAL.pattern).any():
        return values, False
    fixed = text.str.replace(" ", "", regex=False).str.replace(",", ".", regex=False)
    return text.where(~comma, fixed), True


def _table(path: Path, launches: list[_Launch], old_layout: bool) -> NcuTable:
    rows = pd.DataFrame(
        [(la.id, la.kernel, la.launch_parameter("Grid Size"), la.launch_parameter("Block Size"),
          name, unit, value, section)
         for la in launches for section, name, unit, value in la.metrics],
        columns=["ID", "Kernel Name", "Grid Size", "Block Size", C.METRIC, C.UNIT, "Text",
                 "Section"])
    rules = []
    for la in launches:
        for r in la.rules:
            speedup = _SPEEDUP.search(r["rule_message"])
            rules.append({"ID": la.id, "kernel": la.kernel, **r,
                          **({"speedup_type": (speedup.group(1) or "").strip().lower(),
                              "speedup": speedup.group(2)} if speedup else {})})
    ranges = {la.id: (tuple(la.push_pop), tuple(la.start_end)) for la in launches
              if la.push_pop or la.start_end}
    rows["Text"], localized = _locale_numbers(rows["Text"])
    notes = [f"{path.name}: Nsight Compute console text: values as printed, in display "
             "units rounded to the digits shown (us 17.95 read as 17,950 ns: up to about "
             "0.1 % off); import the .ncu-rep or a `--csv --print-units base` export for "
             "every digit"]
    if (rows["Grid Size"] == "").all():
        notes.append(f"{path.name}: no grid or block size printed (no Launch Statistics "
                     "section): configs are told apart by kernel name only")
    if localized:
        notes.append(f"{path.name}: numbers printed with a decimal comma and digits grouped "
                     "by spaces (the profiling machine's locale): 875,84 read as 875.84, "
                     "13 181 137 as 13181137")
    return NcuTable(rows, ranges, rules, how={
        "kind": "Nsight Compute console text", "page": "details (as printed)",
        "layout": "ncu console output: sections as text tables" + (
            " (2019.x-2021 layout: a time stamp instead of grid and block, which are the "
            "Launch Statistics rows)" if old_layout else ""),
        "tool_version": ncu_version.label(ncu_version.from_text(path)),
        "nvtx_columns": bool(ranges), "units": "display"},
        notes=notes)


def read_text(s: Sniffed) -> NcuTable:
    """The launches, metrics, NVTX ranges and rule results of ncu console text.

    Raises:
        ImportFailed: the text holds no launch in this layout (another ncu version's console
            text, or a log with no profiled launch), or no metric table.
    """
    reader = _Reader()
    with open(s.path, encoding=s.encoding, errors="replace") as fh:
        for text in fh:
            reader.line(text.rstrip("\r\n"))
    launches = reader.launches
    if not launches or not any(la.metrics for la in launches):
        raise ImportFailed(f"{s.path.name}: Nsight Compute console text with no launch in the "
                           "layout this importer reads (kernel line `name (grid)x(block), "
                           "Context N, Stream N`, then Section tables); another ncu version's "
                           "console output, or a log of a run that profiled nothing",
                           HINT_EXPORT)
    return _table(s.path, launches, reader.old_layout)


__all__ = ["read_text", "HINT_EXPORT"]
