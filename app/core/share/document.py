"""One self-contained HTML file: sections of figures, tables and notes, opening offline.

plotly.js is inlined once, in the head (``plotly.offline.get_plotlyjs()``, the library that the
installed plotly draws with); every figure is a ``<div>`` plus a call of ``Plotly.newPlot``
(``Figure.to_html(include_plotlyjs=False, include_mathjax=False)``). Nothing is fetched: no CDN,
no web font, no MathJax, no image; the page's styles are inline. Text that comes from bundles
(names, messages) is escaped with :func:`html.escape`, never read as markup.

Tables show each number as the dashboard's tables do (:func:`app.core.numbers.column_display`:
thousands separators; one number of decimals per column, enough for four significant digits of
its median value, and for a mean and its CI95 bounds two of the narrowest interval's width; a
column of rows in several units each unit's own; an unbounded upper bound "unbounded"), scroll
sideways when wider than the page, and keep the
exact value in the cell's ``data-value`` attribute (``repr`` of the float), so a reader or a
test can check the displayed number against the bundle.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.offline

from app.core import numbers
from app.core.markdown import WORD_JOINER
from app.core.figures import common, theme

#: Rows a table shows at most; the rest stay in the bundle's CSVs (a launches table of a sweep
#: holds thousands and would make the file tens of MB).
MAX_ROWS = 500
#: Longer tables sit in a box of about this many rows that scrolls (header kept in view).
SCROLL_ROWS = 15

_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2em auto;
max-width:1200px;padding:0 1em;color:#1f2328}
h1{font-size:1.6em}h2{font-size:1.3em;border-bottom:1px solid #d0d7de;padding-bottom:.2em;
margin-top:2em}h3{font-size:1.05em}
table{border-collapse:collapse;font-size:.85em}.wide{overflow-x:auto;max-width:100%;
margin:.5em 0 1em;scrollbar-color:#8c959f #f6f8fa}.more{box-shadow:inset -10px 0 8px -8px #8c959f}
th,td{border:1px solid #d0d7de;padding:.25em .5em;text-align:left;vertical-align:top;
white-space:nowrap;max-width:32em;overflow:hidden;text-overflow:ellipsis}
th{background:#f6f8fa;position:sticky;top:0}.scroll{max-height:26em;overflow:auto;
margin:.5em 0 1em;scrollbar-color:#8c959f
#f6f8fa}td.num{text-align:right;font-variant-numeric:tabular-nums}
.note{border-left:4px solid #0969da;background:#ddf4ff;padding:.5em .8em;margin:.6em 0}
.note.warning{border-color:#bf8700;background:#fff8c5}.note.error{border-color:#cf222e;
background:#ffebe9}.caption{color:#59636e;font-size:.9em}pre{background:#f6f8fa;padding:.6em;
overflow-x:auto;font-size:.8em}.verdict{font-size:1.2em;font-weight:600}
"""


#: Marks each table box wider than the page (a shadow at its right edge) and says above it that
#: it scrolls: overlay scrollbars show nothing until scrolled, so the table looked cut off.
WIDE_SCRIPT = """
document.querySelectorAll('.wide,.scroll').forEach(function(b){
if(b.scrollWidth>b.clientWidth+1){b.classList.add('more');b.insertAdjacentHTML('beforebegin',
'<p class="caption scroll-hint">Wide table: scroll it sideways for the columns past the right '+
'edge.</p>');}});
"""


@dataclass
class Section:
    """A titled part of the report; ``parts`` are HTML fragments made by this module."""

    title: str
    parts: list[str] = field(default_factory=list)

    def add(self, *fragments: str) -> Section:
        """Append fragments; returns the section (chaining)."""
        self.parts.extend(fragments)
        return self


def text(value: object) -> str:
    """``value`` as escaped HTML text."""
    return html.escape(str(value), quote=True)


_MD_ESCAPE = re.compile(r"\\([\\`*_~\[\]()<>!#$:|@{}])")


def from_markdown(value: str) -> str:
    """Plain text of a sentence the pages write as Markdown (:mod:`app.core.markdown`): its
    backslash escapes and the word joiners that stop autolinks are removed."""
    return _MD_ESCAPE.sub(r"\1", value.replace(WORD_JOINER, ""))


def paragraph(value: object, css: str = "caption") -> str:
    """A paragraph of plain text (escaped)."""
    return f'<p class="{css}">{text(value)}</p>'


def note(value: object, level: str = "info") -> str:
    """A boxed note; ``level`` is ``info``, ``warning`` or ``error`` (the page's st.info,
    st.warning, st.error)."""
    return f'<div class="note {text(level)}">{text(value)}</div>'


#: Leads a view's hint in the report: the hints name the dashboard's controls ("Pick another
#: metric"), which a reader of this static file cannot use.
DASHBOARD_OFFERS = "What the dashboard offers: "


