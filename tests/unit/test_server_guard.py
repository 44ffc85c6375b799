"""The dashboard's WebSocket accepts only its own origin (host AND port), and the server never
looks anything up outside the machine (app/streamlit_patches/server_guard.py; issue 26: a page served from
another port of 127.0.0.1 opened the socket, and each foreign-origin handshake made Streamlit
ask checkip.amazonaws.com for the machine's external IP). And a session shut down holds no
upload (issue 41).

The server test starts ``kernel-dashboard`` (``python -m app.cli``) with every HTTP(S) proxy
pointed at a local listener: any lookup outside the machine would connect to it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import weakref
from pathlib import Path

import pytest

from app.streamlit_patches import server_guard

REPO = Path(__file__).resolve().parents[2]
KEY = "dGhlIHNhbXBsZSBub25jZQ=="  # RFC 6455's example key


@pytest.fixture
def guarded(monkeypatch):
    """install() on this process's Streamlit, undone afterwards."""
    from streamlit import config, net_util
    from streamlit.web.server.starlette import starlette_websocket

    monkeypatch.setattr(starlette_websocket, "is_url_from_allowed_origins",
                        starlette_websocket.is_url_from_allowed_origins)
    monkeypatch.setattr(net_util, "get_external_ip", net_util.get_external_ip)
    wanted = {"server.port": 8501, "server.allowedHosts": ["localhost", "127.0.0.1"],
              "server.corsAllowedOrigins": []}
    saved = {name: config.get_option(name) for name in wanted}
    for name, value in wanted.items():
        config.set_option(name, value)
    asked: list[str] = []
    monkeypatch.setattr(net_util, "_make_blocking_http_get",
                        lambda url, timeout=5: asked.append(url))
    server_guard.install()
    yield starlette_websocket, asked
    for name, value in saved.items():
        config.set_option(name, value)


def test_origin_must_match_host_and_port(guarded) -> None:
    ws, asked = guarded
    allowed = ws._is_origin_allowed
    assert allowed("http://127.0.0.1:8501", "127.0.0.1:8501")  # same origin
    assert allowed("http://localhost:8501", "127.0.0.1:8501")  # the dashboard by its other name
    assert not allowed("http://127.0.0.1:9999", "127.0.0.1:8501")  # another port: another site
    assert not allowed("http://localhost:8502", "127.0.0.1:8501")
    assert not allowed("http://evil.example:8501", "127.0.0.1:8501")
    assert not allowed("file://", "127.0.0.1:8501") and not allowed("null", "127.0.0.1:8501")
    assert not allowed("http://127.0.0.1:99999", "127.0.0.1:8501")
    assert asked == []  # nothing looked up to decide


def test_the_external_ip_is_never_looked_up(guarded) -> None:
    from streamlit import net_util

    _, asked = guarded
    assert net_util.get_external_ip() is None and asked == []


