"""The dashboard's pages and the analyses they show, listed once.

:data:`PAGES` is the link bar's table (:mod:`app.ui.navigation` builds ``st.Page`` objects from
it). :data:`ANALYSES` names, for each analysis a page opens on, its page, its title, the view
that builds its table and the options the page opens with; the HTML report
(:mod:`app.core.share.analyses`: one section each, in this order) and the agent door
(``analysis_table``, and ``job_summary``'s durations) read the same entries, so the report and
an agent see the numbers a page shows when it opens. No Streamlit here: the report and the door
run without it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import pandas as pd

from app.core import derived
from profiling_worker.bundle.loader import Bundle
from app.core.views.bound import LATENCY_THRESHOLD_PCT, BoundOptions, bound_frame
from app.core.views.clocks import (ClocksOptions, collector_runs_frame, kernel_clock_frame,
                                   trace_frame)
from app.core.views.kernels import kernel_time_frame
from app.core.views.memory import MemoryOptions, memory_frame
from app.core.views.roofline import RooflineOptions, roofline_frame
from app.core.views.stability import StabilityOptions, stability_frame
from app.core.views.sweep import SweepOptions, sweep_frame, sweep_x
from app.core.views.timeline import timeline_view


@dataclass(frozen=True)
class PageEntry:
    """One page: its script in ``app/app_pages``, title, material icon and URL path ("" for the
    default page at the root URL)."""

    script: str
    title: str
    icon: str
    url_path: str


#: Section, script, title, material icon, URL path: the pages in the order of the bar (one
#: table, so a page is one row). The first page is the default (root URL).
_PAGES = (
    ("Performance", "sweep.py", "Size sweep", ":material/show_chart:", ""),
    ("Performance", "bound_roofline.py", "Bound and roofline", ":material/speed:", "bound"),
    ("Performance", "memory.py", "Memory and fusion", ":material/memory_alt:", "memory"),
    ("Performance", "stability.py", "Stability", ":material/bar_chart:", "stability"),
    ("Kernels", "kernels.py", "Kernels", ":material/view_list:", "kernels"),
    ("Kernels", "one_kernel.py", "One kernel", ":material/center_focus_strong:", "one-kernel"),
    ("Kernels", "deep_dive.py", "Deep dive", ":material/biotech:", "deep-dive"),
    ("Kernels", "compare.py", "Compare jobs", ":material/compare_arrows:", "compare"),
    ("GPU and tools", "cache_clock.py", "Cache and clock", ":material/tune:", "cache-clock"),
    ("GPU and tools", "clocks_thermal.py", "Clocks and thermal", ":material/thermostat:",
     "clocks"),
    ("GPU and tools", "backends.py", "CUPTI vs Nsight Compute", ":material/balance:",
     "backends"),
    ("Data", "results.py", "Results tables", ":material/table:", "results"),
    ("Data", "files.py", "Files", ":material/folder:", "files"),
    ("Data", "history.py", "History", ":material/history:", "history"),
    ("Data", "import_files.py", "Import", ":material/upload_file:", "import"),
    ("Data", "environment.py", "Environment", ":material/memory:", "environment"),
)
#: Section -> pages, in the order of the bar.
SECTIONS: dict[str, tuple[PageEntry, ...]] = {
    section: tuple(PageEntry(*row[1:]) for row in _PAGES if row[0] == section)
    for section in dict.fromkeys(row[0] for row in _PAGES)}


def page(script: str) -> PageEntry:
    """The bar's entry of ``script`` (``sweep.py``).

    Raises:
        KeyError: no page of the bar has that script.
    """
    found = [e for entries in SECTIONS.values() for e in entries if e.script == script]
    if not found:
        raise KeyError(f"no page {script!r} in the link bar (app/core/pages.py)")
    return found[0]


O = TypeVar("O")


@dataclass(frozen=True)
class Analysis(Generic[O]):
    """One analysis: ``key`` (the agent door's name for it), the ``title`` of its report
    section, the ``script`` of the page that shows it, the ``view`` that builds its table and
    ``opening``, the options that page opens with for a bundle (some depend on the job: the
    sweep's x axis). ``gpu_only``: it reads GPU counters, clocks or traces, so a job that ran
    on no GPU (cpu backend, ``Bundle.host_timer``) has nothing for it and its report leaves it
    out (issue 37)."""

    key: str
    title: str
    script: str
    view: Callable[[Bundle, O], pd.DataFrame]
    opening: Callable[[Bundle], O]
    gpu_only: bool = False

    def table(self, bundle: Bundle) -> pd.DataFrame:
        """The analysis's table as its page opens on ``bundle``.

        Raises:
            app.core.metrics.MissingData, app.core.derived.MissingWork: the job cannot feed it.
        """
        return self.view(bundle, self.opening(bundle))


def _no_options(_bundle: Bundle) -> None:
    """The opening of a view that takes no options."""


def _sweep_opening(bundle: Bundle) -> SweepOptions:
    # absolute time in µs against the job's default x parameter
    return SweepOptions(quantity=derived.TIME, time_unit="µs", x=sweep_x(bundle))


def _timeline_table(bundle: Bundle, _options: None) -> pd.DataFrame:
    return timeline_view(bundle).launches


SWEEP = Analysis("sweep", "Size sweep", "sweep.py", sweep_frame, _sweep_opening)
STABILITY = Analysis("stability", "Stability", "stability.py", stability_frame,
                     lambda _b: StabilityOptions(time_unit="µs"))
COLLECTORS = Analysis("collectors", "Clocks: per-run collectors and kernel time",
                      "clocks_thermal.py", collector_runs_frame,
                      lambda _b: ClocksOptions(time_unit="µs"))
#: Any entry of :data:`ANALYSES` (their options differ in type).
AnyAnalysis = (Analysis[SweepOptions] | Analysis[StabilityOptions] | Analysis[BoundOptions]
               | Analysis[RooflineOptions] | Analysis[MemoryOptions] | Analysis[ClocksOptions]
               | Analysis[None])
#: The analyses, in the HTML report's order (the bar's order is :data:`SECTIONS`).
ANALYSES: tuple[AnyAnalysis, ...] = (
    SWEEP, STABILITY,
    Analysis("bound", "Bound", "bound_roofline.py", bound_frame,
             lambda _b: BoundOptions(latency_threshold_pct=LATENCY_THRESHOLD_PCT), gpu_only=True),
    Analysis("roofline", "Roofline", "bound_roofline.py", roofline_frame,
             lambda _b: RooflineOptions(), gpu_only=True),
    # the page's chart shows the last config; the table, as here, every config
    Analysis("memory", "Memory traffic and fusion", "memory.py", memory_frame,
             lambda _b: MemoryOptions(), gpu_only=True),
    Analysis("kernels", "Kernels", "kernels.py", lambda b, _o: kernel_time_frame(b),
             _no_options),
    Analysis("nvml_trace", "Clocks: NVML trace of the whole job", "clocks_thermal.py",
             lambda b, _o: trace_frame(b), _no_options, gpu_only=True),
    Analysis("timeline", "Clocks: timeline of the job", "clocks_thermal.py", _timeline_table,
             _no_options, gpu_only=True),
    Analysis("kernel_clocks", "Clocks: SM clock each kernel ran at", "clocks_thermal.py",
             lambda b, _o: kernel_clock_frame(b), _no_options, gpu_only=True),
    COLLECTORS,
)


def analysis(key: str) -> AnyAnalysis:
    """The entry of :data:`ANALYSES` named ``key``.

    Raises:
        KeyError: no analysis has that key (the message lists those there are).
    """
    found = [a for a in ANALYSES if a.key == key]
    if not found:
        raise KeyError(f"no analysis {key!r}; there are {', '.join(a.key for a in ANALYSES)}")
    return found[0]
