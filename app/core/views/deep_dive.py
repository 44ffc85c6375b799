"""The deep-dive view's tables, from the worker's deep-dive dict (``profiling_worker deepdive``:
``launches``, ``sections_present``, ``sections``, ``metrics``, ``rules``, ``markers``,
``hot_spots``). Pure: pandas only.

Each panel names the Nsight Compute section its numbers come from; a panel whose section the
report does not hold gets a :class:`Panel` with an empty frame and the reason, never zeros.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema import metrics as M

from app.core import frame_columns as F
from app.core.table_text import shorten_middle

#: Panel -> (Nsight Compute section identifier, what it shows).
SECTIONS = {
    "speed of light": ("SpeedOfLight", "GPU Speed Of Light Throughput"),
    "memory": ("MemoryWorkloadAnalysis", "Memory Workload Analysis"),
    "occupancy": ("Occupancy", "Occupancy"),
    "stalls": ("WarpStateStats", "Warp State Statistics"),
    "launch": ("LaunchStats", "Launch Statistics"),
    "source": ("SourceCounters", "Source Counters"),
}
METRIC, LABEL, VALUE, UNIT = C.METRIC, F.LABEL, C.VALUE, C.UNIT
REASON, CYCLES, SHARE = "Stall reason", "Cycles per issued instruction", "Share %"


@dataclass(frozen=True)
class Panel:
    """One panel's table, or why it is empty (``missing``: the section the report lacks)."""

    frame: pd.DataFrame
    missing: str = ""


def config_labeler(configs: Sequence[Mapping[str, Any]]) -> Callable[[int], str]:
    """Config index -> ``n=4096`` from the job's configs; ``config i`` for one it does not list
    (-1: a report made elsewhere, which names no config)."""
    def label(i: int) -> str:
        if 0 <= i < len(configs):
            return ", ".join(f"{k}={v}" for k, v in configs[i].items())
        return "config unknown" if i < 0 else f"config {i}"
    return label


def launch_labels(data: Mapping[str, Any], config_label: Callable[[int], str]) -> dict[int, str]:
    """launch_id -> ``region · config · run r · kernel`` for the launch picker."""
    return {int(launch["launch_id"]): " · ".join([
        str(launch.get("annotation") or "(no NVTX range)"), config_label(int(launch["config"])),
        f"run {launch['run']}", shorten_middle(str(launch["kernel"]).split("(")[0], 40)])
        for launch in data.get("launches") or ()}


def present(data: Mapping[str, Any], launch_id: int) -> list[str]:
    """Section identifiers the report holds for the launch (JSON keys are strings)."""
    sections = data.get("sections_present") or {}
    return list(sections.get(str(launch_id), sections.get(launch_id, [])))


def section_names(data: Mapping[str, Any], launch_id: int) -> list[str]:
    """The launch's sections for a caption: ncu's own identifiers, and "the --metrics list" for
    the numbered section ncu makes of metrics asked for by name (``section0``)."""
    return ["the --metrics list" if re.fullmatch(r"section\d+", s) else s
            for s in present(data, launch_id)]


def _missing(data: Mapping[str, Any], launch_id: int, panel: str, partial: bool = False) -> str:
    """Why the panel is empty (or, ``partial``, incomplete); "" when its section is there."""
    section, title = SECTIONS[panel]
    if section in present(data, launch_id):
        return ""
    fix = ("Profile the point with the full section set (`ncu --set full`): the deep-dive "
           "action does for a job run here; an imported job needs a report made so.")
    if partial:
        return (f"The report has no {title} section (`{section}`); below are those of its metrics "
                f"that the job collected anyway. {fix}")
    return f"Not in this report: {title} (section `{section}`) was not collected. {fix}"


def _rows(data: Mapping[str, Any], key: str, launch_id: int) -> pd.DataFrame:
    rows = [r for r in data.get(key) or () if r.get("launch_id") == launch_id]
    frame = pd.DataFrame(rows).drop(columns="launch_id", errors="ignore")
    if "address" in frame:  # program counters in hex, as the SASS beside them writes addresses
        frame["address"] = [f"0x{int(a):x}" if a == a and a is not None else ""
                            for a in frame["address"]]
    # source file and line only where the report holds them (needs -lineinfo)
    return frame.drop(columns=[c for c in ("file", "line") if c in frame
                               and not frame[c].map(
                                   lambda v: v not in ("", None) and v == v).any()])


