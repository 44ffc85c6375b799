"""The page list and the grouped link bar at the top of every page.

Streamlit's sidebar navigation shows ten pages and hides the rest behind "View N more", and it
pushes the job form's Run button below the fold at 1400x900. So ``st.navigation`` is hidden
and every page is one click away in a bar of grouped links above the page, leaving the
sidebar to the job selector, the job form and the job panel. The page table is
:data:`app.core.pages.SECTIONS` (beside the analyses the pages show, which the HTML report and
the agent door read too).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlsplit

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from app.core.pages import SECTIONS, page as page_entry
from app.ui import state

PAGES_DIR = Path(__file__).resolve().parent.parent / "app_pages"


def pages() -> dict[str, list[st.Page]]:
    """``st.Page`` objects per section, for ``st.navigation`` (the first one is the default)."""
    out: dict[str, list[st.Page]] = {}
    for section, entries in SECTIONS.items():
        out[section] = [
            st.Page(PAGES_DIR / e.script, title=e.title, icon=e.icon, default=not e.url_path,
                    url_path=e.url_path or None)
            for e in entries]
    return out


#: The rows of a section's wrapped links lie as close as sections do at full width (issue 37:
#: the bar took about 250 of 700 px at 1000x700). Below 1200 px each link's side padding is
#: halved (0.25rem): at 1000 px the Performance row's four links needed 523 px of the 502 px
#: beside its label, so "Stability" wrapped under "Size sweep" (a fresh user's find); 32 px
#: less, every section keeps one row at 1000x700 (tests/e2e/test_layout.py). Below 1000 px,
#: where links wrap again, sections lie 0.5rem apart so each one reads as a block beside its
#: label; from 1000 px on no section wraps, and that gap took 24 of the bar's 113 px (the
#: page's 0.6rem between elements below 1200 px, app/streamlit_app.py, is not the bar's).
BAR_CSS = ("<style>.st-key-nav-bar [data-testid='stHorizontalBlock'] "
           "[data-testid='stHorizontalBlock']{row-gap:0!important}"
           ".st-key-nav-bar{row-gap:0!important}"
           "@media (max-width:999px){.st-key-nav-bar{row-gap:0.5rem!important}}"
           "@media (max-width:1200px){.st-key-nav-bar [data-testid='stPageLink-NavLink']"
           "{padding-left:0.25rem!important;padding-right:0.25rem!important}}</style>")


def render_bar(by_section: dict[str, list[st.Page]]) -> None:
    """The link bar: one row of links per section, labelled, all visible at 1400 px wide.

    A narrower window wraps a section's links within a box of their own right of the label, so
    a wrapped link stays beside its own label, not under it (at 1000 px "Memory and fusion" sat
    beside the "Kernels" label, issue 37).
    """
    st.html(BAR_CSS)  # style only: takes no room in the page
    with st.container(key=state.key("nav", "bar"), gap=None):
        for section, section_pages in by_section.items():
            with st.container(horizontal=True, gap="small", vertical_alignment="top",
                              key=state.key("nav", section.split()[0].lower())):
                st.caption(f"**{section}**", width=110)
                with st.container(horizontal=True, gap="xsmall", vertical_alignment="center"):
                    for page in section_pages:
                        st.page_link(page)


def link(script: str, label: str) -> None:
    """A link to the page of ``script`` (a row of :data:`app.core.pages.SECTIONS`)."""
    entry = page_entry(script)
    st.page_link(f"{PAGES_DIR.name}/{entry.script}", label=label, icon=entry.icon)


def quiet_unknown_path(by_section: dict[str, list[st.Page]]) -> None:
    """Call before ``st.navigation``: a URL path that names no page of ``by_section`` is dropped
    from this run's intent, so Streamlit runs the default page as for ``/`` and the app's
    banner (:func:`unknown_path`) is the only word on it. Streamlit 1.67's ``st.navigation``
    sends its own "Page not found" modal whenever the intended page name matches no page
    (``streamlit/commands/navigation.py``, ``send_page_not_found``), with no option to leave
    it out; the modal was drawn over the banner (a fresh user's find). A run asked for by page
    hash (a widget's rerun, a page link) is left as it is."""
    manager = getattr(get_script_run_ctx(), "pages_manager", None)
    if manager is None or getattr(manager, "intended_page_script_hash", None):
        return
    asked = getattr(manager, "intended_page_name", None)
    known = {p.url_path for entries in by_section.values() for p in entries}
    if asked and asked not in known:
        manager.set_script_intent("", "")
        st.session_state[state.UNKNOWN_PAGE] = unquote(asked)  # as typed: see unknown_path


def unknown_path(url: str | None, asked: str | None = None) -> str | None:
    """The page path the browser's ``url`` names when it names no page of the bar
    (``/nosuchpage``), else None. Streamlit then shows the default page without a word, so a
    mistyped link read as the Size sweep. ``asked``: the path as the browser asked for it
    (:func:`quiet_unknown_path` keeps it), named in place of ``url``'s last segment:
    ``st.context.url`` cuts a page's path off the end of an unknown one, so ``/import_files``
    read ``import_`` (Streamlit 1.67 ``context_util.maybe_trim_page_path``: it ends with
    ``files``). A nested path reaches the app as one segment, its slashes escaped
    (app/streamlit_patches/page_shell.py, ``nested_target``): it is named unescaped
    (``compare/extra``)."""
    if not url:
        return None
    last = unquote(urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1])
    known = {e.url_path for entries in SECTIONS.values() for e in entries}
    return None if last in known or not last else asked or last
