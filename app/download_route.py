"""The download route: ``GET /_kprof/download/<token>`` streams a bundle file, the inflated
``.ncu-rep`` of a ``.ncu-rep.gz`` or the bundle's zip from disk, 1 MiB at a time, so a download
costs the server a few MiB whatever its size (``st.download_button`` reads its bytes whole into
Streamlit's media store: docs/performance.md). ``kernel-dashboard`` adds it before the server
starts (:func:`install`); a bare ``streamlit run`` has none and the Files page keeps its
in-memory buttons, capped at 64 MiB (:func:`serving` tells which).

A request is served only when its token (``app.core.download_grants``) is known, unexpired and
its session still open; it comes from the dashboard's own pages (``Sec-Fetch-Site`` is
``same-origin`` or ``none``, the Host one ``server.allowedHosts`` admits); and the file resolves
inside the bundle (``profiling_worker.bundle.paths``: a link out is refused). A ``.gz`` is
inflated through ``profiling_worker.bundle.inflate``'s capped path into its scratch folder, and has
no name left on disk once opened (closing it frees the space); at most :data:`MAX_INFLATIONS`
inflations run at once, the others queue for up to :data:`QUEUE_WAIT_S` and are then told to
try again (503).
The zip is made as it is sent (no length, its first bytes at once). Every refusal is a short
``text/plain`` page that says why, shown in the tab the link opened.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, BinaryIO
from urllib.parse import quote

from app.core.download_grants import GRANT_TTL_S, GRANTS, TOKEN_CHARS, DownloadKind, Grant

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
#: Most ``.ncu-rep.gz`` inflations this server runs at once (each takes a CPU core and up to
#: MAX_STREAMED_BYTES of temporary disk); 40 at once filled the server's thread pool (issue 41).
MAX_INFLATIONS = 2
#: How long a download waits for an inflation slot before it is told to try again (s); the
#: wait holds no thread.
QUEUE_WAIT_S = 120.0
_INFLATIONS = threading.BoundedSemaphore(MAX_INFLATIONS)
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


def open_download(grant: Grant) -> tuple[Iterator[bytes], int | None]:
    """The bytes ``grant`` allows, as chunks of about 1 MiB, and their length (None for the
    zip, made as it is sent). Blocking (an inflation): run it in a thread.

    Raises:
        DownloadRefused: the file is gone or leads out of the bundle (404), is larger than
            :data:`MAX_STREAMED_BYTES` (413), or is a ``.gz`` that does not inflate (422,
            with inflate.py's message and hint).
    """
    from profiling_worker.bundle.paths import OutsideBundle, bundle_file
    from profiling_worker.bundle.inflate import InflateError, open_inflated

    from app.core.bundle_files import zip_chunks
    from profiling_worker.bundle.loader import load_bundle

    try:
        if grant.kind is DownloadKind.ZIP:
            bundle = load_bundle(grant.bundle_dir)
            _refuse_size(f"The bundle {bundle.job_id}", sum(f.size for f in bundle.files))
            return zip_chunks(bundle, _CHUNK), None
        path = bundle_file(grant.bundle_dir, grant.relpath)
        if grant.kind is DownloadKind.INFLATED:
            fh = open_inflated(path, MAX_STREAMED_BYTES)
        else:
            _refuse_size(grant.relpath, path.stat().st_size)
            fh = open(path, "rb")  # noqa: SIM115 - closed by _chunks
        return _chunks(fh), os.fstat(fh.fileno()).st_size
    except OutsideBundle as exc:  # its message names the target: not for the browser
        raise DownloadRefused(404, f"{grant.bundle_dir.name}/{grant.relpath} leads out of the "
                                   "bundle or is not a regular file: not served.") from exc
    except InflateError as exc:
        raise DownloadRefused(422, f"{exc.message} ({exc.hint})") from exc
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
    """The route's handler: the download streamed, or a ``text/plain`` refusal."""
    from starlette.concurrency import run_in_threadpool
    from starlette.responses import PlainTextResponse, StreamingResponse

    try:
        grant = granted(request)
        if grant.kind is DownloadKind.INFLATED:
            chunks, length = await _inflated(grant)
        else:
            chunks, length = await run_in_threadpool(open_download, grant)
    except DownloadRefused as exc:
        headers = {"Retry-After": "60"} if exc.status == 503 else None
        return PlainTextResponse(str(exc), status_code=exc.status, headers=headers)
    headers = {"Content-Disposition": content_disposition(grant.filename),
               "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
    if length is not None:
        headers["Content-Length"] = str(length)
    media = "application/zip" if grant.kind is DownloadKind.ZIP else "application/octet-stream"
    return StreamingResponse(chunks, media_type=media, headers=headers)


async def _inflated(grant: Grant) -> tuple[Iterator[bytes], int | None]:
    """:func:`open_download` of an inflated report once one of :data:`MAX_INFLATIONS` slots is
    free: the others queue (polled, holding no thread) for up to :data:`QUEUE_WAIT_S`.

    Raises:
        DownloadRefused: 503 when no slot freed in time (the message says so), or as
            :func:`open_download`.
    """
    from starlette.concurrency import run_in_threadpool

    deadline = time.monotonic() + QUEUE_WAIT_S
    while not _INFLATIONS.acquire(blocking=False):
        if time.monotonic() > deadline:
            raise DownloadRefused(503, f"The server is inflating {MAX_INFLATIONS} other reports "
                                       f"for downloads and this one waited {QUEUE_WAIT_S:.0f} s "
                                       "in the queue: click the button again in a minute.")
        await asyncio.sleep(0.2)
    try:
        return await run_in_threadpool(open_download, grant)
    finally:
        _INFLATIONS.release()


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
