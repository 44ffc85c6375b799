"""Browser test fixtures: real Streamlit servers and headless Debian Chromium.

One Chromium and one server over the recorded scenarios (``bundled_app_server``) serve every
module of ``tests/e2e`` that only reads (package scope: started once, not once per module);
the other servers start per module, with results dirs of their own.

The server runs ``python -m streamlit run app/streamlit_app.py`` on 127.0.0.1 and a free port,
with ``KPROF_RESULTS_DIR`` (and, for ``app_server``, ``KPROF_BUNDLED_DIR``) pointing at temporary
directories (``bundled_app_server`` lists the recorded H200 scenarios of ``tests/scenarios.py``;
``collectors_app_server`` the same with the user collector file of
``tests/fixtures/collector_files``; ``demo_app_server``, for the demo's own tests only, the
app's default bundled dir), and
is polled on ``/_stcore/health`` before any test uses it. Its output goes to a file, never a
PIPE (a full pipe blocks the server); the file is copied to ``tests/artifacts/`` afterwards.

Waits follow Streamlit's own ``e2e_playwright``: the ``stApp`` element's
``data-test-connection-state`` and ``data-test-script-state`` attributes, and auto-waiting
``expect`` assertions (60 s unless a test says otherwise, not Playwright's 5 s), never a bare
sleep. Chromium is the Debian package at /usr/bin/chromium
(``apt-get install chromium``), not a browser downloaded by Playwright.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import expect

# Shared with the memory benchmarks (tests/browser.py); the tests below import them from here.
from tests.browser import (APP_RUN_TIMEOUT_MS, CHROMIUM, CHROMIUM_ARGS, free_port, healthy,
                           open_app, rss_mib, wait_for_app_run)
from tests.scenarios import SCENARIOS

REPO_ROOT = Path(__file__).resolve().parents[2]
APP_SCRIPT = REPO_ROOT / "app" / "streamlit_app.py"
COLLECTOR_FILES = REPO_ROOT / "tests" / "fixtures" / "collector_files"
SERVER_START_S = 90
#: How long a click's list is waited for before ArrowDown opens it (:func:`open_list`).
OPEN_WAIT_MS = 10_000
# Playwright's `expect` gives up after 5 s unless told otherwise: a script run on a busy 2-core
# machine takes longer (CI failed so, issue 41). Every expect without its own timeout waits this.
expect.set_options(timeout=APP_RUN_TIMEOUT_MS)


@dataclass(frozen=True)
class AppServer:
    """A running dashboard: its URL and the directories it writes to."""

    url: str
    results_dir: Path
    log_path: Path
    pid: int = 0  # the server process (0: not known)


def wait_healthy(proc: subprocess.Popen[bytes], url: str, log_path: Path) -> None:
    """Poll ``url``'s health probe until it answers; fail with the server's log when the
    server exits or :data:`SERVER_START_S` pass."""
    deadline = time.monotonic() + SERVER_START_S
    while not healthy(url):
        if proc.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"Streamlit did not become healthy at {url} "
                        f"(exit code {proc.poll()}):\n{log_path.read_text()[-4000:]}")
        time.sleep(0.25)  # polling interval of the health probe, not a correctness wait


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)  # the server and any worker it started
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)


def _serve(request: pytest.FixtureRequest, base: Path, artifacts_dir: Path,
           bundled: Path | None, console_script: bool = False,
           kernel_dirs: Path | None = None) -> Iterator[AppServer]:
    """Run the dashboard with results under ``base``; ``bundled=None`` keeps the app's default
    bundled dir (the demo bundles it ships). ``console_script``: started as the README does
    (``kernel-dashboard``, i.e. ``python -m app.cli``: its own routes and page shell) instead
    of a plain ``streamlit run``. ``kernel_dirs``: a folder of user kernel and collector files
    (``KPROF_KERNEL_DIRS``; default: none)."""
    results = base / "results"
    results.mkdir()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = dict(os.environ, KPROF_RESULTS_DIR=str(results), PYTHONUNBUFFERED="1")
    env.pop("KPROF_BUNDLED_DIR", None)
    env.pop("KPROF_KERNEL_DIRS", None)
    if kernel_dirs is not None:
        env["KPROF_KERNEL_DIRS"] = str(kernel_dirs)
    if bundled is not None:
        env["KPROF_BUNDLED_DIR"] = str(bundled)
    log_path = base / "server.log"
    flags = ["--server.headless", "true", "--server.fileWatcherType", "none",
             "--browser.gatherUsageStats", "false"]
    cmd = ([sys.executable, "-m", "app.cli", "--results", str(results), "--port", str(port),
            *flags] if console_script else
           [sys.executable, "-m", "streamlit", "run", str(APP_SCRIPT), "--server.address",
            "127.0.0.1", "--server.port", str(port), *flags])
    with log_path.open("wb") as log:
        proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        wait_healthy(proc, url, log_path)
        yield AppServer(url=url, results_dir=results, log_path=log_path, pid=proc.pid)
    finally:
        _stop(proc)
        owner = (request.fixturename if request.scope == "package"
                 else request.module.__name__.rsplit(".", 1)[-1])
        shutil.copy(log_path, artifacts_dir / f"{owner}-server.log")


def _require_app() -> None:
    if not APP_SCRIPT.is_file():
        pytest.fail(f"{APP_SCRIPT.relative_to(REPO_ROOT)} does not exist yet")


@pytest.fixture(scope="module")
def app_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
               artifacts_dir: Path) -> Iterator[AppServer]:
    """Start the dashboard for one test module with empty results and bundled dirs; stop it
    (and its workers) afterwards."""
    _require_app()
    base = tmp_path_factory.mktemp("dashboard")
    bundled = base / "bundled"
    bundled.mkdir()
    yield from _serve(request, base, artifacts_dir, bundled)


@pytest.fixture(scope="package")
def bundled_app_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                       artifacts_dir: Path) -> Iterator[AppServer]:
    """The dashboard with an empty results dir and the recorded H200 scenarios as its bundled
    dir (``tests/fixtures/bundles``): with no GPU here it opens the results of this project's
    worker. Shared by the modules of ``tests/e2e`` (one start, not one per module): a test that
    writes a job into its results dir (a run, an import) would change the default job of the
    others' pages, so such a module uses :func:`own_bundled_app_server`."""
    _require_app()
    yield from _serve(request, tmp_path_factory.mktemp("dashboard"), artifacts_dir, SCENARIOS)


