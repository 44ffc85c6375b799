"""Issue 36 in a real browser, each on its page, on one server (recorded H200 scenarios as the
bundled dir, the user collector file ``tests/fixtures/collector_files/host_collectors.py``):

- the run audit's badge per config, its evidence on demand (the expander): h200-cupti-timeline's
  slow mode and h200-cupti-stability's missing L2 flush flagged, h200-cupti-gate-base passed;
- energy on the Size sweep and Compare pages: no scenario recorded NVML's energy counter (no
  job had the ``energy`` collector), so the pages say "not recorded", for an H200 job and for a
  cpu job alike, and draw no figure;
- a user collector listed in the sidebar beside the built-in NVML ones, and its row and values
  after a cpu job (Clocks and thermal page);
- that cpu job replicated from the Files page and the pair judged (reproduced, not reproduced or
  not decided: a cpu timing decides none in advance).

Screenshots go to pytest's tmp dir (``issue36-*.png``) and ``tests/artifacts/views/``.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from app.core.views.energy import NOT_RECORDED
from profiling_worker.bundle.gate import replication as R
from tests.e2e.conftest import (APP_RUN_TIMEOUT_MS, AppServer, choose_option, fill_text,
                                get_by_key, open_app, open_list, wait_for_app_run,
                                wait_for_elements)
from tests.e2e.test_views_tour import _full_page_screenshot

pytestmark = pytest.mark.e2e

JOB_TIMEOUT_MS = 300_000  # a cold torch import plus 2 sizes x 3 runs at load 8 on 2 cores
FINAL = re.compile(r"\b(done|failed|cancelled|interrupted)\b")
JOB_ID = re.compile(r"[?&]job=([^&#]+)")
AUDIT_DETAILS = "Run audit: the checks and their evidence"
#: The user collectors the cpu job asks for (host_collectors.py): a ONCE text, a RUN value with
#: a unit, and one that raises for n > 32 (named, the job still done).
USER_COLLECTORS = ("python_version", "unix_time", "fails_on_large")
#: The replication verdicts: not comparable when the gate's context checks or the run audit
#: refuse the pair.
VERDICTS = tuple(v.value for v in R.Replication)
#: A multiselect's list while open: react-aria keeps a closing one in the page for its fade-out
#: (``data-exiting``), with its options.
OPEN_LIST = "[data-testid='stMultiSelectDropdown']:not([data-exiting])"
NEXT_TWO_FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
PICK_TRIES = 3


@pytest.fixture
def shots(tmp_path: Path, artifacts_dir: Path) -> Iterator[Path]:
    """pytest's tmp dir for this test's screenshots, copied to tests/artifacts/views/ after."""
    yield tmp_path
    views = artifacts_dir / "views"
    views.mkdir(parents=True, exist_ok=True)
    for png in tmp_path.glob("issue36-*.png"):
        shutil.copy(png, views / png.name)


def _no_exception(page) -> None:  # type: ignore[no-untyped-def]
    expect(page.get_by_test_id("stException")).to_have_count(0)


def _shot(page, at, path: Path) -> None:  # type: ignore[no-untyped-def]
    """Screenshot with ``at`` in view, once the app is idle and drawn (a scroll that lands
    during a rerun waits for the element drawn again)."""
    wait_for_app_run(page)
    wait_for_elements(page)
    at.scroll_into_view_if_needed(timeout=APP_RUN_TIMEOUT_MS)
    page.screenshot(path=str(path))


def _audit_details(page):  # type: ignore[no-untyped-def]
    """Open the run audit's expander; return it."""
    box = page.get_by_test_id("stExpander").filter(has_text=AUDIT_DETAILS)
    expect(box).to_have_count(1)
    box.get_by_text(AUDIT_DETAILS).click()
    # the tables are drawn by the rerun that opening asks for (app.ui.panels.fold)
    expect(box.get_by_test_id("stDataFrame").first).to_be_visible(timeout=APP_RUN_TIMEOUT_MS)
    wait_for_app_run(page)
    wait_for_elements(page)
    return box


