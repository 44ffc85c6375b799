"""The page list and the grouped link bar at the top of every page.

Streamlit's sidebar navigation shows ten pages and hides the rest behind "View N more", and it
pushes the job form's Run button below the fold at 1400x900. So ``st.navigation`` is hidden
and every page is one click away in a bar of grouped links above the page, leaving the
sidebar to the job selector, the job form and the job panel.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import streamlit as st

from app.ui import state

PAGES_DIR = Path(__file__).resolve().parent.parent / "app_pages"


@dataclass(frozen=True)
class PageEntry:
    """One page: its script in ``app/app_pages``, title, material icon and URL path."""

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


def pages() -> dict[str, list[st.Page]]:
    """``st.Page`` objects per section, for ``st.navigation`` (the first one is the default)."""
    out: dict[str, list[st.Page]] = {}
    for section, entries in SECTIONS.items():
        out[section] = [
            st.Page(PAGES_DIR / e.script, title=e.title, icon=e.icon, default=not e.url_path,
                    url_path=e.url_path or None)
            for e in entries]
    return out


def render_bar(by_section: dict[str, list[st.Page]]) -> None:
    """The link bar: one row of links per section, labelled, all visible at 1400 px wide."""
    with st.container(key=state.key("nav", "bar"), gap=None):
        for section, section_pages in by_section.items():
            with st.container(horizontal=True, gap="small", vertical_alignment="center",
                              key=state.key("nav", section.split()[0].lower())):
                st.caption(f"**{section}**", width=110)
                for page in section_pages:
                    st.page_link(page)


def link(script: str, label: str) -> None:
    """A link to the page of ``script`` (a row of the table above)."""
    entry = next(e for entries in SECTIONS.values() for e in entries if e.script == script)
    st.page_link(f"{PAGES_DIR.name}/{entry.script}", label=label, icon=entry.icon)


def unknown_path(url: str | None) -> str | None:
    """The last path segment of the browser's ``url`` when it names no page of the bar
    (``/nosuchpage``), else None. Streamlit then shows the default page without a word, so a
    mistyped link read as the Size sweep."""
    if not url:
        return None
    last = urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1]
    known = {e.url_path for entries in SECTIONS.values() for e in entries}
    return None if last in known or not last else last