@pytest.fixture(scope="module")
def own_bundled_app_server(request: pytest.FixtureRequest,
                           tmp_path_factory: pytest.TempPathFactory,
                           artifacts_dir: Path) -> Iterator[AppServer]:
    """:func:`bundled_app_server` for one module, whose tests write jobs into its results dir."""
    _require_app()
    yield from _serve(request, tmp_path_factory.mktemp("dashboard"), artifacts_dir, SCENARIOS)


@pytest.fixture(scope="module")
def collectors_app_server(request: pytest.FixtureRequest,
                          tmp_path_factory: pytest.TempPathFactory,
                          artifacts_dir: Path) -> Iterator[AppServer]:
    """:func:`bundled_app_server` with the user collector file of
    ``tests/fixtures/collector_files`` (``KPROF_KERNEL_DIRS``) offered in the sidebar."""
    _require_app()
    yield from _serve(request, tmp_path_factory.mktemp("dashboard"), artifacts_dir, SCENARIOS,
                      kernel_dirs=COLLECTOR_FILES)


@pytest.fixture(scope="module")
def cli_app_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                   artifacts_dir: Path) -> Iterator[AppServer]:
    """:func:`bundled_app_server` started as the README starts the dashboard (``python -m
    app.cli``)."""
    _require_app()
    yield from _serve(request, tmp_path_factory.mktemp("dashboard"), artifacts_dir, SCENARIOS,
                      console_script=True)


@pytest.fixture(scope="module")
def demo_app_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                    artifacts_dir: Path) -> Iterator[AppServer]:
    """The dashboard with its default bundled dir, the demo bundles it ships: for the demo's own
    tests only (``tests.scenarios.DEMO_TESTS``)."""
    _require_app()
    yield from _serve(request, tmp_path_factory.mktemp("dashboard"), artifacts_dir, None)


@pytest.fixture(scope="package")
def browser() -> Iterator[object]:
    """Headless Debian Chromium, launched once for ``tests/e2e`` (each test gets a context of
    its own: :func:`page`). Missing Chromium fails under CI=true and skips elsewhere."""
    if not Path(CHROMIUM).exists():
        msg = f"{CHROMIUM} not found: apt-get install -y chromium (or set CHROMIUM=/path)"
        if os.environ.get("CI") == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    """A fresh page (1400x1000) in a fresh context."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})  # type: ignore[attr-defined]
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        yield page
    finally:
        context.close()


# ---- helpers: each returns a Locator or waits on the app, never on the clock ----

def wait_for_elements(page, timeout: int = APP_RUN_TIMEOUT_MS) -> None:  # type: ignore[no-untyped-def]
    """Wait until no element is still a loading skeleton: after a run ends, elements whose
    frontend code is loaded lazily (download buttons, data frames ...) show ``stSkeleton``
    placeholders for a moment."""
    expect(page.get_by_test_id("stSkeleton")).to_have_count(0, timeout=timeout)


#: How much of a page's first chart (px: its title and the top of its plot) must be inside the
#: window for the chart to count as in sight (:func:`in_sight`).
IN_SIGHT_PX = 100


def first_chart(page, url: str, query: str = ""):  # type: ignore[no-untyped-def]
    """Open ``url`` + ``query`` (:func:`open_app`), wait for the main area's first chart to be
    visible and for no loading skeleton (:func:`wait_for_elements`, which can move it down);
    the chart's Locator, for :func:`in_sight` of its ``bounding_box()``."""
    open_app(page, url, query)
    chart = page.get_by_test_id("stMain").get_by_test_id("stPlotlyChart").first
    expect(chart).to_be_visible()
    wait_for_elements(page)
    return chart


