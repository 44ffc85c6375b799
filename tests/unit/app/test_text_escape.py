"""app/core/markdown.py: names from files shown as text in Streamlit's Markdown."""

from __future__ import annotations

import re

import pytest

from app.core.markdown import WORD_JOINER, code, esc

HOSTILE = ["![x](http://evil.example/i.png)", "[click](http://evil.example)",
           "<http://evil.example>", "www.evil.example", "a@evil.example", "$x^2$",
           ":red[alert] :material/warning:", "**bold** _it_ ~~s~~", "# heading", "`tick`",
           "| a | b |", "line1\n# line2"]


@pytest.mark.parametrize("text", HOSTILE)
def test_esc_leaves_no_markdown_construct(text: str) -> None:
    out = esc(text)
    assert "\n" not in out
    # every special character is preceded by a backslash; www. loses its autolink
    assert not re.search(r"(?<!\\)[`*_~\[\]()<>!#$:|@{}]", out)
    assert "www." not in out
    # and a reader sees the original text (CommonMark drops the escaping backslashes)
    assert re.sub(r"\\(.)", r"\1", out).replace(WORD_JOINER, "") == " ".join(text.splitlines())
    # GFM autolinks are found after escapes are read: a word joiner breaks their pattern
    assert not re.search(r"(?i)https?://|www\.|\w@", re.sub(r"\\(.)", r"\1", out))


def test_esc_keeps_plain_names_readable() -> None:
    assert esc("NVIDIA H200") == "NVIDIA H200"
    assert esc("n=1024, fp16 - run 3.5") == "n=1024, fp16 - run 3.5"


@pytest.mark.parametrize("text, expected", [("abc", "`abc`"), ("a`b", "``a`b``"),
                                            ("`x", "`` `x ``"), ("a``b`c", "```a``b`c```")])
def test_code_span_fence_is_longer_than_any_backtick_run(text: str, expected: str) -> None:
    assert code(text) == expected


def test_plotly_figures_show_names_from_files_as_text() -> None:
    import plotly.graph_objects as go

    from app.core.figures.text import figure_as_text

    evil = '<a href="http://evil.example">fp32</a>'
    fig = go.Figure([go.Bar(x=[evil, "fp16"], y=[1.0, -2.0], name=evil, text=[evil, None],
                            customdata=[[evil, 3], ["x", 4]])])
    fig.update_xaxes(categoryorder="array", categoryarray=[evil, "fp16"])
    figure_as_text(fig)
    spec = fig.to_json()
    assert "<a " not in spec and "&lt;a href" in spec
    assert list(fig.data[0].x) == list(fig.layout.xaxis.categoryarray)  # same categories
    assert list(fig.data[0].y) == [1.0, -2.0]


def test_esc_spans_shows_a_marked_command_as_code_and_the_rest_as_text() -> None:
    """A fresh user saw "the output of \\`ncu --list-sets\\`" in an import's error: the
    message marks the command with backticks, which :func:`esc` escaped. A span between two
    backticks is now a code span (shown as it is); the text around it is escaped as before;
    an odd backtick opens no span."""
    from app.core.markdown import code, esc, esc_spans

    assert esc_spans("run `ncu --list-sets` *now*") == (
        esc("run ") + code("ncu --list-sets") + esc(" *now*"))
    assert esc_spans("a ` alone *x*") == esc("a ` alone *x*")
    assert esc_spans("`[x](http://e)`") == code("[x](http://e)")  # a link in code is text
