"""Page pieces shared by the analysis views (stability, bound, memory, clocks, kernels, compare,
backends): the selected bundle, chart + table + CSV + HTML download, "how to read this", and the
"this job has no X" message."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NoReturn

import plotly.graph_objects as go
import pandas as pd
import streamlit as st

from profiling_worker.bundle.loader import Bundle
from app.core.figures import theme
from app.core.metrics import MissingData, no_values_text, shown_name
from app.ui import cached, job_status, panels, state
from app.core.markdown import esc


def selected_bundle() -> Bundle:
    """The selected job's bundle with its caption and error box; stops the page without one."""
    bundle = cached.bundle_for(state.selected_job_id())
    if bundle is None:
        panels.no_job_selected()
        panels.stop_page()
    panels.bundle_caption(bundle)
    panels.render_bundle_error(bundle)
    return bundle


def no_values(bundle: Bundle, metric: str, others: list[str] | None = None,
              control: str = "") -> NoReturn:
    """Say that the job has no ``metric`` values (its status; the ``others`` it has values of,
    and the page's ``control`` that picks them) and stop the page: a queued, running,
    cancelled or failed job draws no control that would act on nothing."""
    rest = [m for m in others or [] if m != metric]
    # the metric in a reader's words, and when a queued or running job's values come
    st.info(esc(no_values_text(shown_name(bundle, metric), job_status.shown_status(bundle),
                                error=bundle.error))
            + (f" Its other metrics ({esc(', '.join(rest))}) are under '{esc(control)}' above."
               if rest and control else ""))
    panels.stop_page()


def how_to_read(text: str, expanded: bool = False) -> None:
    """A short explanation of the view, folded by default."""
    with st.expander("How to read this", expanded=expanded, icon=":material/help:"):
        st.markdown(text)


def header(title: str, how: str) -> None:
    """The page's title with "How to read this" beside it, a popover holding ``how``
    (markdown): a fold of its own over the chart took a row, 56 px, which left the Stability
    chart's upper half below the fold at 1000x700 (issue 37)."""
    with st.container(horizontal=True, vertical_alignment="center", gap="medium"):
        st.header(title, width="content")
        with st.popover("How to read this", icon=":material/help:"):
            st.markdown(how)


def html_bytes(fig: go.Figure) -> bytes:
    """A self-contained interactive HTML file of the figure (plotly.js embedded, offline)."""
    page: str = theme.for_export(fig).to_html(include_plotlyjs=True, full_html=True)
    return page.encode("utf-8")


def figure_panel(fig: go.Figure, frame: pd.DataFrame, key: str, filename: str,
                 note: str | None = None, under: Callable[[], None] | None = None,
                 lead: Sequence[str] | None = None, parameters: Sequence[str] = ()) -> None:
    """Chart, its table and CSV (:func:`panels.chart_with_table`, ``note`` the caption under
    the chart, ``under`` what is drawn under it, over the table; ``lead`` and ``parameters``:
    the page's own columns first, as there), plus an HTML download.

    The image export is the chart's own modebar camera button; ``filename`` names the CSV and,
    with ``-chart.html``, the HTML file (a page's other HTML download, such as Compare's report,
    keeps the bare ``.html`` name). The HTML is built only when the button is clicked.
    """
    panels.chart_with_table(fig, frame, key=key, filename=filename, note=note, under=under,
                            lead=lead, parameters=parameters)
    st.download_button("Download chart (HTML)", data=lambda: html_bytes(fig),
                       file_name=filename.rsplit(".", 1)[0] + "-chart.html", mime="text/html",
                       key=state.key(key, "html"), on_click="ignore", icon=":material/download:")


def missing(exc: MissingData, stop: bool = True) -> None:
    """Say what the job lacks and how to get it; the page then stops (unless ``stop=False``)."""
    st.info(f"{esc(exc)}\n\n**To get it:** {esc(exc.hint)}" if exc.hint else esc(exc),
            icon=":material/info:")
    if stop:
        panels.stop_page()