def in_sight(box: dict[str, float] | None, height: int) -> bool:
    """Whether a chart whose bounding box is ``box`` (px; None: not laid out) has its top
    :data:`IN_SIGHT_PX` px inside a window ``height`` px high, the page not scrolled."""
    return box is not None and box["y"] + IN_SIGHT_PX <= height


def get_by_key(page, key: str):  # type: ignore[no-untyped-def]
    """The element of a widget or container made with ``key=key`` (class ``st-key-<key>``)."""
    return page.locator(f".st-key-{key}")


def fill_text(page, key: str, value: object) -> None:  # type: ignore[no-untyped-def]
    """Type into a text or number input (inside a form nothing reruns until submit)."""
    box = get_by_key(page, key).locator("input, textarea").first
    box.fill(str(value))
    box.press("Tab")  # commit the value (blur), as a user leaving the field would


def choose_option(page, key: str, option: str) -> None:  # type: ignore[no-untyped-def]
    """Pick ``option`` in a selectbox, or click it in a radio group."""
    widget = get_by_key(page, key)
    # A widget kind's first use loads its JavaScript: until then the keyed element is a
    # visible placeholder with neither a radio group nor a combobox in it.
    expect(widget.locator("[data-testid=stRadio], [role=combobox]").first).to_be_attached()
    if widget.get_by_test_id("stRadio").count():
        widget.get_by_text(option, exact=True).click()
        return
    pattern = re.compile(rf"^\s*{re.escape(option)}\b")
    choice = page.get_by_role("option").filter(has_text=pattern).first
    for _ in range(3):  # a click during a rerun can land before the list opens: open it again
        widget.get_by_role("combobox").click()  # streamlit >= 1.6x: react-aria ComboBox
        try:
            expect(choice).to_be_visible(timeout=10_000)
            break
        except AssertionError:
            page.keyboard.press("Escape")
    choice.click()
    expect(widget.get_by_role("combobox")).to_have_value(pattern)


def open_list(box) -> None:  # type: ignore[no-untyped-def]
    """Open the list of a selectbox's or multiselect's ``box`` (its combobox) as a user does.

    A click on the box opens it, but the CI beside a CPU hog once saw the click focus the box
    and leave it closed for 60 s (``aria-expanded="false"``, ``data-focused="true"``). So when
    the click's list has not opened in :data:`OPEN_WAIT_MS`, ArrowDown, react-aria's keyboard
    way to open a ComboBox's list, opens it from the focused box.

    Raises:
        AssertionError: the list is still closed after ArrowDown (the default timeout).
    """
    box.click()
    try:
        expect(box).to_have_attribute("aria-expanded", "true", timeout=OPEN_WAIT_MS)
    except AssertionError:
        box.press("ArrowDown")
        expect(box).to_have_attribute("aria-expanded", "true")


def set_checkbox(page, key: str, checked: bool) -> None:  # type: ignore[no-untyped-def]
    """Tick (``checked=True``) or clear an ``st.checkbox`` made with ``key=key``, as a user does:
    a click on its label, then the app's run. A click that lands while the app reruns can be
    lost (the element is replaced under the pointer; Playwright's ``check()`` then fails with
    "Clicking the checkbox did not change its state"), so the box is read back after each run
    and clicked again only while it still shows the other state (3 clicks at most)."""
    widget = get_by_key(page, key)
    box = widget.get_by_role("checkbox")
    for _ in range(3):
        wait_for_app_run(page)
        if box.is_checked() == checked:
            break
        widget.get_by_test_id("stCheckbox").locator("label").first.click()
        try:
            expect(box).to_be_checked(checked=checked, timeout=10_000)
        except AssertionError:
            continue  # lost in a rerun: read it again once the app is idle
    wait_for_app_run(page)
    expect(box).to_be_checked(checked=checked)


def selected_tags(page, key: str) -> list[str]:  # type: ignore[no-untyped-def]
    """The labels shown as tags in a multiselect."""
    tags = get_by_key(page, key).get_by_test_id("stMultiSelectTagsContainer").locator("[data-tag]")
    return tags.all_inner_texts()
