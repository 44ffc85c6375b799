"""Nothing cut at 1000x700 (session 22's fresh user, a real browser): the sidebar Job box's
entries were cut before their status (the open list's, and the closed box's: issue 37), the
Size sweep table's value columns stood right of a wide Run audit column, out of the table's
sight, the Options' "nsight-python's default" hints were cut at half the sidebar's width, and
Run's question (a large job, or the same spec again
within seconds: one question, :func:`app.sidebar.job_builder.render_question`) began at the
sidebar's bottom edge. The test reads the drawn boxes (``getBoundingClientRect``), the elements'
scroll widths and the placeholders' text widths in their own font, so it judges what a person
sees. The first charts of One kernel and Compare: tests/e2e/test_charts_in_sight.py.
Screenshots: ``tests/artifacts/nothing-cut/``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from app.core.figures.sweep import VALUES_FIRST
from app.core.kernel_catalog import CATALOG
from app.core.table_text import header
from app.services import import_client, job_model
from app.services.result_store import SOURCE_BUNDLED, read_info
from app.settings import BUNDLED_DIR_DEFAULT
from app.sidebar.job_builder import ANSWERS
from app.sidebar.job_selector import box_label, shown_id
from app.ui.state import LABEL_SEP
from profiling_worker.bundle.schema.manifest import JobStatus
from profiling_worker.bundle.schema.spec import JobSpec
from tests.scenarios import SCENARIOS
from tests.e2e.conftest import (AppServer, fill_text, get_by_key, open_app, open_list,
                                wait_for_app_run, wait_for_elements)

pytestmark = pytest.mark.e2e

WIDTH, HEIGHT = 1000, 700
SLACK_PX = 1.0
#: The job the Size sweep is read on: three failed run audit badges, the widest Run audit cells.
AUDITED_JOB = "h200-cupti-stability"

#: Each element's text, its box, and whether it or an element in it shows less than its content
#: (scrollWidth over clientWidth: an ellipsis, a scrolled or hidden part).
READ_BOXES = """els => els.map(e => {
  const r = e.getBoundingClientRect();
  const cut = [e, ...e.querySelectorAll('*')].some(d => d.scrollWidth > d.clientWidth + 1
      && getComputedStyle(d).overflowX !== 'visible');
  return {text: e.innerText.trim(), x0: r.left, x1: r.right, y0: r.top, y1: r.bottom, cut};
})"""

#: Each empty input's placeholder (the hint it shows), the px it takes in the input's font and
#: the px it has.
READ_PLACEHOLDERS = """els => els.filter(i => i.placeholder && i.value === '').map(i => {
  const s = getComputedStyle(i);
  const ctx = document.createElement('canvas').getContext('2d');
  ctx.font = s.font;
  return {text: i.placeholder, needs: ctx.measureText(i.placeholder).width,
          has: i.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight)};
})"""


#: :data:`READ_BOXES` of a long list's entries, each first scrolled into the list's sight as a
#: person scrolls it: an open list scrolls to its selected entry a frame after it opens, so the
#: boxes as first drawn depend on when they are read (CI read one below the window).
READ_LIST_BOXES = READ_BOXES.replace("{\n", "{\n  e.scrollIntoView({block: 'nearest'});\n", 1)


@pytest.fixture
def small(browser):  # type: ignore[no-untyped-def]
    """A page in a fresh 1000x700 context."""
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    page = context.new_page()
    try:
        yield page
    finally:
        context.close()


#: The text widths (px, in the field's font) of ``names`` and the px the field has for text.
READ_NAME_WIDTHS = """(i, names) => {
  const s = getComputedStyle(i);
  const ctx = document.createElement('canvas').getContext('2d');
  ctx.font = s.font;
  return {has: i.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight),
          needs: names.map(n => [n, ctx.measureText(n).width])};
}"""


def _run_ids() -> list[str]:
    """Job ids as the Job box shows them (:func:`app.sidebar.job_selector.shown_id`): a run of
    each kernel the form offers (:func:`app.services.job_model.new_job_id`, the first kernel
    in the id) and an import. A batched_matmul run's id, 240 px whole, lost its last ~16 px
    (issue 37): it is shown cut in its middle."""
    ids = ([job_model.new_job_id(JobSpec(kernels=(k,), configs=())) for k in CATALOG]
           + [import_client.new_job_id()])
    assert any(shown_id(i) != i for i in ids), "no id long enough to be shortened"
    return [shown_id(i) for i in ids]


def _shots(artifacts_dir: Path) -> Path:
    out = artifacts_dir / "nothing-cut"
    out.mkdir(parents=True, exist_ok=True)
    return out


def _outside(box: dict, x0: float, x1: float, y0: float = 0, y1: float = HEIGHT) -> bool:
    """Whether ``box`` reaches beyond x0..x1, y0..y1 (px)."""
    return (box["x0"] < x0 - SLACK_PX or box["x1"] > x1 + SLACK_PX
            or box["y0"] < y0 - SLACK_PX or box["y1"] > y1 + SLACK_PX)


def _open_list_boxes(page, key: str, shot: Path) -> list[dict]:  # type: ignore[no-untyped-def]
    """Open the select box of widget ``key``, screenshot it to ``shot`` and read each option's
    box and text (:data:`READ_LIST_BOXES`)."""
    open_list(get_by_key(page, key).get_by_role("combobox"))
    options = page.get_by_role("option")
    expect(options.first).to_be_visible()
    page.screenshot(path=str(shot))
    return options.evaluate_all(READ_LIST_BOXES)


def test_job_box_entries_whole(small, bundled_app_server: AppServer,
                               artifacts_dir: Path) -> None:  # type: ignore[no-untyped-def]
    """Each entry of the sidebar's open Job list is shown whole, its status among its words,
    inside the window."""
    open_app(small, bundled_app_server.url, f"?job={AUDITED_JOB}")
    read = _open_list_boxes(small, "sidebar-job", _shots(artifacts_dir) / "job-list.png")
    statuses = {s.value for s in JobStatus}
    problems = [f"{o['text']!r}: {'cut' if o['cut'] else o}" for o in read
                if o["cut"] or _outside(o, 0, WIDTH)
                or not statuses & set(o["text"].split(LABEL_SEP))]
    assert len(read) >= 5 and not problems, (len(read), problems)


@pytest.mark.parametrize("width, height", ((1000, 700), (1400, 900)),
                         ids=("1000x700", "1400x900"))
def test_closed_job_box_shows_name_and_status(browser, bundled_app_server: AppServer,
                                              artifacts_dir: Path, width: int,
                                              height: int) -> None:  # type: ignore[no-untyped-def]
    """Issue 37: the closed Job box cut its entry before the status ("cpu-contended · matmul ·
    cpu · d…") and the longest ids before their end. The box's label says the shown job's
    status, uncut, and the box's field holds every bundled job's id and the ids of runs and
    imports whole (measured in the field's font), the widest bundled one read as drawn."""
    names = sorted(p.name for p in BUNDLED_DIR_DEFAULT.iterdir() if p.is_dir())
    widest = max((p for p in SCENARIOS.iterdir() if p.is_dir()), key=lambda p: len(p.name))
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    try:
        open_app(page, bundled_app_server.url, f"?job={widest.name}")
        wait_for_elements(page)
        field = get_by_key(page, "sidebar-job").get_by_role("combobox")
        expect(field).to_have_value(re.compile(rf"^{re.escape(widest.name + LABEL_SEP)}"))
        page.screenshot(path=str(_shots(artifacts_dir) / f"job-box-{width}x{height}.png"))
        label = get_by_key(page, "sidebar-job").get_by_test_id("stWidgetLabel")
        read = label.evaluate_all(READ_BOXES)[0]
        info = read_info(widest, SOURCE_BUNDLED)
        assert read["text"] == box_label(info) and str(info.status) in read["text"], read
        assert not read["cut"] and not _outside(read, 0, width, 0, height), read
        widths = field.evaluate(READ_NAME_WIDTHS, [*names, widest.name, *_run_ids()])
        cut = [(n, round(w)) for n, w in widths["needs"] if w > widths["has"] + SLACK_PX]
        assert len(widths["needs"]) >= 30 and not cut, (widths["has"], cut)
    finally:
        context.close()


def test_metric_list_entries_whole(small, bundled_app_server: AppServer,
                                  artifacts_dir: Path) -> None:  # type: ignore[no-untyped-def]
    """Session 23: Stability's open Metric list cut its long options ("SM throughput [%]
    (sm__throughput.avg.pct_of_peak_sustained…"). Each is shown whole, inside the window."""
    open_app(small, f"{bundled_app_server.url}/stability", "?job=h200-ncu-matmul-sweep")
    wait_for_elements(small)
    read = _open_list_boxes(small, "stability-metric", _shots(artifacts_dir) / "metric-list.png")
    problems = [f"{o['text']!r}: {'cut' if o['cut'] else o}" for o in read
                if o["cut"] or _outside(o, 0, WIDTH)]
    assert len(read) >= 3 and not problems, (len(read), problems)
    assert any("(sm__throughput" in o["text"] for o in read), read  # the long ones are there


def test_sweep_table_shows_values_beside_names(small, bundled_app_server: AppServer,
                                               artifacts_dir: Path) -> None:  # type: ignore[no-untyped-def]
    """The Size sweep table's value and CI95 columns are in the table's sight, not scrolled out
    right of the Run audit column: the grid writes a header cell, for its readers, only for each
    column it draws."""
    open_app(small, bundled_app_server.url, f"?job={AUDITED_JOB}")
    wait_for_elements(small)
    table = small.get_by_test_id("stMain").get_by_test_id("stDataFrame").first
    table.scroll_into_view_if_needed()
    headers = table.locator("th")
    expect(headers.first).to_be_attached()
    small.screenshot(path=str(_shots(artifacts_dir) / "sweep-table.png"))
    drawn = headers.all_inner_texts()
    # as headed (table_text.header: "Mean", "CI95 lower"; the CSV keeps the names)
    assert {"Annotation", "Config", *map(header, VALUES_FIRST)} <= set(drawn), drawn


def test_option_hints_whole(small, bundled_app_server: AppServer,
                            artifacts_dir: Path) -> None:  # type: ignore[no-untyped-def]
    """Every empty Options field's hint ("nsight-python's default", "10 (default)") fits in its
    box, and every field inside the sidebar."""
    open_app(small, bundled_app_server.url)
    sidebar = small.get_by_test_id("stSidebar")
    sidebar.get_by_text("Options", exact=True).click()
    wait_for_app_run(small)
    wait_for_elements(small)
    field = get_by_key(small, "builder-thermal_wait").locator("input")
    expect(field).to_be_attached()
    field.scroll_into_view_if_needed()
    small.screenshot(path=str(_shots(artifacts_dir) / "options.png"))
    hints = sidebar.locator("input").evaluate_all(READ_PLACEHOLDERS)
    cut = [h for h in hints if h["needs"] > h["has"] + SLACK_PX]
    assert any("nsight-python" in h["text"] for h in hints), hints
    assert not cut, cut
    edge = sidebar.get_by_test_id("stSidebarUserContent").bounding_box()
    assert edge is not None
    fields = sidebar.locator("input").evaluate_all(READ_BOXES)
    outside = [f for f in fields if _outside(f, edge["x"], edge["x"] + edge["width"],
                                              -1e9, 1e9)]
    assert not outside, outside


def test_runs_question_in_sight(small, bundled_app_server: AppServer,
                                artifacts_dir: Path) -> None:  # type: ignore[no-untyped-def]
    """Run's question (here a large job's; the same spec again within seconds is asked in the
    same place) and its two answers are inside the window, uncut, as the Run click leaves the
    sidebar; answering Change queues nothing."""
    open_app(small, bundled_app_server.url)
    before = sorted(bundled_app_server.results_dir.iterdir())
    fill_text(small, "builder-sizes", "1..2000 +1")
    get_by_key(small, "builder-submit").get_by_role("button").click()
    warning = small.get_by_test_id("stSidebar").get_by_test_id("stAlert").filter(
        has_text=ANSWERS)
    expect(warning).to_be_visible()
    wait_for_app_run(small)
    small.screenshot(path=str(_shots(artifacts_dir) / "question.png"))
    parts = [warning, get_by_key(small, "builder-run-anyway").get_by_role("button"),
             get_by_key(small, "builder-change").get_by_role("button")]
    read = [p.evaluate_all(READ_BOXES)[0] for p in parts]
    problems = [r for r in read if r["cut"] or _outside(r, 0, WIDTH)]
    assert not problems, problems
    get_by_key(small, "builder-change").get_by_role("button").click()
    wait_for_app_run(small)
    expect(warning).to_have_count(0)
    assert sorted(bundled_app_server.results_dir.iterdir()) == before


def test_kernel_pill_whole_and_run_in_sight(small, bundled_app_server: AppServer,
                                            artifacts_dir: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue 37: the chosen kernel's pill read "matmul · Matrix mu…" at 1000 px. Its words
    wrap inside the Kernels box, each pill inside the sidebar, and Run stays in the window."""
    open_app(small, bundled_app_server.url)
    wait_for_elements(small)
    pills = get_by_key(small, "builder-kernels").locator("[data-tag]")
    expect(pills.first).to_be_visible()
    small.screenshot(path=str(_shots(artifacts_dir) / "kernel-pill.png"))
    edge = small.get_by_test_id("stSidebarUserContent").bounding_box()
    assert edge is not None
    read = pills.evaluate_all(READ_BOXES)
    problems = [p for p in read if p["cut"] or _outside(p, edge["x"], edge["x"] + edge["width"])]
    assert read and not problems, read
    run = get_by_key(small, "builder-submit").get_by_role("button").evaluate_all(READ_BOXES)
    assert not _outside(run[0], 0, WIDTH), run
