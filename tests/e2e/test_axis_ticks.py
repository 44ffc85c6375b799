"""Every axis readable (issue 37): on every page of the recorded H200 jobs, at 1400x900 and at
1000x700, the tick labels plotly draws never overlap and never mix notations on one axis. Each
page is opened once, at 1400x900, then its window resized to 1000x700: the charts are drawn
again at their new width (waited for), with the ticks of a page opened at that size.

The Cache and clock working-set axis printed ``7e+6 8e+6 9e+6`` on top of each other, the
fusion chart mixed ``900,000`` with ``1e+6``, the Roofline's ticks ran together (``700800900``).
The test reads the drawn labels' boxes (``getBoundingClientRect``) axis by axis, so it judges
what a person sees, whatever chose the ticks. A screenshot of each page at each size is left in
``tests/artifacts/ticks/`` for people to look at.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout, expect

from tests.e2e.conftest import AppServer, open_app, wait_for_elements
from tests.e2e.test_views_tour import CHART_PAGES, JOB_FOR

pytestmark = pytest.mark.e2e

VIEWPORTS = ((1400, 900), (1000, 700))
#: Pages whose charts take other shapes on other jobs: those jobs are visited too.
MORE_JOBS = {
    "cache-clock": ("h200-cupti-elementwise",),
    "memory": ("h200-cupti-elementwise", "h200-ncu-softmax"),
    "bound": ("h200-ncu-matmul-sweep",),
    "sweep": ("h200-cupti-stability", "h200-ncu-elementwise"),
    "one-kernel": ("h200-ncu-roofline",),
}
SLACK_PX = 1.0  # boxes that share an edge do not overlap

#: Per axis layer of every drawn chart: its labels' text and box (unrotated labels; a rotated
#: label's axis-aligned box says little about where its letters are).
READ_TICKS = """() => [...document.querySelectorAll('[data-testid=stMain] .js-plotly-plot')]
  .flatMap((plot, chart) => [...plot.querySelectorAll('.xaxislayer-above, .yaxislayer-above')]
    .map(layer => ({chart, axis: layer.getAttribute('class'), labels: [...layer.querySelectorAll(
        '.xtick text, .ytick text')]
      .filter(t => t.textContent.trim() !== '' && getComputedStyle(t).display !== 'none')
      .map(t => { const r = t.getBoundingClientRect();
        return {text: t.textContent, rotated: /rotate\\((?!0)/.test(t.getAttribute('transform')
                || ''), x0: r.left, x1: r.right, y0: r.top, y1: r.bottom}; })})))"""


def _problems(layers: list[dict], where: str) -> list[str]:
    """Overlapping labels and axes mixing exponent form with plain numbers."""
    out = []
    for layer in layers:
        labels = [b for b in layer["labels"] if not b["rotated"]]
        for i, a in enumerate(labels):
            for b in labels[i + 1:]:
                if (min(a["x1"], b["x1"]) - max(a["x0"], b["x0"]) > SLACK_PX
                        and min(a["y1"], b["y1"]) - max(a["y0"], b["y0"]) > SLACK_PX):
                    out.append(f"{where} chart {layer['chart']}: {a['text']!r} overlaps "
                               f"{b['text']!r}")
        texts = [b["text"] for b in layer["labels"]]
        exponent = [t for t in texts if _is_exponent(t)]
        if exponent and len(exponent) < len(texts):
            out.append(f"{where} chart {layer['chart']}: mixed notation {texts}")
    return out


def _is_exponent(text: str) -> bool:
    """``1e+6``, ``3.5e-4`` (d3 and Python exponent form), ``2^10`` (a size axis's powers of
    two: beside a plain ``48`` that mixes notations too)."""
    base, caret, power = text.partition("^")
    if caret:
        return base.isdigit() and power.isdigit()
    head, sep, tail = text.lower().partition("e")
    return bool(sep) and head.replace(".", "").replace("-", "").replace("−", "").isdigit() \
        and tail.lstrip("+-−").isdigit()


#: Before a resize: count each drawn chart's redraws from now on (plotly's ``plotly_afterplot``
#: fires once the axes of a draw are there) and return each one's width.
WATCH_REDRAWS = """() => [...document.querySelectorAll('[data-testid=stMain] .js-plotly-plot')]
  .map(plot => { plot.__redraws = 0; plot.on('plotly_afterplot', () => plot.__redraws++);
                 return plot._fullLayout.width; })"""
#: After it: whether every chart has been drawn again at a width of its own, not its old one
#: (every chart of the app stretches to its container, so a narrower window narrows them all).
REDRAWN = """(before) => {
  const plots = [...document.querySelectorAll('[data-testid=stMain] .js-plotly-plot')];
  return plots.length === before.length && plots.every((plot, i) => plot.__redraws > 0
    && plot._fullLayout.width !== before[i]
    && Number(plot.querySelector('.main-svg').getAttribute('width')) === plot._fullLayout.width);
}"""


def _resize(page, width: int, height: int, where: str) -> None:  # type: ignore[no-untyped-def]
    """Resize the window and wait until every chart is drawn again at its new width, as one
    opened at that size is (the same page, not a second start of it)."""
    before = page.evaluate(WATCH_REDRAWS)
    page.set_viewport_size({"width": width, "height": height})
    try:
        page.wait_for_function(REDRAWN, arg=before, timeout=60_000)
    except PlaywrightTimeout:
        pytest.fail(f"{where}: the charts were not drawn again at {width}x{height} within 60 s "
                    f"(widths before: {before})")


def _read_ticks(page, out_dir: Path, name: str) -> list[dict]:  # type: ignore[no-untyped-def]
    """Every drawn chart's tick labels (after a screenshot of each, left in ``out_dir``)."""
    charts = page.get_by_test_id("stMain").locator(".js-plotly-plot")
    expect(charts.first).to_be_attached(timeout=60_000)
    for i in range(charts.count()):
        expect(charts.nth(i).locator(".main-svg").first).to_be_attached(timeout=60_000)
        charts.nth(i).screenshot(path=str(out_dir / f"{name}-{i}.png"))
    return page.evaluate(READ_TICKS)


def test_no_tick_labels_overlap_or_mix_notation(page, bundled_app_server: AppServer,
                                                artifacts_dir: Path) -> None:  # type: ignore[no-untyped-def]
    out_dir = artifacts_dir / "ticks"
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = sorted(CHART_PAGES)  # the pages that draw charts (test_views_tour checks the list)
    problems: list[str] = []
    charts_read = 0
    for path in paths:
        for job in (JOB_FOR.get(path), *MORE_JOBS.get(path, ())):
            page.set_viewport_size(dict(zip(("width", "height"), VIEWPORTS[0])))
            route = "" if path == "sweep" else path
            open_app(page, f"{bundled_app_server.url}/{route}", f"?job={job}" if job else "")
            wait_for_elements(page)
            for n, (width, height) in enumerate(VIEWPORTS):
                where = f"{path} ({job or 'default job'}) {width}x{height}"
                if n:  # each later size: the window resized, as a person does
                    _resize(page, width, height, where)
                layers = _read_ticks(page, out_dir, f"{path}-{job or 'default'}-{width}")
                charts_read += len({layer["chart"] for layer in layers})
                problems += _problems(layers, where)
    assert charts_read > 20, f"only {charts_read} charts were read"
    assert not problems, "\n".join(problems)
