"""Text from files shown as text: escaping for Streamlit's Markdown.

Names and messages that come from bundles (GPU names, annotation and kernel names, labels, error
messages of imported or user-made files) are data. ``st.markdown``, ``st.caption``, ``st.info``
and the other text elements render GitHub-flavoured Markdown (links, images, emphasis, ``$``
math, ``:colour[...]`` directives), so such strings are passed through :func:`esc` (inline text)
or :func:`code` (an inline code span) before they are put into a Markdown string.
"""

from __future__ import annotations

import re

# The characters that start Markdown constructs: links and images ``[ ] ( ) !``, autolinks
# ``< > :`` (``http://``) and ``@`` (e-mail), emphasis ``* _ ~``, code, headings, tables, ``$``
# math and Streamlit's ``:colour[...]`` / ``:emoji:`` directives. CommonMark lets a backslash
# escape any ASCII punctuation; the rest (``. , - ' "`` ...) stays as typed for readable source.
_SPECIAL = re.compile(r"([\\`*_~\[\]()<>!#$:|@{}])")
_WWW = re.compile(r"(?i)\b(www)\.")  # a GFM autolink without a scheme
_BACKTICKS = re.compile(r"`+")


def esc(value: object) -> str:
    """``value`` as a string that Markdown shows literally, on one line.

    Example: ``esc("![x](http://e/i.png)")`` -> ``\\!\\[x\\]\\(http\\://e/i.png\\)``.
    Line breaks become spaces (a newline could start a heading or a list).
    """
    text = " ".join(str(value).splitlines())
    return _WWW.sub(r"\1\\.", _SPECIAL.sub(r"\\\1", text))


def code(value: object) -> str:
    """``value`` as an inline code span (nothing inside is rendered), fenced with more backticks
    than any run of backticks in it (CommonMark 6.1)."""
    text = " ".join(str(value).splitlines())
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"
