"""The download route's logic (app/streamlit_patches/download_route.py), driven as the server drives it (its
Starlette route called with ASGI messages) on copies of a recorded H200 bundle: a link out of
the bundle, an unknown, expired or closed-session token and a cross-site request are refused
with a message; a ``.ncu-rep.gz`` is inflated through inflate.py into the scratch folder and
nothing of it is left once sent; a padded one says why; names and the zip are right; downloads
beyond the per-server, per-session and inflation bounds are queued and told so at once (which
bound holds them, how many wait before them), start in turn, and a new one never overtakes one
queued before it; a queued page's ask is held open (a long poll: no timer of the page needs to
run) and keeps its download's place past STALE_S until its turn, a client that leaves it drops
the download at once, a tab holds at most two; a client that leaves stops the inflation and
frees its file and slots."""

from __future__ import annotations

import asyncio
import gzip
import io
import json
import os
import re
import shutil
import threading
import zipfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from app.streamlit_patches import download_route
from app.core import download_grants
from app.core.download_grants import DownloadKind, GrantStore
from app.core import download_slots
from app.core.download_slots import DownloadSlots, Held
from profiling_worker.bundle import inflate
from profiling_worker.bundle.inflate import scratch_dir
from profiling_worker.bundle.writer import table_csv
from tests.scenarios import SCENARIOS

SOURCE = SCENARIOS / "h200-ncu-j1-fp16"
REPORT = "nsight/ncu-output-profiled-0.ncu-rep.gz"
SESSION = "session-1"
OTHER = "session-2"
#: Bound on every wait for an event (a busy 2-core CI machine): generous, then a message.
WAIT_S = 120.0


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
    monkeypatch.setattr(download_route, "_session_alive", lambda sid: sid in (SESSION, OTHER))
    return store, clock


@pytest.fixture
def queue_clock() -> Clock:
    """The clock of the download queue (``slots``)."""
    return Clock()


@pytest.fixture
def slots(monkeypatch, queue_clock: Clock) -> DownloadSlots:  # type: ignore[no-untyped-def]
    """The route's slots, fresh for the test, on ``queue_clock``."""
    fresh = DownloadSlots(clock=queue_clock)
    monkeypatch.setattr(download_route, "SLOTS", fresh)
    return fresh


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    dest = tmp_path / "results" / SOURCE.name
    shutil.copytree(SOURCE, dest)
    return dest


Leave = Callable[[list[dict[str, Any]]], Awaitable[None]]


def get(path: str, headers: dict[str, str] | None = None, leave: Leave | None = None
        ) -> tuple[int, dict[str, str], bytes]:
    """``GET path`` through the route as uvicorn calls it: status, headers, body. The client
    stays until the response ends, or, with ``leave``, closes its connection once ``leave``
    (given the messages sent so far) returns."""
    path, _, query = path.partition("?")
    scope: dict[str, Any] = {
        "type": "http", "method": "GET", "path": path, "raw_path": path.encode(),
        "root_path": "", "query_string": query.encode(), "scheme": "http",
        "server": ("127.0.0.1", 8501),
        "headers": [(k.lower().encode(), v.encode()) for k, v in
                    {"host": "127.0.0.1:8501", **(headers or {})}.items()]}
    sent: list[dict[str, Any]] = []
    requests = [{"type": "http.request", "body": b"", "more_body": False}]

    async def receive() -> dict[str, Any]:
        if requests:
            return requests.pop()
        if leave is None:
            await asyncio.Event().wait()  # the client stays connected until the response ends
        else:
            await leave(sent)
        return {"type": "http.disconnect"}

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


