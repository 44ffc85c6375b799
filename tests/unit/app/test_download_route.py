"""The download route's logic (app/download_route.py), driven as the server drives it (its
Starlette route called with ASGI messages) on copies of a recorded H200 bundle: a link out of
the bundle, an unknown, expired or closed-session token and a cross-site request are refused
with a message; a ``.ncu-rep.gz`` is inflated through inflate.py into the scratch folder and
nothing of it is left once sent; a padded one says why; names and the zip are right."""

from __future__ import annotations

import asyncio
import gzip
import io
import os
import shutil
import zipfile
from pathlib import Path
from typing import Any

import pytest

from app import download_route
from app.core import download_grants
from app.core.download_grants import DownloadKind, GrantStore
from profiling_worker.bundle.inflate import scratch_dir
from tests.scenarios import SCENARIOS

SOURCE = SCENARIOS / "h200-ncu-j1-fp16"
REPORT = "nsight/ncu-output-profiled-0.ncu-rep.gz"
SESSION = "session-1"


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def grants(monkeypatch) -> tuple[GrantStore, Clock]:  # type: ignore[no-untyped-def]
    clock = Clock()
    store = GrantStore(clock=clock)
    monkeypatch.setattr(download_route, "GRANTS", store)
    monkeypatch.setattr(download_route, "_session_alive", lambda sid: sid == SESSION)
    return store, clock


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    dest = tmp_path / "results" / SOURCE.name
    shutil.copytree(SOURCE, dest)
    return dest


