"""One Nsight Compute CSV export -> its launch x metric rows, NVTX ranges, rule results and how it
was read (:class:`NcuTable`, the input of :mod:`.ncu_csv`).

Layouts, each read from files ncu wrote (tests/fixtures/h200_import, import_cases 08, 09, 14,
and ncu_2020 -- a public export of Nsight Compute 2020.1, README there):

``--page raw``       one row per launch: ``ID, ..., Kernel Name, Context, Stream, Block Size,
                     Grid Size, Device, CC, <metric>...``; the second row holds each metric's
                     unit (display units, or base units with ``--print-units base``).
``--page details``   one row per launch x metric: ``..., Section Name, Metric Name, Metric Unit,
                     Metric Value`` (also ``--metrics`` output printed while profiling). Current
                     ncu adds rule columns (``Rule Name, Rule Type, Rule Description, Estimated
                     Speedup Type, Estimated Speedup``): a rule row fills them and leaves the
                     metric fields empty; a metric row ends after ``Metric Value``
                     (:func:`~.textcsv.metric_row_width`).
2019.x-2020.1        the details layout with a ``Kernel Time`` column (a time stamp, not a
                     duration) and no ``Block Size`` / ``Grid Size`` columns: grid and block are
                     the ``Launch Statistics`` rows of that name (totals, ``506``); without
                     those rows (a metric list) configs follow the kernel name only (noted).

NVTX columns (``--nvtx``) give each launch's open ranges (:mod:`.nvtx_columns`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.errors import ImportFailed
from profiling_worker.importing import ncu_version, nvtx_columns as X
from profiling_worker.importing.kinds import NCU_DETAILS
from profiling_worker.importing.sniff import Sniffed
from profiling_worker.importing.textcsv import METRIC_NAME_RE, as_text, parse_csv
from profiling_worker.bundle.schema import columns as C, metrics as M

LAUNCH_KEYS = ["ID", "Kernel Name", "Grid Size", "Block Size"]
KERNEL_TIME = "Kernel Time"
#: Rule columns of the details page -> the keys of a report's rule results (report_summary.json).
RULE_FIELDS = {"Section Name": "section_identifier", "Rule Name": "rule_identifier",
               "Rule Type": "type", "Rule Description": "rule_message",
               "Estimated Speedup Type": "speedup_type", "Estimated Speedup": "speedup"}
LAUNCH_STATISTICS = "Launch Statistics"
_SKIP_PREFIXES = (M.DEVICE_ATTRIBUTE_PREFIX, "c2clink__", "nvlink__")


@dataclass
class NcuTable:
    """What one export (or console text, :mod:`.ncu_text`) holds.

    Attributes:
        rows: one row per launch x metric: ``ID, Kernel Name, Grid Size, Block Size`` (text),
            ``Metric`` (Nsight Compute name or the details page's display name), ``Unit``,
            ``Text`` (the value as printed), and ``Section`` on a details page or console text.
        ranges: ``{ID: (push/pop ranges, start/end ranges)}`` of the launches in any NVTX range.
        rules: rule results, one dict per launch x rule (``kernel``, ``ID`` and
            :data:`RULE_FIELDS` values), as a report's summary lists them.
        device: ``device__attribute_*`` values (raw page).
        how: how the file was read, for the Import page and the manifest (``kind``, ``page``,
            ``layout``, ``units``, ``regions``, ``tool_version``).
        notes: what reading it did (shown beside the values).
    """

    rows: pd.DataFrame
    ranges: dict[str, tuple[X.Ranges, X.Ranges]] = field(default_factory=dict)
    rules: list[dict[str, str]] = field(default_factory=list)
    device: dict[str, str] = field(default_factory=dict)
    how: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _ranges(frame: pd.DataFrame, header: list[str]) -> dict[str, tuple[X.Ranges, X.Ranges]]:
    """Each launch's NVTX ranges from the two NVTX columns (parsed once per distinct cell)."""
    push, start = X.nvtx_columns(header)
    if push is None and start is None:
        return {}
    cols = [c for c in (push, start) if c is not None]
    launches = frame[["ID", *cols]].drop_duplicates("ID")
    out = {}
    for row in launches.itertuples(index=False):
        cells = dict(zip(["ID", *cols], row))
        pp = X.parse_cell(cells.get(push), False) if push else ()
        se = X.parse_cell(cells.get(start), True) if start else ()
        if pp or se:
            out[str(cells["ID"])] = (pp, se)
    return out


def _launch_params_from_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Grid Size and Block Size columns from each launch's ``Launch Statistics`` rows
    (2019.x-2020.1 layout)."""
    stats = frame[(frame["Section Name"].astype(str) == LAUNCH_STATISTICS)
                  & frame["Metric Name"].astype(str).isin(["Grid Size", "Block Size"])]
    wide = stats.pivot_table(index="ID", columns="Metric Name", values="Metric Value",
                             aggfunc="first", observed=True).astype(str)
    out = frame.copy()
    ids = out["ID"].astype(str)
    for col in ("Grid Size", "Block Size"):
        values = dict(wide[col]) if col in wide.columns else {}
        out[col] = [values.get(i, "") for i in ids]
    return out


def _rules(frame: pd.DataFrame) -> list[dict[str, str]]:
    """The details page's rule rows as rule results."""
    if "Rule Name" not in frame.columns:
        return []
    rows = frame[as_text(frame["Rule Name"]) != ""]
    fields = [c for c in RULE_FIELDS if c in rows.columns]
    return [{"ID": str(r["ID"]), "kernel": str(r["Kernel Name"]),
             **{RULE_FIELDS[c]: str(r[c]) for c in fields}}
            for r in rows[["ID", "Kernel Name", *fields]].to_dict("records")]


def _details(s: Sniffed, header: list[str], frame: pd.DataFrame) -> NcuTable:
    layout, notes = "details page", []
    if not {"Grid Size", "Block Size"} <= set(header) and "Section Name" in header:
        frame = _launch_params_from_rows(frame)
        layout = ("details page, " + ("Nsight Compute 2019.x-2020.1 layout (Kernel Time "
                                      "column); " if KERNEL_TIME in header else "")
                  + "grid and block from the Launch Statistics rows")
        if (frame["Grid Size"] == "").all():
            notes.append(f"{s.path.name}: no grid or block size in the file (no Grid Size / "
                         "Block Size columns or Launch Statistics rows): configs are told apart "
                         "by kernel name only")
    _require(s, frame.columns)
    rules = _rules(frame)
    metrics = frame[as_text(frame["Metric Name"]) != ""]
    rows = metrics[[*LAUNCH_KEYS, "Metric Name", "Metric Unit", "Metric Value",
                    "Section Name"]].copy()
    rows.columns = [*LAUNCH_KEYS, C.METRIC, C.UNIT, "Text", "Section"]
    if rules:
        layout += f" with rule columns ({counted(len(rules), 'rule result')})"
    return NcuTable(rows, _ranges(frame, header), rules,
                    how={"page": "details", "layout": layout}, notes=notes)


#: Raw-page columns that stand in for Grid Size / Block Size where a raw page lacks them (ncu
#: 2019.x-2021 raw pages: ``..., Kernel Name, Kernel Time, Context, Stream, <metric>...``).
_LAUNCH_METRICS = {"Grid Size": M.GRID_SIZE, "Block Size": M.BLOCK_SIZE}


def _raw(s: Sniffed, header: list[str], frame: pd.DataFrame) -> NcuTable:
    units = frame.iloc[0] if frame["ID"].iloc[0] == "" else pd.Series("", index=frame.columns)
    data = frame[frame["ID"] != ""].copy()
    layout, notes = "raw page (one row per launch, units row)", []
    missing = [c for c in _LAUNCH_METRICS if c not in data.columns]
    for col in missing:
        metric = _LAUNCH_METRICS[col]
        data[col] = as_text(data[metric]) if metric in data.columns else ""
    if missing:
        layout += "; grid and block from " + (
            ", ".join(_LAUNCH_METRICS[c] for c in missing)
            if all(_LAUNCH_METRICS[c] in data.columns for c in missing) else "nowhere")
        if not all(_LAUNCH_METRICS[c] in data.columns for c in missing):
            notes.append(f"{s.path.name}: no grid or block size in the file (no Grid Size / "
                         "Block Size columns, no launch__grid_size / launch__block_size): "
                         "configs are told apart by kernel name only")
    _require(s, data.columns)
    metrics = [h for h in header if METRIC_NAME_RE.match(h)]
    device = {h: str(data[h].iloc[0]) for h in metrics if h.startswith(M.DEVICE_ATTRIBUTE_PREFIX)}
    keep = [h for h in metrics if not h.startswith(_SKIP_PREFIXES)]
    rows = data[[*LAUNCH_KEYS, *keep]].melt(id_vars=LAUNCH_KEYS, var_name=C.METRIC,
                                             value_name="Text")
    rows[C.UNIT] = rows[C.METRIC].map(units)
    return NcuTable(rows, _ranges(data, header), device=device,
                    how={"page": "raw", "layout": layout}, notes=notes)


def _require(s: Sniffed, columns: pd.Index) -> None:
    missing = [c for c in LAUNCH_KEYS if c not in columns]
    if missing:
        raise ImportFailed(f"{s.path.name}: an Nsight Compute CSV without column(s) "
                           f"{', '.join(missing)}", "export it again with `ncu --csv`")


def read_export(s: Sniffed) -> NcuTable:
    """The rows, ranges, rules and device attributes of one ncu CSV export.

    Raises:
        ImportFailed: the export lacks ncu's launch columns, or cannot be parsed
            (:func:`~.textcsv.parse_csv`).
    """
    header, frame = parse_csv(s)
    table = _details(s, header, frame) if s.kind == NCU_DETAILS else _raw(s, header, frame)
    push, start = X.nvtx_columns(header)
    table.how.update({"kind": "Nsight Compute CSV export",
                      "tool_version": ncu_version.label(ncu_version.from_text(s.path)),
                      "nvtx_columns": bool(push or start)})
    if KERNEL_TIME in header:
        table.notes.append(f"{s.path.name}: its Kernel Time column is a time stamp, not a "
                           "duration; durations are its Duration (gpu__time_duration) values")
    return table


__all__ = ["NcuTable", "read_export", "LAUNCH_KEYS", "RULE_FIELDS"]
