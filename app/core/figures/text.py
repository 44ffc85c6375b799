"""Names from files shown as text in plotly figures: the one escaping point of every figure.

Plotly renders a subset of HTML (``<a href>`` links, ``<b>``, ``<br>``, ``<span style>``,
``<img>`` is dropped but parsed) in titles, axis titles, annotations, trace names, tick labels
and hover text. Names from bundles (annotation, kernel, GPU, parameter and collector names) are
data, so :func:`figure_as_text` escapes ``& < >`` as entities (plotly shows ``&lt;`` as ``<``)
in all of them; :func:`app.core.figures.theme.apply_layout`, which every figure builder calls
last, applies it once. The app's own markup lives only in ``hovertemplate`` strings, where only
the names the builder wrote into them (the trace's name, legend group and ``meta``) are escaped.
"""

from __future__ import annotations

import html
from typing import Any

import numpy as np

from app.core.markdown import visible

#: Trace attributes that hold data strings (names, categories, labels, hover text).
_TRACE_TEXT = ("name", "legendgroup", "text", "hovertext", "x", "y", "labels", "customdata")


def html_text(value: object) -> str:
    """``value`` for plotly's text: ``& < >`` as entities, so no tag is rendered, and
    bidirectional controls shown as ``⟨U+202E⟩`` (:func:`app.core.markdown.visible`)."""
    return html.escape(visible(value), quote=False)


def _escaped(value: Any) -> Any:
    """Strings escaped, in a value, list, dict or object array (shape kept); numbers untouched."""
    if isinstance(value, str):
        return html_text(value)
    if isinstance(value, dict):
        return {k: _escaped(v) for k, v in value.items()}
    if getattr(value, "dtype", None) == object:  # keep the array's shape (2-D customdata)
        return _ESCAPE_EACH(value)
    if isinstance(value, (list, tuple)):
        return [_escaped(v) for v in value]
    return value  # numbers, numeric arrays, None


_ESCAPE_EACH = np.frompyfunc(lambda v: html_text(v) if isinstance(v, str) else v, 1, 1)


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


def _traces_as_text(fig: Any) -> None:
    for trace in fig.data:
        _names_in_template(trace)
        if isinstance(trace.meta, dict):
            trace.meta = _escaped(trace.meta)
        for attr in _TRACE_TEXT:
            value = getattr(trace, attr, None) if attr in trace else None
            if value is not None:
                trace[attr] = _escaped(value)


def _axis_as_text(ax: Any) -> None:
    """Axis title, tick labels and category order (the same, now escaped, values as the data)."""
    if ax.title.text is not None:
        ax.title.text = html_text(ax.title.text)
    for attr in ("categoryarray", "ticktext"):
        if ax[attr] is not None:
            ax[attr] = _escaped(ax[attr])


def figure_as_text(fig: Any) -> Any:
    """Escape, in place, every text of ``fig`` that can hold a name from a file: the strings in
    the traces' data attributes (:data:`_TRACE_TEXT`) and ``meta``, the names written into
    hover templates, the title, legend title, axis titles, tick labels and category orders, and
    annotation texts. Call it once, after the figure is assembled (escaping twice would show
    ``&lt;`` literally). Returns ``fig``."""
    _traces_as_text(fig)
    layout = fig.layout
    if layout.title.text is not None:
        layout.title.text = html_text(layout.title.text)
    if layout.legend.title.text is not None:
        layout.legend.title.text = html_text(layout.legend.title.text)
    fig.for_each_xaxis(_axis_as_text)
    fig.for_each_yaxis(_axis_as_text)
    for note in layout.annotations:
        if note.text is not None:
            note.text = html_text(note.text)
    return fig