@pytest.fixture
def session_with_upload(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # type: ignore[no-untyped-def]
    """install() (AppSession.shutdown's change undone afterwards), and a maker of a real
    AppSession with an uploaded file of 8 MiB in its state, as the uploader's value (an
    ``UploadedFile`` sharing the upload's bytes): (session, weak reference to the file)."""
    import asyncio

    from streamlit import config
    from streamlit.proto.Common_pb2 import FileURLs
    from streamlit.runtime.app_session import AppSession
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
    from streamlit.runtime.script_data import ScriptData
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.runtime.uploaded_file_manager import UploadedFile, UploadedFileRec

    monkeypatch.setattr(AppSession, "shutdown", AppSession.shutdown)
    server_guard.install()
    watcher = config.get_option("server.fileWatcherType")
    config.set_option("server.fileWatcherType", "none")
    (tmp_path / "app.py").write_text("", encoding="utf-8")
    manager = MemoryUploadedFileManager("/_stcore/upload_file")

    async def make() -> tuple[AppSession, weakref.ref[UploadedFile]]:
        session = AppSession(ScriptData(str(tmp_path / "app.py")), manager, ScriptCache(),
                             None, {})  # it needs a running event loop
        manager.add_file(session.id, UploadedFileRec("f", "big.csv", "text/csv",
                                                     bytes(8 * 2**20)))
        upload = UploadedFile(manager.get_files(session.id, ["f"])[0], FileURLs())
        session._session_state["files"] = [upload]
        return session, weakref.ref(upload)

    try:
        yield lambda: asyncio.run(make()), manager
    finally:
        config.set_option("server.fileWatcherType", watcher)


def test_a_shut_down_session_holds_no_upload(session_with_upload) -> None:  # type: ignore[no-untyped-def]
    """Shut down and still referenced, as Streamlit 1.67's runtime loop keeps the last session
    it flushed: the file is gone with the session's state, not only its record in the upload
    manager (issue 41: +143 MiB held for good)."""
    make, manager = session_with_upload
    session, upload = make()
    session.shutdown()
    assert manager.file_storage.get(session.id) is None  # the record: Streamlit drops it
    assert upload() is None, "the shut-down session's state still holds the uploaded file"


class _Forgetful:
    """The runtime after its session store evicted a closed tab's session (it keeps 128 at
    most): it knows the session no more, so closing it does nothing."""

    def __init__(self, manager: object) -> None:
        self.uploaded_file_mgr = manager

    def is_active_session(self, session_id: str) -> bool:
        return False

    def close_session(self, session_id: str) -> None:
        pass


def test_a_session_the_store_forgot_is_shut_down_at_the_end_of_its_window(  # type: ignore[no-untyped-def]
        session_with_upload) -> None:
    make, manager = session_with_upload
    session, upload = make()
    server_guard._close_if_gone(_Forgetful(manager), session.id, weakref.ref(session))
    assert manager.file_storage.get(session.id) is None
    assert upload() is None, "the forgotten session's state still holds the uploaded file"


def _handshake(port: int, origin: str) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        s.sendall((f"GET /_stcore/stream HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                   "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                   f"Sec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n"
                   f"Sec-WebSocket-Protocol: streamlit\r\nOrigin: {origin}\r\n\r\n").encode())
        return s.recv(4096).split(b"\r\n", 1)[0]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_kernel_dashboard_refuses_other_ports_and_asks_no_one(tmp_path) -> None:
    trap = socket.socket()
    trap.bind(("127.0.0.1", 0))
    trap.listen(8)
    trap.settimeout(0.2)
    knocks: list[str] = []
    stop = threading.Event()

    def listen() -> None:  # every outside lookup goes through this "proxy"
        while not stop.is_set():
            try:
                conn, _ = trap.accept()
            except OSError:
                continue
            knocks.append(conn.recv(200).decode(errors="replace"))
            conn.close()

    threading.Thread(target=listen, daemon=True).start()
    proxy = f"http://127.0.0.1:{trap.getsockname()[1]}"
    port = _free_port()
    env = {**os.environ, "KPROF_RESULTS_DIR": str(tmp_path / "results"), "NO_PROXY": "",
           "no_proxy": "", **{k: proxy for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy",
                                                 "https_proxy", "ALL_PROXY")}}
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "--port", str(port)], cwd=REPO,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
                if opener.open(f"http://127.0.0.1:{port}/_stcore/health", timeout=2).read():
                    break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "no server"
                time.sleep(0.3)
        assert _handshake(port, f"http://127.0.0.1:{port}").endswith(b"101 Switching Protocols")
        for origin in ("http://127.0.0.1:9999", f"http://localhost:{port + 1}",
                       f"http://evil.example:{port}"):
            assert _handshake(port, origin).endswith(b"403 Forbidden"), origin
        time.sleep(1.5)  # Streamlit's lookup times out after 1 s: give it the time to knock
        assert knocks == []
    finally:
        stop.set()
        os.killpg(proc.pid, 15)
        proc.wait(20)
        trap.close()


