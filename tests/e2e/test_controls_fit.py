"""Every control readable (issue 37): on every chart page of the recorded H200 jobs, at 1400x900
and at 1000x700, each option of each segmented control and each widget's and metric's label
(toggles too) is fully shown, and the link bar keeps each group's label beside its own links.

At 1000x700 the Size sweep's Quantity control showed ``Time | TFLOP/s |`` (``Analytic GB/s``
scrolled out of its column), Time unit lost ``ms``, the Log y toggle read ``L..`` and One
kernel's metrics ``Dur…``, ``RSD…``; the link bar wrapped each group's second line of links
under its label, so ``Memory and fusion / Stability`` sat beside the ``Kernels`` label, and the
bar took about 250 of the 700 px. The test reads the drawn boxes (``getBoundingClientRect``)
and the elements' scroll widths, so it judges what a person sees. Screenshots:
``tests/artifacts/controls/``."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from app.ui.navigation import SECTIONS
from tests.e2e.conftest import AppServer, get_by_key, open_app, wait_for_elements
from tests.e2e.test_axis_ticks import VIEWPORTS
from tests.e2e.test_views_tour import CHART_PAGES, JOB_FOR

pytestmark = pytest.mark.e2e

SLACK_PX = 1.0
#: The bar at 1000x700 took about 250 px before (issue 37); a third of the window is the bound.
BAR_MAX_FRACTION = 1 / 3

#: Each segmented control's options and each widget's and metric's label in the page (not the sidebar):
#: its text, its box, the box of the column (or block) holding it, and whether its content is
#: wider than its box (a scrolled or ellipsised part is hidden).
READ_CONTROLS = """() => {
  const box = e => { const r = e.getBoundingClientRect();
                     return {x0: r.left, x1: r.right, y0: r.top, y1: r.bottom}; };
  const holder = e => box(e.closest('[data-testid=stColumn]')
                          || e.closest('[data-testid=stVerticalBlock]'));
  const main = '[data-testid=stMain] ';
  const options = [...document.querySelectorAll(main + '[data-testid=stButtonGroup] button')]
    .filter(b => !b.closest('[data-testid=stWidgetLabel]'))  // the label's help icon
    .map(b => ({kind: 'option', text: b.innerText.trim(), box: box(b), holder: holder(b),
                clipped: b.scrollWidth > b.clientWidth + 1
                         || b.parentElement.scrollWidth > b.parentElement.clientWidth + 1}));
  const labels = [...document.querySelectorAll(
      main + ':is([data-testid=stWidgetLabel], [data-testid=stMetricLabel]) '
      + '[data-testid=stMarkdownContainer]')]
    .filter(t => t.innerText.trim() !== '')
    .map(t => ({kind: 'label', text: t.innerText.trim(), box: box(t), holder: holder(t),
                clipped: t.scrollWidth > t.clientWidth + 1}));
  return [...options, ...labels];
}"""


def _control_problems(controls: list[dict], width: int, where: str) -> list[str]:
    """Options or labels cut off, outside the window or outside their column."""
    out = []
    for c in controls:
        b, h = c["box"], c["holder"]
        if c["clipped"]:
            out.append(f"{where}: {c['kind']} {c['text']!r} is cut off (content wider than box)")
        if b["x0"] < -SLACK_PX or b["x1"] > width + SLACK_PX:
            out.append(f"{where}: {c['kind']} {c['text']!r} outside the window {b}")
        if b["x0"] < h["x0"] - SLACK_PX or b["x1"] > h["x1"] + SLACK_PX:
            out.append(f"{where}: {c['kind']} {c['text']!r} {b} outside its column {h}")
    return out


def _bar_problems(page, height: int, where: str) -> list[str]:  # type: ignore[no-untyped-def]
    """A group label not level with its first link, a link left of its group's label (read as
    another group's), or a bar taller than :data:`BAR_MAX_FRACTION` of the window."""
    out = []
    bar = get_by_key(page, "nav-bar")
    for section in SECTIONS:
        group = get_by_key(page, f"nav-{section.split()[0].lower()}")
        label = group.get_by_test_id("stCaptionContainer").first.bounding_box()
        links = group.get_by_test_id("stPageLink-NavLink")
        first = links.first.bounding_box()
        assert label and first, f"{where}: the {section} group is not drawn"
        label_mid = label["y"] + label["height"] / 2
        if not first["y"] <= label_mid <= first["y"] + first["height"]:
            out.append(f"{where}: label {section!r} (middle y {label_mid:.0f}) not level with "
                       f"its first link (y {first['y']:.0f}..{first['y'] + first['height']:.0f})")
        for i in range(links.count()):
            link = links.nth(i).bounding_box()
            if link and link["x"] < label["x"] + label["width"] - SLACK_PX:
                out.append(f"{where}: link {links.nth(i).inner_text()!r} lies under the "
                           f"{section!r} label, not right of it")
    box = bar.bounding_box()
    if box and box["y"] + box["height"] > height * BAR_MAX_FRACTION:
        out.append(f"{where}: the link bar ends at y {box['y'] + box['height']:.0f} of {height}")
    return out


def test_every_control_option_and_bar_label_in_sight(page, bundled_app_server: AppServer,
                                                     artifacts_dir: Path) -> None:  # type: ignore[no-untyped-def]
    out_dir = artifacts_dir / "controls"
    out_dir.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    read = 0
    for path in sorted(CHART_PAGES):
        job = JOB_FOR.get(path)
        page.set_viewport_size(dict(zip(("width", "height"), VIEWPORTS[0])))
        route = "" if path == "sweep" else path
        open_app(page, f"{bundled_app_server.url}/{route}", f"?job={job}" if job else "")
        wait_for_elements(page)
        expect(get_by_key(page, "nav-bar").get_by_test_id("stPageLink-NavLink")).to_have_count(
            sum(len(entries) for entries in SECTIONS.values()))
        for width, height in VIEWPORTS:
            where = f"{path} ({job or 'default job'}) {width}x{height}"
            # the layout follows the window at once (CSS only): no rerun to wait for
            page.set_viewport_size({"width": width, "height": height})
            page.screenshot(path=str(out_dir / f"{path}-{width}x{height}.png"))
            controls = page.evaluate(READ_CONTROLS)
            read += len(controls)
            problems += _control_problems(controls, width, where)
            problems += _bar_problems(page, height, where)
    assert read > 50, f"only {read} control options and labels were read"
    assert not problems, "\n".join(problems)