def get(path: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """``GET path`` through the route as uvicorn calls it: status, headers, body."""
    scope: dict[str, Any] = {
        "type": "http", "method": "GET", "path": path, "raw_path": path.encode(),
        "root_path": "", "query_string": b"", "scheme": "http", "server": ("127.0.0.1", 8501),
        "headers": [(k.lower().encode(), v.encode()) for k, v in
                    {"host": "127.0.0.1:8501", **(headers or {})}.items()]}
    sent: list[dict[str, Any]] = []
    requests = [{"type": "http.request", "body": b"", "more_body": False}]

    async def receive() -> dict[str, Any]:
        if requests:
            return requests.pop()
        await asyncio.Event().wait()  # the client stays connected until the response ends
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(download_route._route("")(scope, receive, send))  # type: ignore[arg-type]
    start = sent[0]
    head = {k.decode(): v.decode() for k, v in start["headers"]}
    return start["status"], head, b"".join(m.get("body", b"") for m in sent[1:])


def url(store: GrantStore, kind: DownloadKind, bundle: Path, relpath: str, name: str,
        session: str = SESSION) -> str:
    return download_route.PREFIX + store.grant(kind, bundle, relpath, name, session)


def test_a_file_streams_with_its_name_and_length(grants, bundle) -> None:  # type: ignore[no-untyped-def]
    store, _ = grants
    status, head, body = get(url(store, DownloadKind.FILE, bundle, "worker.log", "worker.log"))
    assert status == 200
    assert body == (bundle / "worker.log").read_bytes()
    assert head["content-disposition"] == 'attachment; filename="worker.log"'
    assert head["content-length"] == str(len(body))


def test_a_name_outside_ascii_is_percent_encoded() -> None:
    assert (download_route.content_disposition('r\u00e9sum\u00e9 "1".bin')
            == "attachment; filename*=utf-8''r%C3%A9sum%C3%A9%20%221%22.bin")


def test_a_link_out_of_the_bundle_is_refused(grants, bundle, tmp_path) -> None:  # type: ignore[no-untyped-def]
    store, _ = grants
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-outside-the-bundle")
    (bundle / "worker.log").unlink()
    os.symlink(secret, bundle / "worker.log")
    status, _, body = get(url(store, DownloadKind.FILE, bundle, "worker.log", "worker.log"))
    assert status == 404
    assert b"leads out of the bundle or is not a regular file: not served" in body
    assert b"SECRET" not in body and str(secret).encode() not in body


def test_unknown_expired_and_closed_session_tokens_are_404_with_a_message(  # type: ignore[no-untyped-def]
        grants, bundle) -> None:
    store, clock = grants
    for path in (download_route.PREFIX + "x" * 43, download_route.PREFIX + "short"):
        status, head, body = get(path)
        assert status == 404 and head["content-type"].startswith("text/plain")
        assert b"unknown or has expired" in body and b"reload the Files page" in body
    expiring = url(store, DownloadKind.FILE, bundle, "worker.log", "worker.log")
    clock.now += download_grants.GRANT_TTL_S + 1
    assert get(expiring)[0] == 404
    closed = url(store, DownloadKind.FILE, bundle, "worker.log", "worker.log", "gone-session")
    assert get(closed)[0] == 404


def test_a_page_run_renews_its_token_and_sessions_do_not_share_one(grants, bundle) -> None:  # type: ignore[no-untyped-def]
    store, clock = grants
    first = url(store, DownloadKind.FILE, bundle, "worker.log", "worker.log")
    clock.now += download_grants.GRANT_TTL_S - 1
    assert url(store, DownloadKind.FILE, bundle, "worker.log", "worker.log") == first
    clock.now += download_grants.GRANT_TTL_S - 1  # past the first TTL, inside the renewed one
    assert get(first)[0] == 200
    assert url(store, DownloadKind.FILE, bundle, "worker.log", "w", "session-2") != first


def test_a_cross_site_request_is_refused(grants, bundle) -> None:  # type: ignore[no-untyped-def]
    store, _ = grants
    link = url(store, DownloadKind.FILE, bundle, "worker.log", "worker.log")
    status, _, body = get(link, {"Sec-Fetch-Site": "cross-site"})
    assert status == 403 and b"the dashboard's own pages only" in body
    assert get(link, {"Sec-Fetch-Site": "same-origin"})[0] == 200


def _scratch_files() -> list[str]:
    return sorted(str(p) for p in scratch_dir().rglob("*"))


def _deleted_open_files() -> list[str]:
    """Files this process holds open that have no name left (the inflated report's way)."""
    links = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            links.append(os.readlink(f"/proc/self/fd/{fd}"))
        except FileNotFoundError:  # the listing's own descriptor, closed since
            continue
    return [link for link in links if link.endswith("(deleted)")]


def test_a_gz_report_is_inflated_in_scratch_and_nothing_is_left(grants, bundle) -> None:  # type: ignore[no-untyped-def]
    store, _ = grants
    before = _scratch_files(), _deleted_open_files()
    status, head, body = get(url(store, DownloadKind.INFLATED, bundle, REPORT,
                                 "ncu-output-profiled-0.ncu-rep"))
    assert status == 200
    assert body == gzip.decompress((bundle / REPORT).read_bytes())
    assert head["content-disposition"] == 'attachment; filename="ncu-output-profiled-0.ncu-rep"'
    assert (_scratch_files(), _deleted_open_files()) == before  # no name, no open file left


def test_a_padded_gz_says_why(grants, bundle) -> None:  # type: ignore[no-untyped-def]
    store, _ = grants
    zeros = io.BytesIO()
    with gzip.GzipFile(fileobj=zeros, mode="wb") as fh:
        fh.write(bytes(4 << 20))
    (bundle / REPORT).write_bytes((bundle / REPORT).read_bytes() + zeros.getvalue())
    before = _scratch_files()
    status, _, body = get(url(store, DownloadKind.INFLATED, bundle, REPORT, "r.ncu-rep"))
    assert status == 422
    assert b"not an Nsight Compute report layout" in body
    assert _scratch_files() == before


def test_inflations_beyond_the_bound_queue_and_are_told_so(grants, bundle, monkeypatch
                                                           ) -> None:  # type: ignore[no-untyped-def]
    """MAX_INFLATIONS at once (40 concurrent report downloads filled the thread pool): with
    every slot taken a download waits its turn, and past QUEUE_WAIT_S it is told to retry."""
    import threading

    store, _ = grants
    link = url(store, DownloadKind.INFLATED, bundle, REPORT, "r.ncu-rep")
    slots = download_route._INFLATIONS
    for _ in range(download_route.MAX_INFLATIONS):
        assert slots.acquire(blocking=False)
    try:
        monkeypatch.setattr(download_route, "QUEUE_WAIT_S", 0.5)
        status, head, body = get(link)
        assert status == 503 and head["retry-after"] == "60"
        assert b"inflating 2 other reports" in body and b"click the button again" in body
        monkeypatch.setattr(download_route, "QUEUE_WAIT_S", 300.0)
        answers: list[int] = []
        waiting = threading.Thread(target=lambda: answers.append(get(link)[0]))
        waiting.start()
        waiting.join(1.0)
        assert waiting.is_alive() and not answers  # queued while no slot is free
    finally:
        slots.release()  # one slot frees: the queued download goes on
    waiting.join(300)
    assert answers == [200]
    for _ in range(download_route.MAX_INFLATIONS - 1):
        slots.release()
    assert slots.acquire(blocking=False) and slots.acquire(blocking=False)  # none leaked
    slots.release()
    slots.release()


def test_the_zip_holds_every_file_of_the_bundle_and_no_link_out(  # type: ignore[no-untyped-def]
        grants, bundle, tmp_path) -> None:
    store, _ = grants
    (tmp_path / "secret.txt").write_text("SECRET-outside-the-bundle")
    os.symlink(tmp_path / "secret.txt", bundle / "nsight" / "evil.txt")
    status, head, body = get(url(store, DownloadKind.ZIP, bundle, "", f"{bundle.name}.zip"))
    assert status == 200 and head["content-type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(body))
    assert archive.testzip() is None
    expected = sorted(f"{bundle.name}/{p.relative_to(bundle)}" for p in bundle.rglob("*")
                      if p.is_file() and not p.is_symlink())
    assert sorted(archive.namelist()) == expected
    assert b"SECRET" not in body
    log = archive.read(f"{bundle.name}/worker.log")
    assert log == (bundle / "worker.log").read_bytes()


def test_the_oldest_grants_go_first_past_the_most_kept(monkeypatch, bundle) -> None:  # type: ignore[no-untyped-def]
    store = GrantStore(clock=Clock())
    monkeypatch.setattr(download_grants, "MAX_GRANTS", 3)
    tokens = [store.grant(DownloadKind.FILE, bundle, f"f{i}", "f", SESSION) for i in range(4)]
    assert store.lookup(tokens[0], lambda sid: True) is None
    assert all(store.lookup(t, lambda sid: True) for t in tokens[1:])