def test_a_csv_is_made_from_its_parquet_file_on_download(  # type: ignore[no-untyped-def]
        grants, bundle) -> None:
    """Issue 40: a bundle holds each table's Parquet file only; its CSV is made on download."""
    store, _ = grants
    assert not (bundle / "tables" / "runs.csv").exists()
    status, head, body = get(url(store, DownloadKind.CSV, bundle, "tables/runs.csv",
                                 "tables_runs.csv"))
    assert status == 200 and body == table_csv(bundle, "runs")
    assert head["content-length"] == str(len(body))
    assert head["content-disposition"] == 'attachment; filename="tables_runs.csv"'
    (bundle / "tables" / "runs.parquet").write_bytes(b"not parquet")
    status, _, body = get(url(store, DownloadKind.CSV, bundle, "tables/runs.csv", "x.csv"))
    assert status == 422 and b"tables/runs.csv: not made, its table cannot be read" in body
    status, _, _ = get(url(store, DownloadKind.CSV, bundle, "tables/nope.csv", "x.csv"))
    assert status == 404


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


def _running(slots: DownloadSlots, taken: list[tuple[str, bool]]) -> list[Held]:
    """Downloads started, one per ``(session, inflating)``, each of its own link."""
    held = [slots.admit(f"running-{i}", sid, inflating) for i, (sid, inflating) in
            enumerate(taken)]
    assert all(isinstance(h, Held) for h in held), held
    return held  # type: ignore[return-value]


def _standing(link: str) -> dict[str, Any]:
    """The queued page's question: where the download of ``link`` stands (JSON)."""
    status, head, body = get(link + "?queue")
    assert status == 200 and head["content-type"] == "application/json", (status, body)
    return json.loads(body)  # type: ignore[no-any-return]


def _queued_page(link: str) -> str:
    """The page a queued download of ``link`` is answered with at once."""
    status, head, body = get(link)
    assert status == 503 and head["retry-after"] == "1", (status, body[:300])
    assert head["content-type"].startswith("text/html") and head["cache-control"] == "no-store"
    page = body.decode()
    nonce = re.search(r"script-src 'nonce-([\w-]+)'", head["content-security-policy"])
    assert nonce and f'<script nonce="{nonce.group(1)}">' in page  # only its own script runs
    return page


@pytest.mark.parametrize(("kind", "taken", "told"), [
    (DownloadKind.INFLATED, [(OTHER, True)] * 2, "the server is already inflating 2 reports for downloads"),
    (DownloadKind.FILE, [(SESSION, False)] * 2, "this tab already has 2 downloads running"),
    (DownloadKind.FILE, [(f"s{i}", False) for i in range(8)],
     "the server is already sending 8 downloads"),
])
def test_downloads_beyond_a_bound_are_queued_told_which_and_start_in_turn(  # type: ignore[no-untyped-def]
        grants, bundle, slots, kind, taken, told) -> None:
    """Per server (8 downloads, 2 inflations) and per session (2): 40 concurrent report
    downloads filled the server's thread pool (issue 41), and a download that waited showed its
    tab loading, nothing more. Past every bound it is answered at once with a page that says
    it is queued, which bound holds it and how many wait before it, and asks where it stands;
    once a slot frees its turn comes and the link starts the download."""
    store, _ = grants
    relpath = REPORT if kind is DownloadKind.INFLATED else "worker.log"
    link = url(store, kind, bundle, relpath, "r<1>.bin")
    held = _running(slots, taken)
    page = _queued_page(link)
    assert (f"Queued: {told}, and no download was queued before it. It starts by itself when "
            "its turn comes" in page), page
    assert "<h1>r&lt;1&gt;.bin</h1>" in page  # the file's name, escaped
    assert _standing(link) == {"turn": False, "held": True, "message": (
        f"Queued: {told}, and no download was queued before it. It starts by itself when its "
        "turn comes: keep this tab open (closing it leaves the queue).")}
    assert slots.waiting() == 1 and slots.running() == len(taken)
    slots.give_back(held.pop())  # one slot frees: its turn
    answer = _standing(link)
    assert answer["turn"] and "Its turn has come: the download starts now" in answer["message"]
    status, _, body = get(link)
    whole = (bundle / relpath).read_bytes()
    assert status == 200 and body == (gzip.decompress(whole) if kind is DownloadKind.INFLATED
                                      else whole)
    for one in held:
        slots.give_back(one)
    assert slots.running() == 0 and slots.waiting() == 0  # none leaked, none left waiting


