"""Text from files shown as text: escaping for Streamlit's Markdown.

Names and messages that come from bundles (GPU names, annotation and kernel names, labels, error
messages of imported or user-made files) are data. ``st.markdown``, ``st.caption``, ``st.info``
and the other text elements render GitHub-flavoured Markdown (links, images, emphasis, ``$``
math, ``:colour[...]`` directives), so such strings are passed through :func:`esc` (inline text)
or :func:`code` (an inline code span) before they are put into a Markdown string.

Plotly figures are escaped where they are assembled (:mod:`app.core.figures.text`).
Bidirectional control characters (a right-to-left override U+202E makes "evil" read "live") are
shown, not obeyed, by :func:`visible` in all of these, in tables (:func:`app.ui.panels.table`)
and in the job selector's labels.
"""

from __future__ import annotations

import re

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
#: Unicode's bidirectional formatting characters (UAX #9: embeddings, overrides, isolates,
#: marks): each reorders the text around it on screen.
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_BIDI = re.compile(f"[{BIDI_CONTROLS}]")


def visible(value: object) -> str:
    """``value`` as a string with each bidirectional control character shown as its code point,
    ``⟨U+202E⟩``, instead of reordering the text after it (CVE-2021-42574 "Trojan Source")."""
    return _BIDI.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", str(value))

BIDI_PATTERN = _BIDI.pattern  # for pandas' vectorised ``str.contains`` over table columns


def esc(value: object) -> str:
    r"""``value`` as a string that Markdown shows literally, on one line.

    Example: ``esc("![x](http://e/i.png)")`` -> ``\!\[x\]\(http`` U+2060 ``\://e/i.png\)``
    (a word joiner after ``http``). Line breaks become spaces (a newline could start a
    heading or a list).
    """
    text = " ".join(visible(value).splitlines())
    return _AUTOLINK.sub(lambda m: (m.group(1) or "") + WORD_JOINER,
                         _SPECIAL.sub(r"\\\1", text))


def esc_spans(value: object) -> str:
    """``value`` as :func:`esc` shows it, except that each span between two backticks is shown
    as inline code (:func:`code`): the worker's and the app's messages mark commands so
    ("import a report made with `ncu --set full`"), and escaped they read with literal
    backticks. Nothing is rendered either way: a code span shows its text as it is."""
    parts = " ".join(visible(value).splitlines()).split("`")
    if len(parts) % 2 == 0:  # an odd backtick opens no span: all of it is text
        return esc(value)
    return "".join(code(part) if i % 2 else esc(part) for i, part in enumerate(parts))


def code(value: object) -> str:
    """``value`` as an inline code span (nothing inside is rendered), fenced with more backticks
    than any run of backticks in it (CommonMark 6.1)."""
    text = " ".join(visible(value).splitlines())
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"