@pytest.fixture
def upload_store(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """install(), a server-wide cap of 500 MB, and an adder of ``mb`` MB files to a fresh
    upload store (one zero-filled object: no real memory)."""
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
    from streamlit.runtime.uploaded_file_manager import UploadedFileRec

    server_guard.install()
    monkeypatch.setenv(server_guard.SERVER_UPLOAD_ENV, "500")
    manager = MemoryUploadedFileManager("/upload")
    blobs: dict[int, bytes] = {}

    def add(session_id: str, file_id: str, mb: int) -> None:
        data = blobs.setdefault(mb, bytes(mb * 10**6))
        manager.add_file(session_id, UploadedFileRec(file_id, f"{file_id}.ncu-rep", "x", data))

    return manager, add


def test_all_sessions_uploads_are_capped_and_the_count_follows_a_session_end(  # type: ignore[no-untyped-def]
        upload_store) -> None:
    """Each tab under its 400 MB, three tabs over the server's cap (issue 41: N tabs held
    N x 400 MB): the third tab's file is refused with the server-wide reason, kept for its
    page; a file sent again replaces itself; the bytes of a session shut down at the end of
    its reconnect window (``_close_if_gone``) leave the count, and the file then fits."""
    from starlette.exceptions import HTTPException

    manager, add = upload_store
    add("s1", "a", 150)
    add("s1", "b", 150)
    add("s2", "c", 150)
    assert server_guard.held_upload_bytes(manager, "s2", "") == (150 * 10**6, 450 * 10**6)
    with pytest.raises(HTTPException) as err:
        add("s3", "d", 100)
    assert err.value.status_code == 413
    assert ("d.ncu-rep (100.0 MB) was refused: the files not yet imported of every tab open on "
            "this server hold 450.0 MB (0.0 MB of them this tab's), and together they may hold "
            "at most 500 MB, the server-wide limit" in err.value.detail), err.value.detail
    assert server_guard.upload_refusal("s3") == err.value.detail
    assert manager.file_storage.get("s3", {}) == {}
    add("s2", "c", 150)  # sent again: it replaces itself, 450 MB still
    server_guard._close_if_gone(_Forgetful(manager), "s1", None)  # s1's tab closed for good
    assert server_guard.held_upload_bytes(manager, "s3", "") == (0, 150 * 10**6)
    add("s3", "d", 100)
    assert server_guard.held_upload_bytes(manager, "s3", "") == (100 * 10**6, 250 * 10**6)


@pytest.mark.parametrize("value", ["abc", "0", "-5", "1.5"])
def test_a_wrong_server_cap_refuses_uploads_naming_the_variable(  # type: ignore[no-untyped-def]
        upload_store, monkeypatch, value) -> None:
    from starlette.exceptions import HTTPException

    manager, add = upload_store
    monkeypatch.setenv(server_guard.SERVER_UPLOAD_ENV, value)
    with pytest.raises(ValueError, match="KPROF_SERVER_UPLOAD_MB=.* whole number of MB"):
        server_guard.server_upload_mb()
    with pytest.raises(HTTPException) as err:
        add("s1", "a", 1)
    assert err.value.status_code == 413 and "KPROF_SERVER_UPLOAD_MB" in err.value.detail
    monkeypatch.delenv(server_guard.SERVER_UPLOAD_ENV)
    assert server_guard.server_upload_mb() == server_guard.SERVER_UPLOAD_MB
    add("s1", "a", 1)


@pytest.mark.parametrize("value", ["1_000", "１０００", "١٠٠٠"])
def test_a_server_cap_int_reads_silently_is_refused_with_the_number_to_type(
        monkeypatch, value) -> None:  # type: ignore[no-untyped-def]
    """int() read ``1_000`` and non-ASCII digits as 1000: the forms' one check
    (``config_grid.digits_problem``) refuses them here too, naming the variable and the fix."""
    from app.core.config_grid import digits_problem

    monkeypatch.setenv(server_guard.SERVER_UPLOAD_ENV, value)
    with pytest.raises(ValueError) as err:
        server_guard.server_upload_mb()
    said = str(err.value)
    problem = digits_problem(value)
    assert problem and problem in said and "type 1000" in said
    assert said.startswith(f"{server_guard.SERVER_UPLOAD_ENV}=") and "restart" in said
