"""The page shell (app/streamlit_patches/page_shell.py, issue 25) on Streamlit's own static-file handler, driven
through ASGI as the server drives it: the installed ``index.html`` goes out with its plotly
chunk imported from the head, at ``/`` and at a page's path, and a ``HEAD`` with the same
headers; every other response (the chunk, other static files, another HTML page) is
Streamlit's, byte for byte."""

from __future__ import annotations

import asyncio
import re
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


STATIC = page_shell._static_dir() / "static"


def test_the_shell_preloads_each_first_run_kinds_chunk_and_every_module_it_imports() -> None:
    """Issue 37: a 1,000-config sweep's chart waited about half a second for the chunks of the
    sidebar's, link bar's and controls' element kinds, asked for only once React drew them.
    The shell preloads each kind's chunk (this Streamlit has one for each) and the modules
    they import (none left to fetch when one is run), not those Streamlit's own shell
    preloads, nor the plotly chunk, which it imports; then the import, after the links."""
    files = page_shell.first_run_files()
    for kind in page_shell.FIRST_RUN_KINDS:
        assert any(f.startswith(f"js/{kind}.") for f in files), kind
    own = set(re.findall(r'(?:href|src)="\./static/js/([^"]+)"', INDEX.decode()))
    assert own and not own & {f[3:] for f in files} and f"js/{CHUNK}" not in files
    for name in (f for f in files if f.endswith(".js")):
        imported = re.findall(r'(?:from|import)"\./([^"/]+\.js)"', (STATIC / name).read_text())
        assert all(f"js/{i}" in files or i in own or i == CHUNK for i in imported), name
    assert [f for f in files if f.endswith(".css")] == [
        f"css/{p.name}" for p in sorted((STATIC / "css").glob("DataFrame.*.css"))]
    head = page_shell.injected(INDEX, CHUNK or "", files).partition(b"</head>")[0]
    for name in files:
        assert (f'<link rel="preload" as="style" href="./static/{name}">' if
                name.endswith(".css") else
                f'<link rel="modulepreload" crossorigin href="./static/{name}">').encode() in head
    assert head.rindex(b"<link rel=") < head.index(f'import("./static/js/{CHUNK}")'.encode())


def test_install_preloads_the_first_runs_files_once_the_server_has_settled() -> None:
    """The 68 requests cost the server about 0.2 s of CPU: a load while it is still busy with
    its start (kernel-dashboard's prewarm: imports, the likely bundles' reads) gets the shell
    without them, as before; every load after, the shell with them (GET and HEAD alike)."""
    from streamlit.web.server.starlette import starlette_app

    original = starlette_app.create_streamlit_middleware
    busy = [True]
    try:
        page_shell.install(lambda: not busy[0])
        built = starlette_app.create_streamlit_middleware()[-1]
        app = Starlette(routes=create_streamlit_static_assets_routes(base_url=""),
                        middleware=[built])
        early = page_shell.injected(INDEX, CHUNK or "")
        later = page_shell.injected(INDEX, CHUNK or "", page_shell.first_run_files())
        assert later != early
        for shell, now_busy in ((early, True), (later, False)):
            busy[0] = now_busy
            status, headers, body = _request(app, "/", headers={"accept": "text/html"})
            assert status == 200 and body == shell
            assert int(headers[b"content-length"]) == len(shell)
            head = _request(app, "/", method="HEAD")[1]
            assert int(head[b"content-length"]) == len(shell)
    finally:
        starlette_app.create_streamlit_middleware = original


def test_prewarm_has_settled_before_any_start_and_once_its_reads_are_done(monkeypatch) -> None:
    """What install's ``settled`` reads in kernel-dashboard: true with nothing begun (a plain
    ``streamlit run``, a test); from start() on, false until the imports are done and every
    likely bundle has been read (the heavy part, which a first page load waits for), though
    the first charts computed after the reads may still run."""
    import threading
    from concurrent.futures import Future

    from app.ui import prewarm

    assert prewarm.settled()
    read: Future[object] = Future()
    gate, reading = threading.Event(), threading.Event()

    def held_read(reads: object) -> None:  # the read, then the charts: held until the gate
        reading.set()
        gate.wait(30)

    monkeypatch.setattr(prewarm, "MODULES", ())
    monkeypatch.setattr(prewarm, "_register_likely", lambda: [("job", "path", read)])
    monkeypatch.setattr(prewarm, "_read", held_read)
    monkeypatch.setattr(prewarm, "_probe", lambda *args: None)
    monkeypatch.setattr(prewarm, "_probes", {})  # its never-answered probe goes with the test
    monkeypatch.setattr(prewarm, "_read_futures", [])
    prewarm.start("python")
    try:
        assert reading.wait(30) and not prewarm.settled()
        read.set_result(object())  # read; its chart still being computed
        assert prewarm.settled()
    finally:
        gate.set()


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