def test_audit_badges_flag_the_slow_mode_and_missing_flush_and_pass_gate_base(
        page, collectors_app_server: AppServer, shots: Path) -> None:  # type: ignore[no-untyped-def]
    url = collectors_app_server.url
    open_app(page, f"{url}/stability", "?job=h200-cupti-timeline")
    main = page.get_by_test_id("stMain")
    expect(main.get_by_text("n=8192: 39/100 passed")).to_be_visible()
    expect(main.get_by_text("n=1024: 100/100 passed")).to_be_visible()
    _no_exception(page)
    wait_for_elements(page)
    page.screenshot(path=str(shots / "issue36-audit-timeline-badges.png"))
    box = _audit_details(page)
    # the summary row per config, then the flagged runs with their evidence
    expect(box).to_contain_text("39 of 100 runs passed (clock 6, population 61)")
    expect(box).to_contain_text("two modes (Ashman's D")
    _shot(page, box, shots / "issue36-audit-timeline.png")

    open_app(page, f"{url}/stability", "?job=h200-cupti-stability")
    for n in (256, 1024, 8192):
        expect(main.get_by_text(f"n={n}: 0/30 passed")).to_be_visible()
    box = _audit_details(page)
    expect(box).to_contain_text("recorded without the L2 flush")
    expect(box).to_contain_text("derived on load")
    _no_exception(page)
    _shot(page, box, shots / "issue36-audit-stability.png")

    open_app(page, f"{url}/results", "?job=h200-cupti-gate-base")
    for n in (2048, 4096, 8192):
        expect(main.get_by_text(f"n={n}: 20/20 passed")).to_be_visible()
    expect(main.get_by_text(re.compile(r"\d+/\d+ passed"))).to_have_count(3)
    box = _audit_details(page)
    expect(box).to_contain_text("20 of 20 runs passed")
    _no_exception(page)
    _full_page_screenshot(page, shots / "issue36-audit-gate-base.png")


def test_energy_is_not_said_on_sweep_and_compare_of_h200_jobs_that_never_asked(
        page, collectors_app_server: AppServer, shots: Path) -> None:  # type: ignore[no-untyped-def]
    """Neither gate job asked for the 'energy' collector: no "not recorded" on every page,
    nor twice on Compare (issue 37; it said so in issue 36's first version)."""
    url = collectors_app_server.url
    open_app(page, url, "?job=h200-cupti-gate-base")
    main = page.get_by_test_id("stMain")
    expect(main.get_by_test_id("stPlotlyChart").first).to_be_visible()
    expect(main.get_by_text("Energy per kernel")).to_have_count(0)
    expect(main.get_by_text(NOT_RECORDED)).to_have_count(0)
    _no_exception(page)

    open_app(page, f"{url}/compare",
             "?baseline=h200-cupti-gate-base&candidate=h200-cupti-gate-again")
    expect(main.get_by_test_id("stPlotlyChart").first).to_be_visible()
    expect(main.get_by_text("Energy, baseline")).to_have_count(0)
    expect(main.get_by_text(NOT_RECORDED)).to_have_count(0)
    _no_exception(page)
    _shot(page, main.get_by_test_id("stPlotlyChart").first, shots / "issue37-energy-compare.png")


def _open_options(page):  # type: ignore[no-untyped-def]
    """Open the sidebar form's Options expander; return the collectors multiselect."""
    options = get_by_key(page, "builder-options")
    expect(options).to_be_visible()
    wait_for_app_run(page)
    wait_for_elements(page)  # the sidebar's late elements move it until drawn
    options.get_by_text("Options", exact=True).click(timeout=APP_RUN_TIMEOUT_MS)
    collectors = get_by_key(page, "builder-collectors")
    expect(collectors).to_be_visible()
    wait_for_app_run(page)  # opening reruns the app: type once that run has drawn the box
    return collectors


def _in_view_and_settled(page, box) -> None:  # type: ignore[no-untyped-def]
    """Scroll ``box`` into view with the app idle, and wait for the next two frames: the
    scroll's event is dispatched by then. A click on a box below the fold scrolls the sidebar
    itself, and on a loaded machine that scroll's event came after the click had opened the
    list; react-aria closes a non-modal popover on any scroll of the box's ancestors."""
    wait_for_app_run(page)
    box.scroll_into_view_if_needed()
    page.evaluate(NEXT_TWO_FRAMES)


