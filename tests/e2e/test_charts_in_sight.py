"""Every chart page's first chart in sight at 1000x700 and 1400x900, in a real browser (issue
37). The Size sweep is checked on all the bundled jobs (test_cpu_job_density.py); each other
chart page here on one bundled job that has its chart, the job that stood worst where several
do. At 1000x700 Stability's chart top was at y 1042 (the run audit's check words and evidence
and the stable/CI95 caption stood over it), Clocks and thermal's at 840 (the clock sources'
list) and Deep dive's at 717 (the report's 20 section names), One kernel's at 1370 (its metric
cards, run audit, kernel names and table, now under the chart, and the region's scope at 625)
and Compare's at 760 (the jobs not offered, the cycle check and the caveats, now under it).
Stability's chart must show its upper half too: at 1000x700 its top stood at y 495 under the run
audit's badges (session 25's fresh user), now drawn under the chart.
Screenshots: ``tests/artifacts/charts-in-sight/``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.core.pages import SECTIONS
from app.ui.navigation import PAGES_DIR
from tests.e2e.conftest import AppServer, first_chart, in_sight

pytestmark = pytest.mark.e2e

VIEWPORTS = ((1000, 700), (1400, 900))
#: A chart page's URL path -> the bundled job it is checked on (the sweep: every job, in
#: test_cpu_job_density.py).
JOBS = {
    "bound": "h200-ncu-roofline",
    "memory": "h200-ncu-elementwise",
    "stability": "h200-cupti-stability",  # three failed badges, a short-kernel warning
    "kernels": "h200-cupti-matmul-sweep",
    "one-kernel": "h200-cupti-matmul-sweep",
    "deep-dive": "h200-ncu-deepdive-fp16-4096",
    "compare": "h200-cupti-gate-fp32",
    "cache-clock": "h200-cupti-elementwise-cache-none",
    "clocks": "h200-cupti-stability",
    "backends": "h200-ncu-gate-base",
}

#: Pages whose first chart shows its upper half in the window, not only its top (issue 37).
HALF_IN_SIGHT = {"stability"}


def _cases() -> list[object]:
    return [pytest.param(path, job, width, height, id=f"{path}-{width}x{height}")
            for path, job in JOBS.items() for width, height in VIEWPORTS]


def test_every_chart_page_is_listed() -> None:
    """Each page whose script draws a chart has a job here (the sweep's are checked apart)."""
    drawn = re.compile(r"figure_panel|chart_with_table|plotly_chart")
    charted = {e.url_path for entries in SECTIONS.values() for e in entries
               if drawn.search((PAGES_DIR / e.script).read_text())}
    assert charted - {""} == set(JOBS), charted ^ set(JOBS)


@pytest.mark.parametrize("path, job, width, height", _cases())
def test_the_first_chart_is_in_sight(browser, bundled_app_server: AppServer, artifacts_dir: Path,
                                     path: str, job: str, width: int,
                                     height: int) -> None:  # type: ignore[no-untyped-def]
    out = artifacts_dir / "charts-in-sight"
    out.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    try:
        box = first_chart(page, f"{bundled_app_server.url}/{path}", f"?job={job}").bounding_box()
        page.screenshot(path=str(out / f"{path}-{job}-{width}x{height}.png"))
        assert in_sight(box, height), box
        if path in HALF_IN_SIGHT:
            assert box is not None and box["y"] + box["height"] / 2 <= height, box
    finally:
        context.close()
