"""The download route: ``GET /_kprof/download/<token>`` streams a bundle file, the inflated
``.ncu-rep`` of a ``.ncu-rep.gz``, a table's CSV made from its Parquet file or the bundle's zip
from disk, 1 MiB at a time, so a download
costs the server a few MiB whatever its size (``st.download_button`` reads its bytes whole into
Streamlit's media store: docs/performance.md). ``kernel-dashboard`` adds it before the server
starts (:func:`install`); a bare ``streamlit run`` has none and the Files page keeps its
in-memory buttons, capped at 64 MiB (:func:`serving` tells which).

A request is served only when its token (``app.core.download_grants``) is known, unexpired and
its session still open; it comes from the dashboard's own pages (``Sec-Fetch-Site`` is
``same-origin`` or ``none``, the Host one ``server.allowedHosts`` admits); and the file resolves
inside the bundle (``profiling_worker.bundle.paths``: a link out is refused). A ``.gz`` is
inflated through ``profiling_worker.bundle.inflate``'s capped path into its scratch folder, and has
no name left on disk once opened (closing it frees the space). Downloads are bounded per
server, per session and, for inflations, per server again (``app.core.download_slots``). A
client that leaves stops its download's work: an inflation under way ends at its next MiB and
its temporary file goes, a stream closes its file. The zip is made as it is sent (no length,
its first bytes at once). Every refusal is a short ``text/plain`` page that says why, shown in
the tab the link opened.

A download that is not its turn is queued and told so at once: the tab the link opened shows
a small page (:func:`queued_page`, HTTP 503 with ``Retry-After``) that says which bound holds
it and how many downloads were queued before it; its script asks ``<link>?queue=<the words it
shows>`` (JSON: its turn, the words) and, when its turn has come, goes to the link again, which
then starts the download, and says so. Why a page that asks rather than a download request held
until its turn (as before, up to 120 s): a held download can say nothing, its status and
headers leave with its first byte, which is the file's, so the tab showed only its loading
spinner (issue 41); and the link opens a plain tab, out of the Files page's reach. Why a
script rather than a self-refreshing page (``<meta http-equiv="refresh">``): the page a
download leaves behind would go on saying "queued", where the script says it started.

Why the ask is a long poll, answered when the turn comes, the words change or after
:data:`HOLD_S`, and asked again from the answer's promise rather than by a timer: the link opens
a background tab, and a browser runs a hidden tab's timers late or not at all. Chrome runs them
on 1 s wake-ups; chained ones (set in a timer's callback) once a minute once the page has been
hidden 5 minutes (its "intensive wake up throttling", Chrome 88); none in a frozen page (Page
Lifecycle API); other browsers throttle in their own ways. A page that kept its place only by a
``setTimeout`` firing within 10 s (:data:`~app.core.download_slots.STALE_S`) counted on all of
these. A held ask holds no thread (the handler is async on uvicorn's event loop and looks at the
queue every :data:`STEP_S`); the download counts as present while it is held and is forgotten
once its client leaves (ASGI's ``http.disconnect``, as a stream's client is noticed). The
server holds at most :data:`~app.core.download_slots.MAX_HELD_ASKS` asks, all tabs together
(each takes one of the browser's 6 connections per host); later queued pages are answered at
once and ask again after :data:`POLL_S` by a timer. A frozen page runs no fetch callback either: it
keeps its place
while its ask is held, but not past an answer it cannot read. Without scripts the page refreshes
itself all the same (``<noscript>``), and a command-line client gets 503 with ``Retry-After``
(``curl --retry`` waits and asks again).
"""

from __future__ import annotations

import asyncio
import html
import os
import secrets
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, BinaryIO
from urllib.parse import quote

from app.core.download_grants import GRANT_TTL_S, GRANTS, TOKEN_CHARS, DownloadKind, Grant
from app.core.download_slots import SLOTS, STALE_S, Ask, Held, Queued

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import BaseRoute

