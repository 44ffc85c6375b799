"""The report's Nsight Compute parts: a launch's deep dive (the deep-dive page's panels, from
:mod:`app.core.views.deep_dive`, for the launch the page opens on) and the job's rule digest
(the worker's ``rules`` table, as the bound, kernels and deep-dive pages show it). Both come
from the worker's answers (``profiling_worker deepdive`` / ``rules``), passed in by the caller:
this module reads no report."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.schema import metrics as M

from profiling_worker.bundle.loader import Bundle
from app.core.figures.deep_dive import build_bars
from app.core.share import document as H
from app.core.views import deep_dive as D


@dataclass(frozen=True)
class WorkerAnswers:
    """What the worker said about the bundle's report.

    Attributes:
        deep_dive: the ``deepdive`` dict (None: not asked, or the worker could not).
        rules: the ``rules`` digest table (None likewise).
        why_not: sentence per missing answer (``deep_dive`` / ``rules`` -> why), shown instead.
        rules_note: the worker's line on what it read for the digest.
    """

    deep_dive: Mapping[str, Any] | None = None
    rules: pd.DataFrame | None = None
    why_not: Mapping[str, str] | None = None
    rules_note: str = ""


def _panel(section: H.Section, panel: D.Panel, caption: str = "") -> None:
    if panel.missing:
        section.add(H.note(panel.missing))
    if not panel.frame.empty:
        section.add(H.table(panel.frame, caption))


def deep_dive_section(bundle: Bundle, data: Mapping[str, Any]) -> H.Section:
    """The deep-dive page for its first launch: speed of light (bars and table), memory
    workload, occupancy and its limiter, warp stalls (bars and table), launch statistics,
    source hot spots, the launch's rule results."""
    labels = D.launch_labels(data, D.config_labeler(bundle.spec.configs if bundle.spec else ()))
    section = H.Section("Deep dive")
    if not labels:
        return section.add(H.note("The report holds no profiled launch."))
    launch = next(iter(labels))
    section.add(H.paragraph(f"Report {data.get('report')}: "
                            f"{counted(len(labels), 'launch', 'launches')}; shown: "
                            f"{labels[launch]} (the page's first launch). Sections: "
                            + (", ".join(D.section_names(data, launch)) or "none") + "."))
    sol = D.metric_panel(data, launch, "speed of light", (M.GPU_TIME, M.GPC_HZ,
                                                          *M.SPEED_OF_LIGHT))
    pct = sol.frame[sol.frame[D.UNIT] == "%"] if not sol.frame.empty else sol.frame
    section.add("<h3>Speed of light</h3>")
    if not pct.empty:
        section.add(H.figure(build_bars(pct, D.METRIC, D.VALUE, "Throughput, % of peak", "%",
                                        100), "deep-dive-sol"))
    _panel(section, sol)
    section.add("<h3>Memory workload</h3>")
    _panel(section, D.metric_panel(data, launch, "memory", M.MEMORY_WORKLOAD))
    occ, limiter = D.occupancy(data, launch)
    section.add("<h3>Occupancy</h3>", H.paragraph(
        "Limited by: " + (f"{limiter[0]} ({limiter[1]:g} block{'' if limiter[1] == 1 else 's'} "
                          "per SM)" if limiter else "not in report")))
    _panel(section, occ)
    stalls = D.stalls(data, launch)
    section.add("<h3>Warp state stalls</h3>")
    if not stalls.frame.empty:
        section.add(H.figure(build_bars(stalls.frame.head(12), D.REASON, D.CYCLES,
                                        "Where warps wait", "cycles / issued instr."),
                             "deep-dive-stalls"))
    _panel(section, stalls)
    section.add("<h3>Launch statistics</h3>")
    _panel(section, D.metric_panel(data, launch, "launch", M.LAUNCH_STATISTICS))
    section.add("<h3>Source hot spots</h3>")
    _panel(section, D.table(data, "hot_spots", launch, "source"))
    rules = D.table(data, "rules", launch)
    section.add("<h3>Rule results of this launch</h3>")
    _panel(section, rules if not rules.frame.empty else D.Panel(
        pd.DataFrame(), "No rule results for this launch (rules run only when sections were "
                        "collected)."))
    return section


#: The title of the rule digest's section.
RULES_TITLE = "Nsight Compute rules across the job"


def rules_section(answers: WorkerAnswers) -> H.Section:
    """The rule digest: every rule that fired over the job's launches, by estimated saving."""
    section = H.Section(RULES_TITLE)
    if answers.rules is None:
        return section.add(H.note((answers.why_not or {}).get("rules", "No rule digest.")))
    if answers.rules.empty:
        return section.add(H.note(f"No rule results in this report. {answers.rules_note}"))
    return section.add(H.paragraph(answers.rules_note), H.table(answers.rules))