def test_a_new_download_does_not_overtake_one_queued_before_it(  # type: ignore[no-untyped-def]
        grants, bundle, slots) -> None:
    """The server's 8 slots taken; a download of this tab is queued; a slot frees; another
    tab's new click is queued behind it, told why, and starts once the first has had its turn
    and is done."""
    store, _ = grants
    first = url(store, DownloadKind.FILE, bundle, "worker.log", "worker.log")
    later = url(store, DownloadKind.FILE, bundle, "manifest.json", "manifest.json", OTHER)
    held = _running(slots, [(f"s{i}", False) for i in range(8)])
    _queued_page(first)
    slots.give_back(held.pop())
    assert "a download queued before it goes first, and 1 download queued before it waits " \
           "too" in _queued_page(later)
    assert get(first)[0] == 200  # its turn, its download sent in full, its slot free again
    assert get(later)[0] == 200
    for one in held:
        slots.give_back(one)
    assert slots.running() == 0 and slots.waiting() == 0


def test_a_queued_download_whose_page_stopped_asking_is_forgotten(  # type: ignore[no-untyped-def]
        grants, bundle, slots, queue_clock) -> None:
    """Its tab closed: past STALE_S without a question it holds no later download back."""
    store, _ = grants
    gone = url(store, DownloadKind.FILE, bundle, "worker.log", "worker.log")
    held = _running(slots, [(f"s{i}", False) for i in range(8)])
    _queued_page(gone)
    slots.give_back(held.pop())
    queue_clock.now += download_slots.STALE_S + 1
    assert get(url(store, DownloadKind.FILE, bundle, "manifest.json", "m", OTHER))[0] == 200
    assert slots.waiting() == 0
    for one in held:
        slots.give_back(one)


def test_a_held_ask_keeps_its_download_present_past_stale_s(queue_clock) -> None:  # type: ignore[no-untyped-def]
    """Its page's ask held open (the long poll: a hidden tab's timers may not run), the download
    keeps its place however long the queue's clock runs; once answered it has STALE_S to ask
    again, then it is forgotten."""
    slots = DownloadSlots(clock=queue_clock)
    held = _running(slots, [(f"s{i}", False) for i in range(8)])
    ask = slots.hold("first", SESSION, False)
    assert ask.held
    queue_clock.now += 10 * download_slots.STALE_S
    assert slots.standing("later", OTHER, False).ahead == 1  # still first in line
    slots.give_back(held.pop())
    assert slots.standing("later", OTHER, False).why == "a download queued before it goes first"
    assert slots.where(ask).why is None  # its turn
    slots.release(ask, left=False)  # answered: its page has STALE_S to come for it
    queue_clock.now += download_slots.STALE_S + 1
    assert slots.standing("later", OTHER, False) == download_slots.Queued(0, None)
    assert slots.waiting() == 1  # "first" forgotten, "later" alone
    for one in held:
        slots.give_back(one)


def test_a_held_ask_whose_client_leaves_forgets_its_download_at_once(queue_clock) -> None:  # type: ignore[no-untyped-def]
    """Its tab closed while its ask was held: gone at once, no STALE_S to wait; but a reloaded
    page (its link asked for again before the old page's ask is dropped) keeps its place."""
    slots = DownloadSlots(clock=queue_clock)
    held = _running(slots, [(f"s{i}", False) for i in range(8)])
    gone, reloaded = slots.hold("gone", SESSION, False), slots.hold("reloaded", OTHER, False)
    assert slots.standing("later", "session-3", False).ahead == 2
    assert isinstance(slots.admit("reloaded", OTHER, False), download_slots.Queued)
    slots.release(gone, left=True)
    slots.release(reloaded, left=True)
    assert slots.standing("later", "session-3", False).ahead == 1  # only "reloaded" before it
    for one in held:
        slots.give_back(one)


