"""Text from files shown as text: escaping for Streamlit's Markdown.

Names and messages that come from bundles (GPU names, annotation and kernel names, labels, error
messages of imported or user-made files) are data. ``st.markdown``, ``st.caption``, ``st.info``
and the other text elements render GitHub-flavoured Markdown (links, images, emphasis, ``$``
math, ``:colour[...]`` directives), so such strings are passed through :func:`esc` (inline text)
or :func:`code` (an inline code span) before they are put into a Markdown string.

Plotly renders a subset of HTML in text (``<a href>`` links, ``<b>``, ``<br>``) in trace names,
tick labels and hover text; :func:`plotly_data_as_text` escapes the strings of a figure's
traces (plotly shows ``&lt;`` as ``<``), and :func:`html_text` one string, e.g. for a title.
"""

from __future__ import annotations

import html
import re
from typing import Any

# The characters that start Markdown constructs: links and images ``[ ] ( ) !``, autolinks
# ``< > :`` (``http://``) and ``@`` (e-mail), emphasis ``* _ ~``, code, headings, tables, ``$``
# math and Streamlit's ``:colour[...]`` / ``:emoji:`` directives. CommonMark lets a backslash
# escape any ASCII punctuation; the rest (``. , - ' "`` ...) stays as typed for readable source.
_SPECIAL = re.compile(r"([\\`*_~\[\]()<>!#$:|@{}])")
# GFM autolinks (``http://``, ``www.``, ``a@b.c``) are found in the text *after* escapes are
# read (mdast-util-gfm-autolink-literal), so an escape cannot stop them: an invisible word
# joiner (U+2060) inside the pattern does.
_AUTOLINK = re.compile(r"(?i)(https?|ftp|www)(?=\\?[:.])|(?<!\\)(?=\\?@)")
WORD_JOINER = "\u2060"
_BACKTICKS = re.compile(r"`+")


def esc(value: object) -> str:
    r"""``value`` as a string that Markdown shows literally, on one line.

    Example: ``esc("![x](http://e/i.png)")`` -> ``\!\[x\]\(http`` U+2060 ``\://e/i.png\)``
    (a word joiner after ``http``). Line breaks become spaces (a newline could start a
    heading or a list).
    """
    text = " ".join(str(value).splitlines())
    return _AUTOLINK.sub(lambda m: (m.group(1) or "") + WORD_JOINER,
                         _SPECIAL.sub(r"\\\1", text))


def code(value: object) -> str:
    """``value`` as an inline code span (nothing inside is rendered), fenced with more backticks
    than any run of backticks in it (CommonMark 6.1)."""
    text = " ".join(str(value).splitlines())
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


#: Trace attributes that hold data strings (names, categories, labels, hover text).
_TRACE_TEXT = ("name", "legendgroup", "text", "hovertext", "x", "y", "labels", "customdata")


def html_text(value: object) -> str:
    """``value`` for plotly's text: ``& < >`` as entities, so no tag is rendered."""
    return html.escape(str(value), quote=False)


def _escaped(value: Any) -> Any:
    if isinstance(value, str):
        return html_text(value)
    if isinstance(value, (list, tuple)) or getattr(value, "dtype", None) == object:
        return [_escaped(v) for v in value]
    return value  # numbers, numeric arrays, None


def _names_in_template(trace: Any) -> None:
    """Escape the trace's own name, legend group and ``meta`` strings (an annotation) where a
    figure builder wrote them into its ``hovertemplate``."""
    template = trace.hovertemplate if "hovertemplate" in trace else None
    if not isinstance(template, str):
        return
    meta = trace.meta if isinstance(trace.meta, dict) else {}
    for raw in {trace.name, getattr(trace, "legendgroup", None), *meta.values()}:
        if isinstance(raw, str) and raw and raw != html_text(raw):
            template = template.replace(raw, html_text(raw))
    trace.hovertemplate = template


def plotly_data_as_text(fig: Any) -> None:
    """Escape, in place, every string in the data attributes (:data:`_TRACE_TEXT`) of the
    figure's traces, in the axes' category orders, and where the trace's name or ``meta``
    strings were written into its ``hovertemplate``; other template text and titles are the
    app's own (pass names in a title through :func:`html_text`)."""
    for trace in fig.data:
        _names_in_template(trace)
        for attr in _TRACE_TEXT:
            value = getattr(trace, attr, None) if attr in trace else None
            if value is not None:
                trace[attr] = _escaped(value)

    def axis(ax: Any) -> None:  # category orders name the same (now escaped) values
        if ax.categoryarray is not None:
            ax.categoryarray = _escaped(ax.categoryarray)

    fig.for_each_xaxis(axis)
    fig.for_each_yaxis(axis)