#: The route's path below ``server.baseUrlPath``.
PREFIX = "/_kprof/download/"
#: Most one streamed download may be (a file, an inflated report, the zip): the inflation cap
#: of profiling_worker.bundle.inflate (2 GiB), which also bounds its temporary disk.
MAX_STREAMED_BYTES = 2 * 1024**3
_CHUNK = 1 << 20
#: How long a queued page waits (s) before it asks again after an ask that was not held (a
#: queued page past MAX_HELD_ASKS) or that failed; the ``Retry-After`` of the 503. Well
#: inside the queue's STALE_S, after which a download not asked for is taken to be gone.
POLL_S = 1.0
#: Longest a ``?queue`` ask is held open when nothing changes (s): the page asks again at once,
#: so this bounds how long a client that vanished without closing its connection keeps its
#: place (plus STALE_S), and stays below common proxy read timeouts (nginx's: 60 s).
HOLD_S = 20.0
#: How often a held ask looks at the queue again (s): a look-up under a lock, on the event loop.
STEP_S = 0.25
#: The query that asks where a queued download stands (``<link>?queue``).
QUEUE_QUERY = "queue"
_UNSAFE_IN_QUOTES = frozenset('"\\') | {chr(c) for c in range(32)} | {chr(127)}
_state = {"serving": False}


