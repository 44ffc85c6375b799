"""In a real browser, on a server started as the README starts it (``python -m app.cli``): a
bundle file over 64 MiB (made here, in tmp: the J1 bundle with a 70 MiB extra file of random
bytes) is offered and downloads through the streamed route with its bytes and file name; the
``.ncu-rep`` inflated from the bundle's ``.ncu-rep.gz`` arrives as ``gunzip`` gives it; the zip
holds the large file; a link of another server process (an unknown token) is told why at once
(issue 26: a refused download showed nothing for 240 s). Before the route the page named the
folder to copy instead (the first test fails there: 2 refusals, no link). A download past its
tab's bound is shown queued in its tab, and starts by itself once a slot frees (issue 41: the
tab only showed it loading), also when the tab's timers never run (a background tab: browsers
run its timers late, or not at all when frozen)."""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import shutil
import socket
import subprocess
import sys
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from app.core.download_slots import MAX_SESSION_DOWNLOADS, STALE_S, DownloadSlots, Held, Queued
from app.streamlit_patches.download_route import queue_words
from tests.e2e.conftest import (APP_RUN_TIMEOUT_MS, REPO_ROOT, _stop, free_port, open_app,
                                wait_for_elements, wait_healthy)
from tests.scenarios import SCENARIOS

pytestmark = pytest.mark.e2e
JOB = "big-download"
LARGE = "nsight/large.bin"
REPORT = "nsight/ncu-output-profiled-0.ncu-rep.gz"
LARGE_BYTES = 70 * 1024**2


def _large_file(path: Path) -> str:
    """``LARGE_BYTES`` of random bytes at ``path``; their sha256."""
    digest = hashlib.sha256()
    with open(path, "wb") as fh:
        for _ in range(LARGE_BYTES // 2**20):
            chunk = os.urandom(2**20)
            digest.update(chunk)
            fh.write(chunk)
    return digest.hexdigest()


@pytest.fixture(scope="module")
def cli_server(tmp_path_factory: pytest.TempPathFactory,
               artifacts_dir: Path) -> Iterator[tuple[str, str]]:
    """``python -m app.cli`` on 127.0.0.1 with one result, ``big-download``; its URL and the
    large file's sha256."""
    base = tmp_path_factory.mktemp("cli-dashboard")
    bundle = base / "results" / JOB
    shutil.copytree(SCENARIOS / "h200-ncu-j1-fp16", bundle)
    sha = _large_file(bundle / LARGE)
    (base / "bundled").mkdir()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = dict(os.environ, KPROF_BUNDLED_DIR=str(base / "bundled"), PYTHONUNBUFFERED="1",
               PYTHONPATH=str(REPO_ROOT))
    log_path = base / "server.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "app.cli", "--results",
                                 str(base / "results"), "--port", str(port)],
                                cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        wait_healthy(proc, url, log_path)
        yield url, sha
    finally:
        _stop(proc)
        shutil.copy(log_path, artifacts_dir / "test_streamed_download-server.log")


def _row_link(page: Any, relpath: str, label: str) -> Any:
    """The link button ``label`` in the Files page's row of ``relpath``."""
    row = page.get_by_test_id("stHorizontalBlock").filter(has=page.get_by_text(relpath,
                                                                                exact=True))
    return row.get_by_role("link", name=label)


def _download(page: Any, link: Any) -> Any:
    """Click ``link`` (it opens a tab, where the download starts); the Download, whichever
    page Chromium reports it on."""
    downloads: list[Any] = []
    page.context.on("page", lambda tab: tab.on("download", lambda d: downloads.append(d)))
    page.on("download", lambda d: downloads.append(d))
    with page.context.expect_page() as tab:
        link.click()
    if not downloads:
        tab.value.wait_for_event("download")
    return downloads[0]


def test_a_file_over_64_mib_streams_with_its_bytes_and_name(
        page: Any, cli_server: tuple[str, str]) -> None:
    url, sha = cli_server
    open_app(page, f"{url}/files", f"?job={JOB}")
    wait_for_elements(page)
    expect(page.get_by_text("a download may take")).to_have_count(0)  # nothing refused
    link = _row_link(page, LARGE, "Download")
    expect(link).to_have_attribute("href", re.compile(r"/_kprof/download/[\w-]{43}$"))
    download = _download(page, link)
    assert download.suggested_filename == "nsight_large.bin"
    data = Path(download.path()).read_bytes()
    assert len(data) == LARGE_BYTES and hashlib.sha256(data).hexdigest() == sha


