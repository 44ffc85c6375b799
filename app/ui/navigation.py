"""The page list and the grouped link bar at the top of every page.

Streamlit's sidebar navigation shows ten pages and hides the rest behind "View N more", and it
pushes the job form's Run button below the fold at 1400x900. So ``st.navigation`` is hidden
and every page is one click away in a bar of grouped links above the page, leaving the
sidebar to the job selector, the job form and the job panel.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import streamlit as st

PAGES_DIR = Path(__file__).resolve().parent.parent / "app_pages"


@dataclass(frozen=True)
class PageEntry:
    """One page: its script in ``app/app_pages``, title, material icon and URL path."""

    script: str
    title: str
    icon: str
    url_path: str


#: Section -> pages, in the order of the bar. The first page is the default (root URL).
SECTIONS: dict[str, tuple[PageEntry, ...]] = {
    "Performance": (
        PageEntry("sweep.py", "Size sweep", ":material/show_chart:", ""),
        PageEntry("bound_roofline.py", "Bound and roofline", ":material/speed:", "bound"),
        PageEntry("memory.py", "Memory and fusion", ":material/memory_alt:", "memory"),
        PageEntry("stability.py", "Stability", ":material/bar_chart:", "stability"),
    ),
    "Kernels": (
        PageEntry("kernels.py", "Kernels", ":material/view_list:", "kernels"),
        PageEntry("one_kernel.py", "One kernel", ":material/center_focus_strong:", "one-kernel"),
        PageEntry("compare.py", "Compare jobs", ":material/compare_arrows:", "compare"),
    ),
    "GPU and tools": (
        PageEntry("cache_clock.py", "Cache and clock", ":material/tune:", "cache-clock"),
        PageEntry("clocks_thermal.py", "Clocks and thermal", ":material/thermostat:", "clocks"),
        PageEntry("backends.py", "CUPTI vs Nsight Compute", ":material/balance:", "backends"),
    ),
    "Data": (
        PageEntry("results.py", "Results tables", ":material/table:", "results"),
        PageEntry("files.py", "Files", ":material/folder:", "files"),
        PageEntry("history.py", "History", ":material/history:", "history"),
        PageEntry("import_files.py", "Import", ":material/upload_file:", "import"),
        PageEntry("environment.py", "Environment", ":material/memory:", "environment"),
    ),
}


def pages() -> dict[str, list[st.Page]]:
    """``st.Page`` objects per section, for ``st.navigation`` (the first one is the default)."""
    out: dict[str, list[st.Page]] = {}
    for section, entries in SECTIONS.items():
        out[section] = [
            st.Page(PAGES_DIR / e.script, title=e.title, icon=e.icon, default=not e.url_path,
                    **({"url_path": e.url_path} if e.url_path else {}))
            for e in entries]
    return out


def render_bar(by_section: dict[str, list[st.Page]]) -> None:
    """The link bar: one row of links per section, labelled, all visible at 1400 px wide."""
    with st.container(key="nav-bar", gap=None):
        for section, section_pages in by_section.items():
            with st.container(horizontal=True, gap="small", vertical_alignment="center",
                              key=f"nav-{section.split()[0].lower()}"):
                st.caption(f"**{section}**", width=110)
                for page in section_pages:
                    st.page_link(page)