class DownloadRefused(Exception):
    """A download that cannot be served: ``status`` (HTTP) and the message shown."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def serving() -> bool:
    """True once this process's server was built with the route (:func:`install` ran before
    the server started)."""
    return _state["serving"]


def download_url(token: str) -> str:
    """The route's URL of ``token``, relative to the server's root (``server.baseUrlPath``)."""
    from streamlit import config

    base = str(config.get_option("server.baseUrlPath") or "").strip("/")
    return (f"/{base}" if base else "") + PREFIX + token


def content_disposition(filename: str) -> str:
    """``attachment; filename="<name>"``, or RFC 6266's ``filename*=utf-8''<percent-encoded>``
    for a name that is not ASCII or holds a quote, backslash or control character (as
    Streamlit's own media route)."""
    if filename.isascii() and not _UNSAFE_IN_QUOTES.intersection(filename):
        return f'attachment; filename="{filename}"'
    return f"attachment; filename*=utf-8''{quote(filename, safe='')}"


def _refuse_size(what: str, size: int) -> None:
    if size > MAX_STREAMED_BYTES:
        raise DownloadRefused(413, f"{what} is {size:,} bytes, more than the "
                                   f"{MAX_STREAMED_BYTES:,} a download may take; copy it from "
                                   "the bundle folder on the server instead.")


def open_download(grant: Grant, stop: threading.Event | None = None
                  ) -> tuple[Iterator[bytes], int | None]:
    """The bytes ``grant`` allows, as chunks of about 1 MiB, and their length (None for the
    zip, made as it is sent). Blocking (an inflation): run it in a thread; ``stop``, once set,
    ends an inflation at its next MiB (:class:`~profiling_worker.bundle.inflate.InflateStopped`,
    422).

    Raises:
        DownloadRefused: the file is gone or leads out of the bundle (404), is larger than
            :data:`MAX_STREAMED_BYTES` (413), is a ``.gz`` that does not inflate (422,
            with inflate.py's message and hint), or is a CSV whose Parquet file cannot be read
            (422).
    """
    from profiling_worker.bundle.paths import OutsideBundle, bundle_file
    from profiling_worker.bundle.inflate import InflateError, open_inflated

    from app.core.bundle_files import table_csv_file, unmade_csv, zip_chunks
    from profiling_worker.bundle.loader import TableUnreadable, load_bundle

    try:
        if grant.kind is DownloadKind.ZIP:
            bundle = load_bundle(grant.bundle_dir)
            _refuse_size(f"The bundle {bundle.job_id}", sum(f.size for f in bundle.files))
            return zip_chunks(bundle, _CHUNK), None
        if grant.kind is DownloadKind.CSV:
            fh = table_csv_file(grant.bundle_dir, grant.relpath)
            size = os.fstat(fh.fileno()).st_size
            if size > MAX_STREAMED_BYTES:
                fh.close()
                _refuse_size(grant.relpath, size)
            return _chunks(fh), size
        path = bundle_file(grant.bundle_dir, grant.relpath)
        if grant.kind is DownloadKind.INFLATED:
            fh = open_inflated(path, MAX_STREAMED_BYTES, stop)
        else:
            _refuse_size(grant.relpath, path.stat().st_size)
            fh = open(path, "rb")  # noqa: SIM115 - closed by _chunks
        return _chunks(fh), os.fstat(fh.fileno()).st_size
    except OutsideBundle as exc:  # its message names the target: not for the browser
        raise DownloadRefused(404, f"{grant.bundle_dir.name}/{grant.relpath} leads out of the "
                                   "bundle or is not a regular file: not served.") from exc
    except InflateError as exc:
        raise DownloadRefused(422, f"{exc.message} ({exc.hint})") from exc
    except TableUnreadable as exc:
        raise DownloadRefused(422, f"{unmade_csv(grant.relpath, exc)}.") from exc
    except OSError as exc:
        raise DownloadRefused(404, f"{grant.relpath or grant.bundle_dir.name}: cannot be read "
                                   f"({exc}). Reload the Files page.") from exc


def _chunks(fh: BinaryIO) -> Iterator[bytes]:
    with fh:
        while chunk := fh.read(_CHUNK):
            yield chunk


def granted(request: Request) -> Grant:
    """The grant ``request`` asks for.

    Raises:
        DownloadRefused: not from the dashboard's own pages (403), or a token unknown, expired
            or of a closed session (404).
    """
    from streamlit.web.server.starlette.starlette_websocket import is_host_allowed

    site = request.headers.get("sec-fetch-site", "same-origin")
    if site not in ("same-origin", "none") or not is_host_allowed(request.headers.get("host")):
        raise DownloadRefused(403, "Downloads are served to the dashboard's own pages only: "
                                   "open the Files page and click its button.")
    token = request.path_params.get("token", "")
    grant = GRANTS.lookup(token, _session_alive) if len(token) == TOKEN_CHARS else None
    if grant is None:
        raise DownloadRefused(404, "This download link is unknown or has expired (a link lasts "
                                   f"{GRANT_TTL_S // 60} minutes, and only while the page that "
                                   "showed it is open): reload the Files page and click again.")
    return grant


def _session_alive(session_id: str) -> bool:
    from streamlit.runtime import Runtime

    return Runtime.exists() and Runtime.instance().is_active_session(session_id)


async def endpoint(request: Request) -> Response:
    """The route's handler: the download streamed if it is its turn, else the queued page (or,
    asked with ``?queue``, where it stands, as JSON); a ``text/plain`` refusal otherwise."""
    try:
        grant = granted(request)
    except DownloadRefused as exc:
        return _refusal(exc)
    token, inflating = request.path_params["token"], grant.kind is DownloadKind.INFLATED
    if QUEUE_QUERY in request.query_params:
        ask = SLOTS.hold(token, grant.session_id, inflating)
        return await _answer(request, ask, request.query_params[QUEUE_QUERY])
    held = SLOTS.admit(token, grant.session_id, inflating)
    if isinstance(held, Queued):
        return _queued(grant.filename, held)
    try:
        chunks, length = await _opened(request, grant)
    except DownloadRefused as exc:
        SLOTS.give_back(held)
        return _refusal(exc)
    except BaseException:  # cancelled (the server stops) or a fault: the slots are not kept
        SLOTS.give_back(held)
        raise
    headers = {"Content-Disposition": content_disposition(grant.filename),
               "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
    if length is not None:
        headers["Content-Length"] = str(length)
    media = "application/zip" if grant.kind is DownloadKind.ZIP else "application/octet-stream"
    return _stream(chunks, held, media_type=media, headers=headers)


def _refusal(exc: DownloadRefused) -> Response:
    from starlette.responses import PlainTextResponse

    return PlainTextResponse(str(exc), status_code=exc.status)


def queue_words(queued: Queued) -> str:
    """What the queued page says of ``queued``: what holds it and how many were queued before
    it, or that its turn has come."""
    if queued.why is None:
        return ("Its turn has come: the download starts now (the browser lists it with its "
                "downloads); this tab may then be closed.")
    before = ("no download was queued before it" if not queued.ahead else
              f"{queued.ahead} download{'s' * (queued.ahead > 1)} queued before it "
              f"wait{'s' * (queued.ahead == 1)} too")
    return (f"Queued: {queued.why}, and {before}. It starts by itself when its turn comes: "
            "keep this tab open (closing it leaves the queue).")


async def _answer(request: Request, ask: Ask, shown: str) -> Response:
    """Where the download of ``ask`` stands, as JSON (``turn``, ``message``: its words,
    ``held``: whether the page may ask again at once). A held ask is answered once its turn has
    come, its words differ from ``shown`` (those its page shows), :data:`HOLD_S` has passed
    on the queue's clock or its dashboard session has closed (then refused, 404, as its link
    now is: also when the server stops, whose uvicorn closes the sessions' websockets first
    and waits for open requests); the download counts as present meanwhile and is forgotten if
    the client leaves first."""
    from starlette.responses import JSONResponse

    queued, left = SLOTS.where(ask), False
    if ask.held:
        deadline = SLOTS.clock() + HOLD_S
        gone = asyncio.ensure_future(_client_left(request))
        try:
            while (queued.why is not None and queue_words(queued) == shown
                   and SLOTS.clock() < deadline and not gone.done()
                   and _session_alive(ask.session_id)):
                await asyncio.wait({gone}, timeout=STEP_S)
                queued = SLOTS.where(ask)
            left = gone.done()
        finally:
            gone.cancel()
            SLOTS.release(ask, left)
    try:
        granted(request)  # its dashboard tab closed (its links with it) while the ask was held
    except DownloadRefused as exc:
        return _refusal(exc)
    return JSONResponse({"turn": queued.why is None, "message": queue_words(queued),
                         "held": ask.held}, headers={"Cache-Control": "no-store"})


def queued_page(filename: str, queued: Queued, nonce: str) -> str:
    """The HTML page of a queued download of ``filename``: the words of :func:`queue_words`,
    renewed by its script (``nonce``: the script's and style's, as the response's
    Content-Security-Policy names) from ``?queue``, asked again as soon as an answer comes (a
    held ask, no timer) or after :data:`POLL_S` (an ask not held, or one that failed), and the
    link asked again once its turn has come (or once the route refuses it, to show why)."""
    name, poll_ms = html.escape(filename), int(POLL_S * 1000)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Queued: {name}</title>
<noscript><meta http-equiv="refresh" content="{STALE_S / 2:.0f}"></noscript>
<style nonce="{nonce}">
body {{font: 16px system-ui, sans-serif; max-width: 42em; margin: 3em auto; padding: 0 1em}}
</style>
</head><body><h1>{name}</h1>
<p id="state" role="status">{html.escape(queue_words(queued))}</p>
<script nonce="{nonce}">
(function () {{
  const state = document.getElementById("state"), link = location.pathname;
  async function ask() {{
    let answer;
    try {{
      const shown = encodeURIComponent(state.textContent);
      const reply = await fetch(link + "?{QUEUE_QUERY}=" + shown, {{cache: "no-store"}});
      if (!reply.ok) {{ location.replace(link); return; }}  // refused now: the route says why
      answer = await reply.json();
    }} catch (err) {{
      state.textContent = "The dashboard does not answer (" + err + "); asking again.";
      setTimeout(ask, {poll_ms});
      return;
    }}
    state.textContent = answer.message;
    if (answer.turn) {{ location.replace(link); return; }}  // it starts the download
    // a held ask is asked again from its answer: a hidden tab's timers may not run for minutes
    if (answer.held) {{ ask(); }} else {{ setTimeout(ask, {poll_ms}); }}
  }}
  ask();
}})();
</script></body></html>
"""


def _queued(filename: str, queued: Queued) -> Response:
    from starlette.responses import HTMLResponse

    nonce = secrets.token_urlsafe(16)
    csp = (f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; "
           "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
    return HTMLResponse(queued_page(filename, queued, nonce), status_code=503,
                        headers={"Retry-After": f"{POLL_S:.0f}", "Cache-Control": "no-store",
                                 "Content-Security-Policy": csp})


async def _opened(request: Request, grant: Grant) -> tuple[Iterator[bytes], int | None]:
    """:func:`open_download` in a thread, stopped if the client leaves meanwhile (an
    inflation of a report nobody waits for would hold a core and its disk for minutes)."""
    from starlette.concurrency import run_in_threadpool

    stop = threading.Event()
    work = asyncio.ensure_future(run_in_threadpool(open_download, grant, stop))
    gone = asyncio.ensure_future(_client_left(request))
    try:
        await asyncio.wait({work, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
    if not work.done():
        stop.set()
    return await work


async def _client_left(request: Request) -> None:
    """Returns once the client has closed its connection (ASGI's ``http.disconnect``)."""
    while (await request.receive())["type"] != "http.disconnect":
        continue


def _stream(chunks: Iterator[bytes], held: Held, **kwargs: Any) -> Response:
    """A ``StreamingResponse`` of ``chunks`` (read in a thread) that, however it ends (the last
    byte sent, the client gone, even before the first chunk was read), closes ``chunks`` (its
    file) and frees the download's slots, once."""
    from starlette.concurrency import iterate_in_threadpool
    from starlette.responses import StreamingResponse

    class Stream(StreamingResponse):
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            try:
                await super().__call__(scope, receive, send)
            finally:  # no thread reads ``chunks`` any more: anyio waits for it when cancelled
                close = getattr(chunks, "close", None)
                if close is not None:
                    close()
                SLOTS.give_back(held)

    return Stream(iterate_in_threadpool(chunks), **kwargs)


def _route(base_url: str) -> BaseRoute:
    from starlette.routing import Route

    base = base_url.strip("/")
    return Route((f"/{base}" if base else "") + PREFIX + "{token}", endpoint, methods=["GET"])


def install() -> None:
    """Add the route to the server Streamlit builds next (``starlette_app``'s route list) and
    keep its responses out of the gzip middleware (a stream of a file is sent as it is, with its
    length). Idempotent; a Streamlit without these functions gets no route (:func:`serving`
    stays False and the page keeps its in-memory downloads)."""
    from streamlit import config

    try:
        from streamlit.web.server.starlette import starlette_app
        from streamlit.web.server.starlette import starlette_gzip_middleware as gzip_mw

        make_routes = starlette_app.create_streamlit_routes
        bypass = gzip_mw._should_bypass_gzip
    except (ImportError, AttributeError):  # another Streamlit's server: no route
        return
    if getattr(make_routes, "kprof_downloads", False):
        return

    def routes(runtime: object) -> list[BaseRoute]:
        built = make_routes(runtime)  # type: ignore[arg-type]
        _state["serving"] = True
        return [_route(str(config.get_option("server.baseUrlPath") or "")), *built]

    def skip_ours(path: str, base_url: str = "") -> bool:
        return gzip_mw._strip_base_url(path, base_url).startswith(PREFIX) or bypass(path, base_url)

    routes.kprof_downloads = True  # type: ignore[attr-defined]
    setattr(starlette_app, "create_streamlit_routes", routes)  # noqa: B010
    setattr(gzip_mw, "_should_bypass_gzip", skip_ours)  # noqa: B010