def missing(message: object, hint: str | None) -> str:
    """The note of a view the job cannot feed: ``message``, then ``hint`` worded as what the
    dashboard offers (:data:`DASHBOARD_OFFERS`), not as a step to take in this file."""
    return note(f"{message}" + (f" {DASHBOARD_OFFERS}{hint}" if hint else ""))


def preformatted(value: str) -> str:
    """Text kept as written (a spec's JSON, a Markdown summary)."""
    return f"<pre>{text(value)}</pre>"


def _cell(value: Any, fmt: str | None, shown: Any = None) -> str:
    """A cell: ``value`` written in ``fmt``, or as ``shown`` where the column is shown as text
    (:func:`app.core.numbers.column_display`); a number keeps its exact value."""
    if isinstance(value, bool) or value is None:
        return f"<td>{text('—' if value is None else value)}</td>"
    if isinstance(value, (int, float)):
        v = float(value)
        if math.isnan(v):
            return '<td class="num" data-value="nan">—</td>'
        if shown is None:
            shown = numbers.fmt_metric(v)  # a text column's number: a metric of a report
            if fmt is not None and math.isfinite(v):
                shown = f"{int(value):,d}" if fmt == "%,d" else f"{v:{fmt[1:]}}"
        exact = repr(int(value)) if fmt == "%,d" else repr(v)
        return f'<td class="num" data-value="{exact}" title="{exact}">{text(shown)}</td>'
    return f'<td title="{text(value)}">{text(value)}</td>'


def table(frame: pd.DataFrame, caption: str = "", max_rows: int = MAX_ROWS) -> str:
    """An HTML table of ``frame`` (no index), numbers formatted per column as the dashboard's
    tables, exact values in ``data-value``; at most ``max_rows`` rows, with a caption saying how
    many were left out. The table sits in a box that scrolls sideways when it is wider than the
    page (:data:`WIDE_SCRIPT` marks it and says so)."""
    shown = frame.head(max_rows)
    display = numbers.column_display(frame)  # the pages' decision (a value and its CI95
    # bounds alike, rows in several units each in its unit's format)
    formats = {c: display.formats.get(c) if isinstance(c, str)
               else numbers.printf_format(frame[c]) for c in frame.columns}
    as_text = {c: t.head(max_rows).tolist() for c, t in display.text(frame).items()}
    head = "".join(f"<th>{text(c)}</th>" for c in frame.columns)
    rows = []
    for i, values in enumerate(shown.itertuples(index=False, name=None)):
        cells = (_cell(_plain(v), formats[c], as_text[c][i] if c in as_text else None)
                 for c, v in zip(frame.columns, values))
        rows.append("<tr>" + "".join(cells) + "</tr>")
    left = len(frame) - len(shown)
    cap = caption + (f" (first {len(shown):,} of {len(frame):,} rows; the bundle's CSV has all)"
                     if left else "")
    body = f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    # a box that scrolls sideways (and, for a long table, down: as the pages' tables do)
    body = f'<div class="{"scroll" if len(shown) > SCROLL_ROWS else "wide"}">{body}</div>'
    return (paragraph(cap) if cap else "") + body


def _plain(value: Any) -> Any:
    """numpy scalars -> Python; pandas' missing markers (NA, NaT) -> None; NaN stays a float."""
    if isinstance(value, np.generic):
        value = value.item()
    return None if value is None or value is pd.NA or value is pd.NaT else value


def figure(fig: go.Figure, div_id: str, colors: dict[str, str] | None = None) -> str:
    """The figure as a ``<div>`` drawn by the inlined plotly.js: the export look
    (:func:`app.core.figures.theme.for_export`), annotations in the job's colours as on the
    pages, no plotly logo, no MathJax; under it, as on the pages, the note naming the points
    whose CI95 runs to the chart's edge (:func:`app.core.figures.common.open_end_note`)."""
    out = theme.for_export(theme.color_annotations(go.Figure(fig), colors or {}))
    note = common.open_end_note(fig)
    return str(out.to_html(full_html=False, include_plotlyjs=False, include_mathjax=False,
                           div_id=div_id, default_width="100%",
                           config={"displaylogo": False, "responsive": True})) \
        + (paragraph(note) if note else "")


def page(title: str, lead: Iterable[str], sections: Sequence[Section]) -> str:
    """The whole document: head with the styles and plotly.js (once), the title, the ``lead``
    fragments, a contents list and the sections."""
    contents = "".join(f'<li><a href="#s{i}">{text(s.title)}</a></li>'
                       for i, s in enumerate(sections))
    body = "".join(f'<section id="s{i}"><h2>{text(s.title)}</h2>{"".join(s.parts)}</section>'
                   for i, s in enumerate(sections))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{text(title)}</title><style>{_STYLE}</style>"
            f'<script type="text/javascript">{plotly.offline.get_plotlyjs()}</script></head>'
            f"<body><h1>{text(title)}</h1>{''.join(lead)}<nav><ol>{contents}</ol></nav>"
            f"{body}<script>{WIDE_SCRIPT}</script></body></html>\n")