def test_a_download_is_sent_as_it_is_with_its_length(
        page: Any, cli_server: tuple[str, str]) -> None:
    """Not through Streamlit's gzip middleware (a stream of a file keeps its length), asked by
    the page's own browser context, as a click would."""
    url, _ = cli_server
    open_app(page, f"{url}/files", f"?job={JOB}")
    wait_for_elements(page)
    href = _row_link(page, "worker.log", "Download").get_attribute("href")
    resp = page.request.get(url + href, headers={"Accept-Encoding": "gzip"})
    log = (SCENARIOS / "h200-ncu-j1-fp16" / "worker.log").read_bytes()
    assert resp.status == 200 and "content-encoding" not in resp.headers
    assert resp.headers["content-length"] == str(len(log)) and resp.body() == log
    assert resp.headers["content-disposition"] == 'attachment; filename="worker.log"'


def test_the_inflated_report_streams(
        page: Any, cli_server: tuple[str, str]) -> None:
    url, _ = cli_server
    open_app(page, f"{url}/files", f"?job={JOB}")
    wait_for_elements(page)
    download = _download(page, _row_link(page, REPORT, "Download .ncu-rep"))
    assert download.suggested_filename == "ncu-output-profiled-0.ncu-rep"
    assert Path(download.path()).read_bytes() == gzip.decompress(
        (SCENARIOS / "h200-ncu-j1-fp16" / REPORT).read_bytes())


def test_an_unknown_link_says_why(cli_server: tuple[str, str]) -> None:
    url, _ = cli_server
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{url}/_kprof/download/{'x' * 43}", timeout=60)
    assert refused.value.code == 404
    assert "unknown or has expired" in refused.value.read().decode()


def test_the_bundle_zip_streams_with_every_file(
        page: Any, cli_server: tuple[str, str]) -> None:
    url, sha = cli_server
    open_app(page, f"{url}/files", f"?job={JOB}")
    wait_for_elements(page)
    download = _download(page, page.get_by_role("link", name="Download the whole bundle"))
    assert download.suggested_filename == f"{JOB}.zip"
    archive = zipfile.ZipFile(download.path())
    assert archive.testzip() is None
    names = set(archive.namelist())
    assert {f"{JOB}/{LARGE}", f"{JOB}/{REPORT}", f"{JOB}/manifest.json"} <= names
    assert hashlib.sha256(archive.read(f"{JOB}/{LARGE}")).hexdigest() == sha