def _open_list(page, collectors):  # type: ignore[no-untyped-def]
    """Open the collectors multiselect's list (:func:`open_list`); return the box."""
    box = collectors.get_by_role("combobox")
    _in_view_and_settled(page, box)
    open_list(box)
    return box


def _pick(page, collectors, name: str) -> None:  # type: ignore[no-untyped-def]
    """Choose ``name`` in the collectors multiselect: its list opened, the name typed, its
    option clicked, the list closed (Escape).

    A pick is lost when the list closes under the click (a scroll of the sidebar closes it, and
    clears the typed text): the closing list stays in the page while it fades out, its options
    visible to Playwright, and the multiselect drops a choice made while its list is closed
    (CI: no tag after 60 s). So the option is clicked in an open list only, and the click is
    followed by the tag or, where the list had closed, by a closed box: then the pick is made
    again, :data:`PICK_TRIES` times at most, failing with what each try saw."""
    tag = collectors.locator("[data-tag]").filter(has_text=name)
    closed = collectors.get_by_role("combobox", expanded=False)
    seen: list[str] = []
    for _ in range(PICK_TRIES):
        box = _open_list(page, collectors)
        box.press_sequentially(name)
        choice = page.locator(OPEN_LIST).get_by_role("option").filter(
            has_text=re.compile(rf"^\s*{name} \("))
        expect(choice.or_(closed).first).to_be_visible()
        if choice.count():
            choice.click()
            expect(tag.or_(closed).first).to_be_visible()  # drawn in the click's own event
        if tag.count():
            page.keyboard.press("Escape")
            expect(tag).to_have_count(1)
            return
        seen.append(f"list closed before the pick landed (box reads {box.input_value()!r})")
    pytest.fail(f"{name} not picked in {PICK_TRIES} tries: " + "; ".join(seen))


