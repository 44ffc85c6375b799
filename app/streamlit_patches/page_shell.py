"""The page shell ``kernel-dashboard`` serves: Streamlit's own ``index.html`` with its plotly
chunk imported from the ``<head>`` (issue 25).

Streamlit loads ``PlotlyChart.<hash>.js`` (4.7 MB, about 300 ms of the browser's main thread
to evaluate on the 2-core machine) only when the first chart's message arrives, and by then
the main thread is busy drawing the sidebar, the link bar and the page's controls: the chart
waited for all of them. Imported from the shell, the chunk is fetched and evaluated while the
browser still waits for the rest of Streamlit's JavaScript and the WebSocket (idle time), so
the first chart is drawn as soon as its message is in. Nothing else changes: the same page,
drawn in the same order.

Session 26 also preloaded the chunks of the first run's other element kinds (68 files) once
the server had settled; in paired runs (issue 37, sessions 26 and 27) that showed no benefit
but at load 2.6-11, none at modest load, and it was taken out in session 27.

The shell is changed on its way out (an ASGI middleware, innermost, so it sees the bytes
before gzip), and only a response whose body is exactly the installed ``index.html``: a
custom component's page or any other HTML passes untouched. Its ``ETag`` and
``Last-Modified`` are dropped and a page navigation (``Accept: text/html``) is asked without
its validators, so a browser that cached Streamlit's stock shell (a plain ``streamlit run`` on
the same port) is sent this one instead of a 304 (the shell is 8 KB). :func:`install` hooks
``starlette_app.create_streamlit_middleware``; a Streamlit without it gets the stock shell and
its charts are drawn as before, just later.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Callable
from urllib.parse import quote

_DROPPED = {b"content-length", b"etag", b"last-modified"}
_CONDITIONAL = {b"if-none-match", b"if-modified-since"}

Scope = dict[str, Any]
Receive = Callable[[], Any]
Send = Callable[[dict[str, Any]], Any]


def _static_dir() -> Path:
    import streamlit

    return Path(streamlit.__file__).parent / "static"


@functools.lru_cache(maxsize=1)
def plotly_chunk() -> str | None:
    """File name of the installed Streamlit's plotly chunk (``PlotlyChart.<hash>.js``, its
    hash differs per release), or None when it has none."""
    chunks = sorted((_static_dir() / "static" / "js").glob("PlotlyChart.*.js"))
    return chunks[0].name if chunks else None


def injected(index: bytes, chunk: str) -> bytes:
    """``index`` (Streamlit's ``index.html``) with ``chunk`` preloaded and imported, just
    before ``</head>``; ``index`` itself when it has no ``</head>``. URLs are relative, as
    Streamlit's own (``./static/js/...``), so ``server.baseUrlPath`` and page paths work."""
    href = f"./static/js/{chunk}"
    tags = (f'<link rel="modulepreload" crossorigin href="{href}">'
            f'<script type="module">import("{href}");</script>').encode()
    head, mark, rest = index.rpartition(b"</head>")
    return head + tags + mark + rest if mark else index


def nested_target(path: str, base: str, query: bytes = b"") -> str | None:
    """Where a page navigation to a nested path (``/compare/extra``, below ``base``, Streamlit's
    ``server.baseUrlPath``) is sent: the same path as one segment, its slashes escaped
    (``/compare%2Fextra``, query kept); None for a path of one segment (a page's, or an unknown
    one the app's banner names) or outside ``base``.

    Streamlit answers any unknown path with its ``index.html``, whose URLs are relative
    (``./static/js/...``): below ``/compare/`` they named ``/compare/static/js/...``, answered
    with the same HTML, so the browser refused them as scripts (MIME type) and drew a blank
    page (a fresh user's find); the frontend would not have reached the server's WebSocket
    from there either (it tries the path and its parent, not the root). One segment deep, the
    page loads and the app's banner names the path (app.ui.navigation.unknown_path)."""
    prefix = f"/{base.strip('/')}" if base.strip("/") else ""
    if prefix and path != prefix and not path.startswith(prefix + "/"):
        return None
    rest = path[len(prefix):].strip("/")
    if "/" not in rest:
        return None
    return f"{prefix}/{quote(rest, safe='')}" + (f"?{query.decode('latin-1')}" if query else "")


class ShellMiddleware:
    """ASGI middleware: a ``GET`` answered ``200 text/html`` with exactly ``index`` is sent
    as ``shell`` instead (new ``Content-Length``, no validators), or for a page navigation to
    a nested path (:func:`nested_target`) as a redirect (302) to that path made one segment; a
    ``HEAD`` answered with ``index``'s length gets the shell's headers; everything else
    passes."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Any], index: bytes,
                 shell: bytes, base: str = ""):
        self.app, self.index, self.shell, self.base = app, index, shell, base

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope.get("method")
        if scope["type"] != "http" or method not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        target = None
        if b"text/html" in dict(scope.get("headers", [])).get(b"accept", b""):
            scope = {**scope, "headers": [(k, v) for k, v in scope["headers"]
                                          if k.lower() not in _CONDITIONAL]}
            # the path as sent: ASGI's "path" is unescaped, so /compare%2Fextra reads nested
            raw = scope.get("raw_path") or str(scope.get("path", "")).encode()
            target = nested_target(raw.decode("latin-1").partition("?")[0], self.base,
                                   scope.get("query_string", b""))
        await self.app(scope, receive, self._head(send) if method == "HEAD" else
                       self._get(send, target))

    def _headers(self, headers: list[tuple[bytes, bytes]],
                 shell: bytes) -> list[tuple[bytes, bytes]]:
        """``shell``'s headers in place of ``index``'s."""
        return [(k, v) for k, v in headers if k.lower() not in _DROPPED] + [
            (b"content-length", str(len(shell)).encode())]

    def _head(self, send: Send) -> Send:
        async def send_head(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and _is_html(message) and \
                    dict(message["headers"]).get(b"content-length") == \
                    str(len(self.index)).encode():
                message = {**message, "headers": self._headers(message["headers"], self.shell)}
            await send(message)

        return send_head

    def _get(self, send: Send, target: str | None = None) -> Send:
        held: dict[str, Any] = {}
        body: list[bytes] = []

        async def send_shell(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and _is_html(message):
                held.update(message)  # decided once the whole body is in
                return
            if message["type"] != "http.response.body" or not held:
                await send(message)
                return
            body.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            payload = b"".join(body)
            headers = held["headers"]
            if payload == self.index and target is not None:  # a nested path: one segment
                await send({"type": "http.response.start", "status": 302, "headers": [
                    (b"location", target.encode("latin-1")), (b"cache-control", b"no-cache"),
                    (b"content-length", b"0")]})
                await send({"type": "http.response.body", "body": b""})
                return
            if payload == self.index:
                payload = self.shell
                headers = self._headers(headers, payload)
            await send({**held, "headers": headers})
            await send({"type": "http.response.body", "body": payload})

        return send_shell


def _is_html(start: dict[str, Any]) -> bool:
    headers = {k.lower(): v for k, v in start.get("headers", [])}
    return (start.get("status") == 200 and b"content-encoding" not in headers
            and headers.get(b"content-type", b"").startswith(b"text/html"))


def install() -> None:
    """Add :class:`ShellMiddleware` (innermost) to the server Streamlit builds next: the shell
    imports the plotly chunk. Idempotent; without the installed ``index.html``, its plotly
    chunk or Streamlit's ``create_streamlit_middleware``, nothing is changed."""
    try:
        from starlette.middleware import Middleware
        from streamlit.web.server.starlette import starlette_app

        make_middleware = starlette_app.create_streamlit_middleware
        index = (_static_dir() / "index.html").read_bytes()
    except (ImportError, AttributeError, OSError):  # another Streamlit's server: stock shell
        return
    chunk = plotly_chunk()
    if chunk is None or getattr(make_middleware, "kprof_shell", False):
        return
    shell = injected(index, chunk)

    def middleware() -> list[Any]:
        from streamlit import config

        base = str(config.get_option("server.baseUrlPath") or "")
        return [*make_middleware(), Middleware(ShellMiddleware, index=index, shell=shell,
                                               base=base)]

    middleware.kprof_shell = True  # type: ignore[attr-defined]
    setattr(starlette_app, "create_streamlit_middleware", middleware)  # noqa: B010
