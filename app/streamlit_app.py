"""Entry point: ``streamlit run app/streamlit_app.py``.

Page config, the shared sidebar (job selector, job builder, job panel), the provenance banner
(:mod:`app.core.provenance`) and
``st.navigation`` over ``app/app_pages/``. The body is in :func:`run` so that tests and a
packaged launcher can import this module without drawing anything.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository root importable
    _root = str(Path(__file__).resolve().parent.parent)
    if _root not in sys.path:
        sys.path.insert(0, _root)

import streamlit as st  # noqa: E402

from app.streamlit_patches import server_guard, styler_memo  # noqa: E402

server_guard.install()  # a plain `streamlit run`: from the first script run on (cli.py: before)
styler_memo.install()  # a prepared table's Styler marshalled once per place (issue 40)

ICON = Path(__file__).resolve().parent / "assets" / "icon.png"  # local: no font service
#: Streamlit pads the page 6rem from the top for its header, whose only content here is the
#: main menu at the far right: that left an empty band of about 90 px above the link bar. The
#: header is see-through and lets clicks through to the link bar below it, except on its own
#: buttons (main menu, sidebar toggle), and the page starts 1.5rem from the top.
#: A page's headers (st.header: its title, a section's) keep 0.25rem above and below instead
#: of Streamlit's 1rem+: over the title that was about 30 px of the header's 390 at 1000x700,
#: which left the first chart below the fold (issue 37).
#: A style-only st.html takes no room on the page (Streamlit sends it to the event container).
TOP_CSS = ("<style>[data-testid='stMainBlockContainer']{padding-top:1.5rem}"
           "[data-testid='stMain'] [data-testid='stHeading'] h2"
           "{padding-top:0.25rem;padding-bottom:0.25rem}"
           "[data-testid='stHeader']{background:transparent}"
           "[data-testid='stHeader'],[data-testid='stHeader'] *{pointer-events:none!important}"
           "[data-testid='stHeader'] :is(button,a),[data-testid='stHeader'] :is(button,a) *"
           "{pointer-events:auto!important}</style>")
#: Issue 37, at 1000x700: a segmented control scrolled its last options out of its column
#: (Quantity hid "Analytic GB/s", Time unit "ms"), a widget label was cut to "L.." and metric
#: labels to "Dur…". In the page (not the sidebar) the options wrap onto a second row and
#: labels wrap, so every option and word is shown at any width. Below 1200 px the page's side
#: padding (5rem) shrinks, leaving the controls and charts about 100 px more; the right side
#: keeps room for the main menu; the page's elements lie 0.6rem apart.
_HOLDS_CONTROL = (">[data-testid='stVerticalBlock']>[data-testid='stElementContainer']>"
                  ":is([data-testid='stButtonGroup'],[data-testid='stCheckbox'],"
                  "[data-testid='stMetric'])")
NARROW_CSS = ("<style>[data-testid='stMain'] [data-testid='stButtonGroup']>div"
              "{flex-wrap:wrap;overflow:visible}"
              "[data-testid='stMain'] :is([data-testid='stWidgetLabel'],"
              "[data-testid='stMetricLabel']) :is("
              "[data-testid='stMarkdownContainer'],p){white-space:normal;overflow:visible;"
              "text-overflow:clip}"
              # a row of columns holding such controls wraps whole columns first, each as
              # wide as its control on one line, so options and words stay on one row
              "[data-testid='stMain'] [data-testid='stHorizontalBlock']:has(>"
              f"[data-testid='stColumn']{_HOLDS_CONTROL})"
              "{flex-wrap:wrap}"
              f"[data-testid='stMain'] [data-testid='stColumn']:has({_HOLDS_CONTROL})"
              "{min-width:max-content}"
              "@media (max-width:1200px){[data-testid='stMainBlockContainer']"
              "{padding-left:1.5rem;padding-right:3rem}"
              # 0.6rem between the page's elements, not 1rem: the 8 over a contended cpu job's
              # Stability chart took its upper half below the fold at 1000x700 (issue 37)
              "[data-testid='stMain'] [data-testid='stVerticalBlock']{gap:0.6rem}}</style>")

# a chosen option's pill in a sidebar multiselect
_TAG = "[data-testid='stSidebar'] [data-testid='stMultiSelectTagsContainer'] [data-tag]"
#: A sidebar box's list opened as wide as the box, 240 px at 1000x700: the Job box's entries
#: ("h200-cupti-gate-fp32 · gate_matmul · cupti · done · bundled") were cut before their
#: status (session 22's fresh user). An open sidebar list is 36rem wide, over the page, within
#: the window; the box stays as it is.
#: A chosen kernel's pill ("matmul · Matrix multiply a @ b (fp32, fp16, bf16)") was cut to
#: "matmul · Matrix mu…" at 1000 px (issue 37): its words wrap within the box, which grows;
#: below 1200 px the sidebar's elements lie 0.5rem apart, which keeps Run in the window.
#: The closed Job box cut its entry before the status ("cpu-contended · matmul · cpu · d…") and
#: the longest ids before their end, 215 px of "h200-cupti-elementwise-cache-none" in a field
#: of 190 (issue 37): the box's label says the status (job_selector.box_label) and wraps; the
#: sidebar's side padding is 0.25rem, not 20 px, and the field's right padding 0.125rem, which
#: leaves the id 228 px at any window size (Chromium on Linux, its scrollbar gutter 10 px a
#: side; more where scrollbars overlay): every bundled id and run id of the form's kernels
#: is whole, batched_matmul's (240 px) cut in its middle (job_selector.shown_id;
#: tests/e2e/test_nothing_cut.py).
_JOB_BOX = ".st-key-sidebar-job"  # app.ui.state.SELECTED_JOB
SIDEBAR_LIST_CSS = ("<style>[data-testid='stSidebarContent']"
                    "{padding-left:0.25rem!important;padding-right:0.25rem!important}"
                    f"{_JOB_BOX} input{{padding-right:0.125rem!important}}"
                    f"{_JOB_BOX} [data-testid='stWidgetLabel'] :is("
                    "[data-testid='stMarkdownContainer'],p){white-space:normal;overflow:visible;"
                    "text-overflow:clip}"
                    "body:has([data-testid='stSidebar'] [role='combobox']"
                    "[aria-expanded='true']) [data-testid='stSelectboxVirtualDropdown']"
                    "{width:min(36rem,calc(100vw - 3rem))!important}"
                    # the box's text field beside the last pill, not on a line of its own
                    f"{_TAG}{{max-width:calc(100% - 2.5rem)!important;height:auto;"
                    "min-height:1.75rem}[data-testid='stSidebar'] "
                    "[data-testid='stMultiSelectTagsContainer'] input"
                    "{min-width:2rem!important;width:2rem!important;flex:1 1 2rem}"
                    f"{_TAG}>span{{white-space:normal;overflow:visible;text-overflow:clip;"
                    "overflow-wrap:anywhere}@media (max-width:1200px){"
                    "[data-testid='stSidebarUserContent'] [data-testid='stVerticalBlock']"
                    "{gap:0.5rem}}</style>")

#: The metric pickers (Size sweep, Stability, Compare: metric_roles.picker) cut their long
#: options at 1400 px ("SM throughput [%] (sm__throughput.avg.pct_of_peak_sustained…",
#: session 23's fresh user): their open list is as wide as its longest option up to 40rem,
#: within the window right of the sidebar; the box stays as it is.
METRIC_PICKERS = ("sweep-metric", "stability-metric", "compare-metric")
METRIC_LIST_CSS = ("<style>body:has(:is("
                   + ",".join(f".st-key-{key}" for key in METRIC_PICKERS)
                   + ") [role='combobox'][aria-expanded='true']) "
                   "[data-testid='stSelectboxVirtualDropdown']"
                   "{width:min(40rem,calc(100vw - 22rem))!important}</style>")


def run() -> None:
    """Draw the app frame and the selected page; the prefetch of :mod:`app.ui.prefetch` waits
    while a run is in progress."""
    from app.ui import prefetch

    with prefetch.script_run():
        _run()


def _run() -> None:
    from app.ui import prewarm

    prewarm.wait_for_imports()  # the ones kernel-dashboard began with the server, if any
    from app.core.markdown import code, esc
    from app.core.provenance import banner, is_imported
    from app.services import worker_client
    from app.sidebar.job_builder import render_job_builder
    from app.sidebar.job_panel import render_job_panel
    from app.sidebar.run_on import render_run_on_box
    from app.sidebar.job_selector import (default_job_note, render_job_selector, resolve_job,
                                          unknown_job_warning)
    from app.ui import cached, job_status, navigation, panels, prefetch, state

    st.set_page_config(page_title="Kernel profiler", page_icon=str(ICON), layout="wide")
    # the plotly chunk: loaded by app/streamlit_patches/page_shell.py
    st.html(TOP_CSS + NARROW_CSS + SIDEBAR_LIST_CSS + METRIC_LIST_CSS)
    report = cached.env_report()
    gpu_here = worker_client.gpu_backend_available(report)
    by_section = navigation.pages()
    navigation.quiet_unknown_path(by_section)  # the banner below says it, not Streamlit's modal
    page = st.navigation(by_section, position="hidden")
    bundles, _problems = cached.list_bundles()
    shown = resolve_job(bundles, gpu_here)
    job_status.forget_shown()  # what the page names this run, for the job panel
    top = st.container()  # the link bar and banner, filled after the page: see below
    try:
        page.run()  # first, so the page's chart is sent before the bar's and sidebar's widgets
    except panels.PageStopped:  # the page ended early ("this job has no X")
        pass
    finally:  # also after a page's error, which then shows
        with top:
            navigation.render_bar(by_section)
            if (missing := navigation.unknown_path(
                    st.context.url, st.session_state.get(state.UNKNOWN_PAGE))) is not None:
                st.warning(f"There is no page {code(missing)}: this is {esc(page.title)}. "
                           "Pick a page from the bar above.", icon=":material/link_off:")
            if not unknown_job_warning():  # it says which job is shown: no second note
                default_job_note()
            manifest = next((b.manifest for b in bundles if b.job_id == shown), None)
            text = banner(manifest, gpu_here)
            if text and manifest and is_imported(manifest):  # what this job's files are
                st.info(text, icon=":material/info:")
            elif text:  # the same on every page: one line, not a box over each chart
                st.caption(f":material/info: {text}")
        with st.sidebar:
            render_job_selector(bundles)
            st.markdown("**New job**")  # not a subheader: keeps Run and progress in sight
            render_job_builder(worker_client.best_backend(report))
            render_run_on_box()
            render_job_panel(cached.executors())
        # the pages a click most likely opens next, while this one is read (issue 40)
        prefetch.start(next((b for b in bundles if b.job_id == shown), None))


if __name__ == "__main__":
    run()