@pytest.fixture(scope="module")
def collector_job(browser,  # type: ignore[no-untyped-def]
                  collectors_app_server: AppServer) -> Iterator[str]:
    """A cpu matmul job (n=32, 64; 3 runs) with the user collectors :data:`USER_COLLECTORS`,
    submitted from the sidebar and waited for: its job id."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        open_app(page, collectors_app_server.url)
        expect(get_by_key(page, "builder-kernels").locator("[data-tag]").first).to_be_visible()
        choose_option(page, "builder-backend", "cpu")
        collectors = _open_options(page)
        for name in USER_COLLECTORS:
            _pick(page, collectors, name)
        fill_text(page, "builder-sizes", "32, 64")
        fill_text(page, "builder-runs", 3)
        shown = JOB_ID.search(page.url)  # the job selector's first job is in the URL already
        get_by_key(page, "builder-submit").get_by_role("button").click()
        job_id = _next_job_in_url(page, shown.group(1) if shown else "")
        _wait_done(page, collectors_app_server, job_id)
        yield job_id
    finally:
        context.close()


def _next_job_in_url(page, shown: str) -> str:  # type: ignore[no-untyped-def]
    """The job id the URL names once it names another than ``shown``: the submitted job, once
    the submit's run has drawn it (CI read the old one: ``?job=`` held the bundled job the
    selector shows first, and the panel never drew a job of that id)."""
    other = re.compile(rf"[?&]job=(?!{re.escape(shown)}(?:[&#]|$))([^&#]+)")
    expect(page).to_have_url(other)
    return other.search(page.url).group(1)  # type: ignore[union-attr]


def _wait_done(page, server: AppServer, job_id: str) -> None:  # type: ignore[no-untyped-def]
    box = get_by_key(page, f"panel-job-{job_id}")
    expect(box).to_be_visible(timeout=JOB_TIMEOUT_MS)  # the panel draws it on its next tick
    expect(box).to_contain_text(FINAL, timeout=JOB_TIMEOUT_MS)
    text = box.inner_text()
    assert FINAL.search(text).group(1) == "done", (  # type: ignore[union-attr]
        f"job {job_id} did not finish done:\n{text}\nserver log: {server.log_path}")


def test_user_collectors_listed_beside_nvml_and_shown_after_a_cpu_job(
        page, collectors_app_server: AppServer, collector_job: str,
        shots: Path) -> None:  # type: ignore[no-untyped-def]
    url = collectors_app_server.url
    open_app(page, url)
    collectors = _open_options(page)
    _open_list(page, collectors)
    listed = page.locator(OPEN_LIST).get_by_role("option")
    expect(listed.filter(has_text="sm_clock (NVML, RUN)")).to_have_count(1)
    expect(listed.filter(has_text="unix_time (user, RUN)")).to_have_count(1)
    expect(listed.filter(has_text="python_version (user, ONCE)")
           ).to_have_count(1)
    listed.last.scroll_into_view_if_needed()  # the user's collectors come after the built-in
    page.screenshot(path=str(shots / "issue36-collectors-sidebar.png"))
    page.keyboard.press("Escape")

    open_app(page, f"{url}/clocks", f"?job={collector_job}")
    main = page.get_by_test_id("stMain")
    expect(main.get_by_text("Your info collectors")).to_be_visible()
    # st.dataframe's key gives no st-key class: the table is the one listing the collectors
    table = main.get_by_test_id("stDataFrame").filter(has_text="python_version")
    expect(table).to_have_count(1)
    for text in ("python_version", "ONCE", "unix_time", "RUN", "fails_on_large",
                 "host_collectors.py", "raised ValueError: cannot read n=64"):
        expect(table).to_contain_text(text)
    _no_exception(page)
    _shot(page, table, shots / "issue36-collectors-clocks.png")

    open_app(page, url, f"?job={collector_job}")  # a cpu job measures no energy: not said
    expect(main.get_by_test_id("stPlotlyChart").first).to_be_visible()
    expect(main.get_by_text(NOT_RECORDED)).to_have_count(0)


def test_cpu_job_replicated_from_the_files_page_gets_a_verdict(
        page, collectors_app_server: AppServer, collector_job: str,
        shots: Path) -> None:  # type: ignore[no-untyped-def]
    url = collectors_app_server.url
    open_app(page, f"{url}/files", f"?job={collector_job}")
    main = page.get_by_test_id("stMain")
    expect(main.get_by_text("No other done job ran this spec yet.")).to_be_visible()
    before = {p.name for p in collectors_app_server.results_dir.iterdir()}
    get_by_key(page, "files-replicate").get_by_role("button").click()
    queued = main.get_by_test_id("stAlertContentSuccess")  # the notice of the copy queued
    expect(queued).to_have_count(1)
    # the copy is the folder the click added to the store (made before the notice is drawn)
    (replica,) = {p.name for p in collectors_app_server.results_dir.iterdir()} - before
    expect(queued).to_contain_text(replica)  # the notice names it
    _wait_done(page, collectors_app_server, replica)

    open_app(page, f"{url}/files", f"?job={collector_job}")
    expect(get_by_key(page, "files-replica").get_by_role("combobox")).to_have_value(replica)
    # a cpu timing at load 8 decides no verdict in advance; each is drawn with its evidence.
    # The verdict's line names the pair (the replica against the job) and the tolerance.
    verdict = main.get_by_test_id("stMarkdownContainer").filter(has_text=replica).filter(
        has_text=collector_job).filter(has_text=f"±{R.DEFAULT_TOLERANCE_PCT:g} %")
    expect(verdict).to_be_visible()
    said = verdict.inner_text().split(":", 1)[0].strip()
    assert said in VERDICTS, verdict.inner_text()
    table = main.get_by_test_id("stDataFrame").filter(has_text="Replication")
    expect(table).to_have_count(1)
    expect(table).to_contain_text(re.compile("|".join(VERDICTS)))
    if said == "not comparable":  # the gate's context check failed: it says why
        expect(main.get_by_text(re.compile(r"^Not comparable: \w")).first).to_be_visible()
    _no_exception(page)
    _shot(page, verdict, shots / "issue36-replication-files.png")
