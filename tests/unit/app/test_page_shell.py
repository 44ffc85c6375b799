"""The page shell (app/streamlit_patches/page_shell.py, issue 25) on Streamlit's own static-file handler, driven
through ASGI as the server drives it: the installed ``index.html`` goes out with its plotly
chunk imported from the head, at ``/`` and at a page's path, and a ``HEAD`` with the same
headers; every other response (the chunk, other static files, another HTML page) is
Streamlit's, byte for byte."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import unquote

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from streamlit.web.server.starlette.starlette_static_routes import (
    create_streamlit_static_assets_routes)

from app.streamlit_patches import page_shell

INDEX = (page_shell._static_dir() / "index.html").read_bytes()
CHUNK = page_shell.plotly_chunk()


def _app(shell: bool) -> Starlette:
    routes = create_streamlit_static_assets_routes(base_url="")
    middleware = [Middleware(page_shell.ShellMiddleware, index=INDEX,
                             shell=page_shell.injected(INDEX, CHUNK or ""))] if shell else []
    return Starlette(routes=routes, middleware=middleware)


def _request(app: Starlette, path: str, method: str = "GET",
             headers: dict[str, str] | None = None) -> tuple[int, dict[bytes, bytes], bytes]:
    sent: list[dict[str, Any]] = []
    requests = [{"type": "http.request", "body": b"", "more_body": False}]

    async def receive() -> dict[str, Any]:
        if requests:
            return requests.pop()
        await asyncio.Event().wait()  # the client never disconnects; the response cancels this
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": method, "path": unquote(path), "raw_path": path.encode(),
             "root_path": "", "query_string": b"", "scheme": "http", "http_version": "1.1",
             "server": ("127.0.0.1", 8501), "client": ("127.0.0.1", 50000),
             "headers": [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]}
    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], {k.lower(): v for k, v in start["headers"]}, body


def test_the_installed_streamlit_has_a_plotly_chunk() -> None:
    assert CHUNK and CHUNK.startswith("PlotlyChart.") and CHUNK.endswith(".js")


@pytest.mark.parametrize("path", ["/", "/stability", "/one-kernel"])
def test_the_shell_imports_the_chunk_from_the_head(path: str) -> None:
    status, headers, body = _request(_app(shell=True), path, headers={"accept": "text/html"})
    assert status == 200
    head, _, rest = body.partition(b"</head>")
    assert f'import("./static/js/{CHUNK}")'.encode() in head
    assert f'<link rel="modulepreload" crossorigin href="./static/js/{CHUNK}">'.encode() in head
    assert int(headers[b"content-length"]) == len(body)
    assert b"etag" not in headers and b"last-modified" not in headers
    assert headers[b"cache-control"] == b"no-cache"  # Streamlit's own header for its shell
    assert body == page_shell.injected(INDEX, CHUNK or "")
    assert rest == INDEX.rpartition(b"</head>")[2]


def test_a_navigation_that_cached_the_stock_shell_gets_this_one() -> None:
    """The browser revalidates a cached page with its validators: the stock shell's would be
    answered 304 and the stock page kept."""
    _, stock, _ = _request(_app(shell=False), "/")
    etag = stock[b"etag"].decode()
    assert _request(_app(shell=False), "/", headers={"if-none-match": etag})[0] == 304
    status, _, body = _request(_app(shell=True), "/", headers={
        "if-none-match": etag, "accept": "text/html,application/xhtml+xml"})
    assert status == 200 and body == page_shell.injected(INDEX, CHUNK or "")


CSS = next((page_shell._static_dir() / "static" / "css").glob("index.*.css")).name


@pytest.mark.parametrize("path", [f"/static/js/{CHUNK}", f"/static/css/{CSS}", "/favicon.png",
                                  "/manifest.json"])
def test_everything_else_is_streamlits_byte_for_byte(path: str) -> None:
    assert _request(_app(shell=True), path) == _request(_app(shell=False), path)


def test_a_head_request_gets_the_shells_headers() -> None:
    """HEAD carries GET's headers (a new user's curl -I showed the stock shell's length)."""
    get = _request(_app(shell=True), "/")
    status, headers, body = _request(_app(shell=True), "/", method="HEAD")
    assert status == 200 and body == b"" and headers == get[1]
    assert _request(_app(shell=True), "/favicon.png", method="HEAD") == \
        _request(_app(shell=False), "/favicon.png", method="HEAD")


def test_other_html_passes_untouched() -> None:
    other = b"<html><head></head><body>a custom component</body></html>"
    assert page_shell.injected(b"no head here", "x.js") == b"no head here"

    async def component(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/html; charset=utf-8")]})
        await send({"type": "http.response.body", "body": other[:10], "more_body": True})
        await send({"type": "http.response.body", "body": other[10:]})

    wrapped = page_shell.ShellMiddleware(component, index=INDEX, shell=b"never")
    assert _request(wrapped, "/component/x")[2] == other  # type: ignore[arg-type]


def test_install_adds_the_middleware_once_to_the_server_streamlit_builds() -> None:
    from streamlit.web.server.starlette import starlette_app

    original = starlette_app.create_streamlit_middleware
    try:
        page_shell.install()
        page_shell.install()
        built = starlette_app.create_streamlit_middleware()
        assert [m.cls for m in built].count(page_shell.ShellMiddleware) == 1
        assert built[-1].cls is page_shell.ShellMiddleware  # innermost: before gzip
    finally:
        starlette_app.create_streamlit_middleware = original


def test_a_nested_unknown_path_is_sent_to_one_segment() -> None:
    """A fresh user's find: ``/compare/extra`` drew a blank page (its relative script URLs
    named ``/compare/static/js/...``, answered with HTML). A page navigation there is sent to
    ``/compare%2Fextra`` (one segment: the page loads and the app's banner names the path);
    a script's request, a page's path and Streamlit's own routes are answered as before."""
    html = {"accept": "text/html,application/xhtml+xml"}
    status, headers, body = _request(_app(shell=True), "/compare/extra", headers=html)
    assert (status, headers[b"location"], body) == (302, b"/compare%2Fextra", b"")
    assert _request(_app(shell=True), "/compare%2Fextra", headers=html)[0] == 200
    assert _request(_app(shell=True), "/stability", headers=html)[0] == 200
    # a script asked below the nested path (no navigation) is not redirected
    status, headers, _ = _request(_app(shell=True), f"/compare/static/js/{CHUNK}")
    assert status == 200 and b"location" not in headers
    assert _request(_app(shell=True), f"/static/js/{CHUNK}", headers=html) == \
        _request(_app(shell=False), f"/static/js/{CHUNK}", headers=html)


def test_the_nested_target_keeps_the_base_path_and_query() -> None:
    target = page_shell.nested_target
    assert target("/compare/extra", "") == "/compare%2Fextra"
    assert target("/a/b/c", "", b"job=x") == "/a%2Fb%2Fc?job=x"
    assert target("/dash/compare/extra", "dash") == "/dash/compare%2Fextra"
    assert target("/dash/compare", "/dash/") is None and target("/compare", "") is None
    assert target("/other/compare/extra", "dash") is None and target("/", "") is None


def test_the_banner_names_the_nested_path_unescaped() -> None:
    from app.ui.navigation import unknown_path

    assert unknown_path("http://h:8501/compare%2Fextra") == "compare/extra"
    assert unknown_path("http://h:8501/nosuchpage") == "nosuchpage"
    assert unknown_path("http://h:8501/stability") is None