def test_the_server_holds_at_most_max_held_asks_whatever_the_tabs(  # type: ignore[no-untyped-def]
        queue_clock) -> None:
    """Each held ask keeps one of the browser's 6 connections to the server, for all its tabs,
    and the server cannot tell tabs of one browser apart: six tabs asking at once (a thread
    each, let go together) get MAX_HELD_ASKS held asks between them, the first two of the
    queue; the others are answered at once (their pages ask after POLL_S). Per tab, all six
    were held. Once the first leaves, the next in line holds its next ask."""
    slots = DownloadSlots(downloads=1, clock=queue_clock)
    held = _running(slots, [("running", False)])  # the server is full: every ask waits
    tabs = [f"tab-{i}" for i in range(6)]
    go, asked = threading.Barrier(len(tabs)), {}

    def ask(tab: str) -> None:
        go.wait(timeout=60)
        asked[tab] = slots.hold(f"{tab}-link", tab, False)

    threads = [threading.Thread(target=ask, args=(tab,)) for tab in tabs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(asked) == len(tabs), f"asks answered: {sorted(asked)} (a thread hung)"
    cap = download_slots.MAX_HELD_ASKS
    order = sorted(asked.values(), key=lambda a: slots.where(a).ahead)
    assert [a.held for a in order] == [True] * cap + [False] * (len(tabs) - cap)
    first, waiting = order[0], order[cap]
    slots.release(first, left=True)  # its tab closed: forgotten at once
    assert slots.where(waiting).ahead == cap - 1
    assert slots.hold(waiting.token, waiting.session_id, False).held
    for one in held:
        slots.give_back(one)


def _stays_after(meanwhile: Callable[[], None], leaves: bool = False) -> Leave:
    """A client that, once the route holds its ask (it waits for the client to leave), lets
    ``meanwhile`` run, then stays or, with ``leaves``, closes its connection."""
    async def hold_on(sent: list[dict[str, Any]]) -> None:
        await asyncio.to_thread(meanwhile)  # it may ask the route too, which runs its own loop
        if not leaves:
            await asyncio.Event().wait()

    return hold_on


def _held_ask(link: str, shown: str, meanwhile: Callable[[], None], leaves: bool = False
              ) -> dict[str, Any]:
    """The page's ask of ``link`` (showing ``shown``) through the route, its client as
    :func:`_stays_after` says. The answer (JSON)."""
    status, head, body = get(f"{link}?queue={quote(shown)}",
                             leave=_stays_after(meanwhile, leaves))
    assert status == 200 and head["cache-control"] == "no-store", (status, body)
    return json.loads(body)  # type: ignore[no-any-return]


def test_a_held_ask_is_answered_when_its_turn_comes_past_stale_s(  # type: ignore[no-untyped-def]
        grants, bundle, slots, queue_clock) -> None:
    """The long poll: the ask waits in the route (on the event loop, no thread) while the
    queue's clock runs past STALE_S, and is answered when a slot frees: its turn."""
    store, _ = grants
    link = url(store, DownloadKind.FILE, bundle, "worker.log", "worker.log")
    held = _running(slots, [(f"s{i}", False) for i in range(8)])
    shown = re.search(r'role="status">([^<]+)<', _queued_page(link)).group(1)  # type: ignore[union-attr]

    def later_a_slot_frees() -> None:
        queue_clock.now += download_slots.STALE_S + 1
        assert get(url(store, DownloadKind.FILE, bundle, "m", "m", OTHER))[0] == 503  # behind it
        slots.give_back(held.pop())

    answer = _held_ask(link, shown, later_a_slot_frees)
    assert answer["turn"] and answer["held"], answer
    assert get(link)[0] == 200  # its place was kept: it goes before the other session's
    for one in held:
        slots.give_back(one)


def test_a_held_ask_is_answered_when_its_words_change(  # type: ignore[no-untyped-def]
        grants, bundle, slots) -> None:
    """The tab of the download queued before it is closed while their asks are held: the page
    is told at once that none waits before it now (its turn has not come: the server is full)."""
    store, _ = grants
    first = url(store, DownloadKind.FILE, bundle, "worker.log", "worker.log")
    link = url(store, DownloadKind.FILE, bundle, "manifest.json", "manifest.json", OTHER)
    held = _running(slots, [(f"s{i}", False) for i in range(8)])
    firsts = _standing(first)["message"]
    shown = _standing(link)["message"]
    assert "1 download queued before it waits too" in shown

    def first_tab_closes() -> None:
        _held_ask(first, firsts, lambda: None, leaves=True)

    answer = _held_ask(link, shown, first_tab_closes)
    assert answer == {"turn": False, "held": True, "message": (
        "Queued: the server is already sending 8 downloads, and no download was queued before "
        "it. It starts by itself when its turn comes: keep this tab open (closing it leaves the "
        "queue).")}
    for one in held:
        slots.give_back(one)


def test_a_held_ask_is_answered_after_hold_s_and_its_client_leaving_drops_it(  # type: ignore[no-untyped-def]
        grants, bundle, slots, queue_clock) -> None:
    """Nothing changes: answered after HOLD_S on the queue's clock with the same words (the
    page asks again at once). Its client leaves while it is held: forgotten at once."""
    store, _ = grants
    link = url(store, DownloadKind.FILE, bundle, "worker.log", "worker.log")
    held = _running(slots, [(f"s{i}", False) for i in range(8)])
    shown = _standing(link)["message"]

    def hold_s_passes() -> None:
        queue_clock.now += download_route.HOLD_S

    assert _held_ask(link, shown, hold_s_passes) == {"turn": False, "message": shown,
                                                       "held": True}
    assert slots.waiting() == 1
    _held_ask(link, shown, lambda: None, leaves=True)
    assert slots.waiting() == 0
    for one in held:
        slots.give_back(one)


def test_a_held_ask_whose_dashboard_tab_closes_is_refused_at_once(  # type: ignore[no-untyped-def]
        grants, bundle, slots, monkeypatch) -> None:
    """Its links go with the dashboard's session: the held ask is answered 404 with why (the
    page then shows the link's refusal), not after HOLD_S."""
    store, _ = grants
    link = url(store, DownloadKind.FILE, bundle, "worker.log", "worker.log")
    held = _running(slots, [(f"s{i}", False) for i in range(8)])
    shown = _standing(link)["message"]
    open_sessions = {SESSION}
    monkeypatch.setattr(download_route, "_session_alive", lambda sid: sid in open_sessions)
    status, _, body = get(f"{link}?queue={quote(shown)}",
                          leave=_stays_after(lambda: open_sessions.clear()))
    assert status == 404 and b"unknown or has expired" in body, (status, body)
    for one in held:
        slots.give_back(one)


def test_a_session_under_its_bound_is_not_held_by_another_sessions_downloads(  # type: ignore[no-untyped-def]
        grants, bundle, slots) -> None:
    """Nor by another session's download queued for its own tab's bound."""
    store, _ = grants
    _running(slots, [(OTHER, False)] * 2)
    _queued_page(url(store, DownloadKind.FILE, bundle, "worker.log", "worker.log", OTHER))
    assert get(url(store, DownloadKind.FILE, bundle, "worker.log", "worker.log"))[0] == 200
    assert slots.running() == 2 and slots.waiting() == 1


def test_a_client_that_leaves_stops_the_inflation_and_its_temp_file_goes(  # type: ignore[no-untyped-def]
        grants, bundle, slots, monkeypatch) -> None:
    """The work ends with its client (issue 41: inflations went on after 40 clients left, with
    up to 1.4 GB of temporary files): the client leaves after the first MiB-chunk (64 KiB here)
    is inflated; the next chunk ends it, nothing is left and the slots are free."""
    store, _ = grants
    monkeypatch.setattr(inflate, "_CHUNK", 64 << 10)
    stops: list[threading.Event] = []
    inflating, fed = threading.Event(), [0]
    open_download, feed = download_route.open_download, inflate.ReportWalk.feed

    def spied(grant, stop=None):  # type: ignore[no-untyped-def]
        stops.append(stop)
        return open_download(grant, stop)

    def slow_feed(walk, chunk: bytes) -> None:  # type: ignore[no-untyped-def]
        fed[0] += 1
        inflating.set()
        assert stops[0].wait(WAIT_S), "the route never stopped the inflation"
        feed(walk, chunk)

    async def leave_once_inflating(sent: list[dict[str, Any]]) -> None:
        assert await asyncio.to_thread(inflating.wait, WAIT_S), "the inflation never started"

    monkeypatch.setattr(download_route, "open_download", spied)
    monkeypatch.setattr(inflate.ReportWalk, "feed", slow_feed)
    before = _scratch_files(), _deleted_open_files()
    status, _, body = get(url(store, DownloadKind.INFLATED, bundle, REPORT, "r.ncu-rep"),
                          leave=leave_once_inflating)
    assert status == 422 and b"inflation stopped after 65,536 bytes" in body, body
    assert fed[0] == 1  # of the report's 11 chunks
    assert (_scratch_files(), _deleted_open_files()) == before
    assert slots.running() == 0


@pytest.mark.parametrize("after_body", [True, False], ids=["after-a-chunk", "at-the-start"])
def test_a_client_that_leaves_mid_stream_frees_the_file_and_slots(  # type: ignore[no-untyped-def]
        grants, bundle, slots, monkeypatch, after_body) -> None:
    """Left after the first chunk, or as soon as the response started (its body maybe never
    read): either way the unnamed inflated file is closed and the slots are free."""
    store, _ = grants
    monkeypatch.setattr(download_route, "_CHUNK", 64 << 10)

    async def leave(sent: list[dict[str, Any]]) -> None:
        while not (any(m.get("body") for m in sent) if after_body else sent):
            await asyncio.sleep(0)  # the stream's next step, not a fixed time

    before = _deleted_open_files()
    status, _, body = get(url(store, DownloadKind.INFLATED, bundle, REPORT, "r.ncu-rep"),
                          leave=leave)
    whole = gzip.decompress((bundle / REPORT).read_bytes())
    assert status == 200 and len(body) < len(whole)
    assert _deleted_open_files() == before  # the unnamed inflated file is closed
    assert slots.running() == 0


def test_the_zip_holds_every_file_of_the_bundle_and_no_link_out(  # type: ignore[no-untyped-def]
        grants, bundle, tmp_path) -> None:
    store, _ = grants
    (tmp_path / "secret.txt").write_text("SECRET-outside-the-bundle")
    os.symlink(tmp_path / "secret.txt", bundle / "nsight" / "evil.txt")
    status, head, body = get(url(store, DownloadKind.ZIP, bundle, "", f"{bundle.name}.zip"))
    assert status == 200 and head["content-type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(body))
    assert archive.testzip() is None
    files = [p.relative_to(bundle) for p in bundle.rglob("*")
             if p.is_file() and not p.is_symlink()]
    made = [f.with_suffix(".csv") for f in files if f.suffix == ".parquet"]  # issue 40
    assert made and not [f for f in files if f.parent.name == "tables" and f.suffix == ".csv"]
    assert sorted(archive.namelist()) == sorted(f"{bundle.name}/{f}" for f in files + made)
    assert b"SECRET" not in body
    log = archive.read(f"{bundle.name}/worker.log")
    assert log == (bundle / "worker.log").read_bytes()


def test_the_oldest_grants_go_first_past_the_most_kept(monkeypatch, bundle) -> None:  # type: ignore[no-untyped-def]
    store = GrantStore(clock=Clock())
    monkeypatch.setattr(download_grants, "MAX_GRANTS", 3)
    tokens = [store.grant(DownloadKind.FILE, bundle, f"f{i}", "f", SESSION) for i in range(4)]
    assert store.lookup(tokens[0], lambda sid: True) is None
    assert all(store.lookup(t, lambda sid: True) for t in tokens[1:])