def metric_panel(data: Mapping[str, Any], launch_id: int, panel: str,
                 names: Sequence[str]) -> Panel:
    """Metrics ``names`` of the launch that the report has (Metric, Value, Unit) and, when the
    panel's section is absent, why; metrics the launch lacks are left out, never zero."""
    found = _rows(data, "metrics", launch_id)
    frame = (found[found["metric"].isin(list(names))] if not found.empty
             else pd.DataFrame(columns=["metric", "value", "unit"]))
    order = {n: i for i, n in enumerate(names)}
    frame = frame.sort_values("metric", key=lambda s: s.map(order)).rename(
        columns={"metric": METRIC, "value": VALUE, "unit": UNIT})
    return Panel(frame.reset_index(drop=True), _missing(data, launch_id, panel, not frame.empty))


def occupancy(data: Mapping[str, Any], launch_id: int) -> tuple[Panel, tuple[str, float] | None]:
    """Occupancy metrics and the limiter: (resource, blocks per SM it allows) for the resource
    allowing the fewest (``launch__occupancy_limit_*``; ties name every such resource), None
    when the report has no limits."""
    panel = metric_panel(data, launch_id, "occupancy", M.OCCUPANCY)
    values = dict(zip(panel.frame[METRIC], panel.frame[VALUE]))
    limits = {res: values[name] for res, name in M.OCCUPANCY_LIMITS.items() if name in values}
    if not limits:
        return panel, None
    fewest = min(limits.values())
    return panel, (" and ".join(r for r, v in limits.items() if v == fewest), float(fewest))


def _stall_rows(data: Mapping[str, Any], launch_id: int) -> pd.DataFrame:
    """(reason, value) rows: the ``STALL_PREFIX`` metrics, else the WarpStateStats section's
    scalar metrics with "stalled" in their names, named by their labels."""
    found = _rows(data, "metrics", launch_id)
    if not found.empty:
        found = found[found["metric"].str.startswith(M.STALL_PREFIX)
                      & found["metric"].str.endswith(M.STALL_SUFFIX)]
    if not found.empty:
        return pd.DataFrame({"reason": found["metric"].str[len(M.STALL_PREFIX):
                                                           -len(M.STALL_SUFFIX)],
                             "value": found["value"]})
    found = _rows(data, "sections", launch_id)
    if found.empty:
        return pd.DataFrame(columns=["reason", "value"])
    found = found[(found["section"] == SECTIONS["stalls"][0])
                  & found["metric"].str.contains("stalled")
                  & found["value"].map(lambda v: isinstance(v, (int, float)))]
    return pd.DataFrame({"reason": found["label"].where(found["label"] != "", found["metric"]),
                         "value": found["value"]})


def stalls(data: Mapping[str, Any], launch_id: int) -> Panel:
    """Warp states, most cycles first: reason, cycles per issued instruction, share of all
    (``smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio``, WarpStateStats)."""
    found = _stall_rows(data, launch_id)
    if found.empty:
        return Panel(pd.DataFrame(columns=[REASON, CYCLES, SHARE]),
                     _missing(data, launch_id, "stalls") or "No warp state metrics in this launch.")
    frame = pd.DataFrame({REASON: found["reason"].astype(str).str.replace("_", " "),
                          CYCLES: found["value"].astype(float)})
    frame[SHARE] = 100.0 * frame[CYCLES] / frame[CYCLES].sum()
    return Panel(frame.sort_values(CYCLES, ascending=False, ignore_index=True))


def table(data: Mapping[str, Any], key: str, launch_id: int, panel: str | None = None) -> Panel:
    """The launch's ``rules``, ``markers``, ``hot_spots`` or ``sections`` rows; ``panel`` names
    the section whose absence explains an empty table."""
    frame = _rows(data, key, launch_id)
    why = _missing(data, launch_id, panel) if panel and frame.empty else ""
    return Panel(frame, why)