def _slow_download(url: str, href: str) -> tuple[socket.socket, int]:
    """A slow client: it asks for ``href`` and reads the answer's head only, so its download
    holds its slots (the server waits for it to read on); its socket, and how many body bytes
    came with the head. Its receive buffer is kept small, so the 70 MiB file cannot all be
    sent into buffers meanwhile."""
    parts = urlsplit(url)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 14)
    sock.settimeout(APP_RUN_TIMEOUT_MS / 1000)
    sock.connect((parts.hostname, parts.port))
    sock.sendall(f"GET {href} HTTP/1.1\r\nHost: {parts.netloc}\r\nConnection: close\r\n\r\n"
                 .encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(1 << 12)
        assert chunk, f"the server closed the slow download before its head: {head!r}"
        head += chunk
    assert head.startswith(b"HTTP/1.1 200"), head[:300]
    return sock, len(head) - head.index(b"\r\n\r\n") - 4


def _read_to_end(sock: socket.socket, got: int) -> int:
    """The slow client reads the rest of its download; the body's length."""
    while chunk := sock.recv(1 << 20):
        got += len(chunk)
    return got


@contextmanager
def _tab_at_its_bound(page: Any, url: str) -> Iterator[tuple[Any, list[tuple[socket.socket, int]]]]:
    """The Files page of JOB open in ``page``, the large file's Download link, and the tab's
    :data:`MAX_SESSION_DOWNLOADS` downloads of it running as slow clients (closed at the end)."""
    open_app(page, f"{url}/files", f"?job={JOB}")
    wait_for_elements(page)
    link = _row_link(page, LARGE, "Download")
    slow = [_slow_download(url, link.get_attribute("href"))
            for _ in range(MAX_SESSION_DOWNLOADS)]
    try:
        yield link, slow
    finally:
        for sock, _ in slow:
            sock.close()


def _queued_at_the_tabs_bound() -> str:
    """What the queued page says of a download its tab asked for past the tab's bound, none
    queued before it: :func:`queue_words` of where a :class:`DownloadSlots` of the server's
    bounds puts it (the server's words, whatever they are)."""
    slots = DownloadSlots()
    for i in range(MAX_SESSION_DOWNLOADS):
        assert isinstance(slots.admit(f"slow-{i}", "tab", False), Held)
    queued = slots.standing("third", "tab", False)
    assert queued.ahead == 0 and queued.why is not None, queued
    return queue_words(queued)


def _starts_when_a_slot_frees(tab: Any, slow: list[tuple[socket.socket, int]], sha: str) -> Any:
    """One slow client read to its end frees a slot; the queued ``tab`` then says its turn has
    come and downloads the whole large file (checked by size and SHA-256): the download."""
    state = tab.get_by_role("status")
    with tab.expect_download(timeout=4 * APP_RUN_TIMEOUT_MS) as started:
        sock, got = slow.pop()
        assert _read_to_end(sock, got) == LARGE_BYTES  # it is done: its slot frees
    expect(state).to_have_text(queue_words(Queued(ahead=0, why=None)))  # its turn has come
    data = Path(started.value.path()).read_bytes()
    assert len(data) == LARGE_BYTES and hashlib.sha256(data).hexdigest() == sha
    return started.value


def test_a_download_past_its_tabs_bound_is_shown_queued_then_starts(
        page: Any, cli_server: tuple[str, str]) -> None:
    """The tab's two downloads are slow clients of the large file; a third click in the tab
    opens a page that says it is queued and why, not a tab that only loads; once one slow
    client finishes, the queued download starts by itself, with its bytes."""
    url, sha = cli_server
    with _tab_at_its_bound(page, url) as (link, slow):
        with page.context.expect_page() as opened:
            link.click()
        tab = opened.value
        state = tab.get_by_role("status")
        expect(state).to_have_text(_queued_at_the_tabs_bound())
        download = _starts_when_a_slot_frees(tab, slow, sha)
        assert download.suggested_filename == "nsight_large.bin"


def test_a_queued_download_starts_though_its_tabs_timers_never_run(
        page: Any, cli_server: tuple[str, str]) -> None:
    """The link opens a background tab, whose timers a browser runs late (Chrome: once a
    minute for chained ones of a page hidden 5 minutes) or not at all (a frozen page). Here no
    timer of the tab runs (Playwright's clock, paused before the click). Its page asks again
    from each answer, its ask held by the route past STALE_S keeps its place, and once a slow
    client finishes the download starts. A page that asked by ``setTimeout`` never asked."""
    url, sha = cli_server
    with _tab_at_its_bound(page, url) as (link, slow):
        now = datetime.now()
        page.clock.install(time=now)
        page.clock.pause_at(now + timedelta(seconds=30))  # a page opened from now runs no timer
        with page.context.expect_page() as opened:
            link.click()
        tab = opened.value
        state = tab.get_by_role("status")
        expect(state).to_have_text(_queued_at_the_tabs_bound())
        try:
            with tab.expect_response(lambda r: "?queue=" in r.url,
                                     timeout=2 * APP_RUN_TIMEOUT_MS) as answered:
                pass
        except PlaywrightTimeout:
            pytest.fail("the queued page's ask was never answered: with its timers stopped it "
                        "never asked, or the route never held it")
        # held by the route past STALE_S, nothing changed; the page asks again at once
        assert answered.value.json() == {"turn": False, "held": True,
                                         "message": state.text_content()}
        assert answered.value.request.timing["responseStart"] >= STALE_S * 1000
        _starts_when_a_slot_frees(tab, slow, sha)
