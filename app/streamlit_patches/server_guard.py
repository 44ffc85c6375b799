"""Changes to the Streamlit server, made before it starts (``kernel-dashboard``) and
again when the app script is first imported (a plain ``streamlit run``):

- The WebSocket accepts a cross-origin handshake only from the dashboard's own origin: a host
  it may be reached by (``server.allowedHosts``) AND its port, or an origin listed exactly in
  ``server.corsAllowedOrigins``. Streamlit 1.67 compares host names only
  (``server_util.is_url_from_allowed_origins``), so a page served from another port of
  127.0.0.1 could open the dashboard's socket (issue 26).
- Nothing is ever looked up outside the machine: Streamlit asks checkip.amazonaws.com for the
  machine's external IP on each foreign-origin handshake and for the start banner of a
  wildcard address (``net_util.get_external_ip``); here it is never known.

- Uploads of one browser session, all held in the server's memory until imported (Streamlit
  keeps them there), may total at most :data:`SESSION_UPLOAD_MB`; an upload past it is
  refused with 413 (Streamlit caps each file only: six 200 MB uploads took the server from
  371 to 1,565 MB), and the session's page is rerun to say why (:func:`upload_refusal`: the
  uploader itself shows only "AxiosError ... 413"). The uploads of all sessions together may
  hold at most :func:`server_upload_mb` (``KPROF_SERVER_UPLOAD_MB``, default
  :data:`SERVER_UPLOAD_MB`): without it N tabs held N x 400 MB. Both are counted from
  Streamlit's upload store itself, so the count drops whenever a file leaves it (imported,
  removed, or its session shut down, below) and cannot drift from what is held.
- A session whose tab closed is shut down once its reconnect window
  (``server.disconnectedSessionTTL``) is nearly over, unless it came back: Streamlit only drops
  it from its store when another session is stored later, without shutting it down, so its
  uploads stayed in the server's memory for good (issue 41: +392 MB still held 11 minutes after
  the tab closed). Shutting it down drops its upload records; a session the store forgot
  already (it keeps 128 at most) is shut down all the same while anything still holds it.
- A session shut down lets go of its state (widget values: the uploader's ``UploadedFile``
  objects share the upload's bytes). Streamlit 1.67 (checked: 1.67.0) keeps a shut-down
  ``AppSession`` alive: the last one flushed through ``Runtime._loop_coroutine``'s loop
  variable ``active_session_info``, bound while the loop waits for the next connection, and
  older ones through reference cycles until the cycle collector's full pass; so a 150 MB
  upload never imported kept the server 143 MiB up after its session was shut down, one more
  such for every closed tab (issue 41; docs/performance.md).

A same-origin handshake (Origin's host:port equals the Host header) is accepted by Streamlit
before this check is reached, as before.
"""

from __future__ import annotations

import asyncio
import os
import threading
import weakref
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

#: Host names a loopback dashboard is reached by (as app/cli.py's LOOPBACK_NAMES).
LOOPBACK = ("localhost", "127.0.0.1", "::1")
#: Most one session's uploads may hold at once (MB): two files of the per-file cap.
SESSION_UPLOAD_MB = 400
#: Part of ``server.disconnectedSessionTTL`` after which a closed tab's session is shut down:
#: before Streamlit's store forgets it (then it could no longer be found to shut down).
CLOSE_AT_TTL_FRACTION = 0.9
#: Most the uploads of all sessions of one server may hold at once (MB), unless
#: ``KPROF_SERVER_UPLOAD_MB`` says otherwise: two and a half sessions' caps (five files of the
#: per-file cap). Issue 41's probe took the server to 1,796 MB with four sessions' uploads. A
#: fixed figure, not a fraction of free memory: what is free when an upload arrives moves with
#: whatever else runs (an inflation, another job's profile), so the same file would be refused
#: one minute and taken the next for reasons the page could not state, and Streamlit has read
#: the whole body before the check runs, so the bound is on what stays held afterwards.
SERVER_UPLOAD_MB = 1000
#: The environment variable that sets the server-wide cap (MB).
SERVER_UPLOAD_ENV = "KPROF_SERVER_UPLOAD_MB"
_refusals: dict[str, str] = {}
_refusals_lock = threading.Lock()
#: Held from a file's check to its storing: two uploads checked at once would both fit.
_admit_lock = threading.Lock()


def is_own_origin(origin: str) -> bool:
    """True when ``origin`` (``scheme://host[:port]``) is this dashboard's: http(s), a host
    ``server.allowedHosts`` admits (or loopback) and the server's port; or listed exactly in
    ``server.corsAllowedOrigins``. Reads Streamlit's config at call time."""
    from streamlit import config
    from streamlit.web.server.starlette.starlette_websocket import is_host_allowed

    if origin.strip() in {o.strip() for o in config.get_option("server.corsAllowedOrigins")}:
        return True
    try:
        parts = urlsplit(origin)
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:  # a port that is not a number
        return False
    host_ok = parts.hostname in LOOPBACK or is_host_allowed(parts.netloc)  # its * patterns too
    return (parts.scheme in ("http", "https") and host_ok
            and port == int(config.get_option("server.port")))


def _no_external_ip() -> None:
    return None


def upload_refusal(session_id: str) -> str | None:
    """Why the last upload of ``session_id`` was refused for the session's or the server's
    cap, in words with what to do (``None``: none since it was last asked); asking forgets it."""
    with _refusals_lock:
        return _refusals.pop(session_id, None)


def server_upload_mb() -> int:
    """The server-wide cap on uploads held (MB): ``KPROF_SERVER_UPLOAD_MB``, read each time,
    or :data:`SERVER_UPLOAD_MB`.

    Raises:
        ValueError: the variable is not a whole number of at least 1 (the message names it
            and the fix).
    """
    raw = os.environ.get(SERVER_UPLOAD_ENV, "").strip()
    if not raw:
        return SERVER_UPLOAD_MB
    from app.core.config_grid import digits_problem  # the forms' one check of typed numbers

    if problem := digits_problem(raw):  # int() reads 1_000 and ١٠٠٠ silently
        raise ValueError(f"{SERVER_UPLOAD_ENV}={problem} (MB), and restart the dashboard.")
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{SERVER_UPLOAD_ENV}={raw!r} is not a whole number of MB of at least "
                         f"1: set it to the most all tabs' uploads may hold together (default "
                         f"{SERVER_UPLOAD_MB}), or unset it, and restart the dashboard.")
    return value


def held_upload_bytes(manager: Any, session_id: str, file_id: str) -> tuple[int, int]:
    """Bytes of uploads ``manager`` (Streamlit's ``MemoryUploadedFileManager``) holds: those of
    ``session_id``, and those of all sessions (that one's included), each not counting the
    file ``file_id`` of ``session_id`` (a file sent again replaces itself)."""
    with manager._lock:
        mine = sum(len(f.data) for fid, f in manager.file_storage.get(session_id, {}).items()
                   if fid != file_id)
        others = sum(len(f.data) for sid, files in manager.file_storage.items()
                     if sid != session_id for f in files.values())
    return mine, mine + others


def _upload_refusal_message(name: str, size: int, mine: int, everyone: int) -> str | None:
    """Why a file of ``size`` bytes named ``name`` may not join the ``mine`` bytes its tab
    holds and the ``everyone`` bytes all tabs hold (``None``: it may)."""
    what = f"{name} ({size / 1e6:,.1f} MB) was refused"
    if mine + size > SESSION_UPLOAD_MB * 10**6:
        return (f"{what}: this tab's files not yet imported hold {mine / 1e6:,.1f} MB, and "
                f"together they may hold at most {SESSION_UPLOAD_MB} MB (the server keeps them "
                "in memory until they are imported). Import the files chosen, or remove some "
                "(x beside each), then add it again.")
    try:
        cap = server_upload_mb()
    except ValueError as exc:
        return f"{what}: the server's upload cap is not set right. {exc}"
    if everyone + size > cap * 10**6:
        return (f"{what}: the files not yet imported of every tab open on this server hold "
                f"{everyone / 1e6:,.1f} MB ({mine / 1e6:,.1f} MB of them this tab's), and "
                f"together they may hold at most {cap:,} MB, the server-wide limit (the server "
                "keeps them in memory until they are imported). Import this tab's files or "
                "remove some (x beside each), or wait until other tabs import theirs (a closed "
                "tab's files go at the end of its reconnect window), then add it again; whoever "
                f"runs the dashboard may raise {SERVER_UPLOAD_ENV}.")
    return None


def _refuse_upload(session_id: str, message: str) -> None:
    """Keep ``message`` for the session's page and rerun it, so it is shown now."""
    from streamlit.runtime import Runtime

    with _refusals_lock:
        _refusals[session_id] = message
    if not Runtime.exists():
        return
    manager = getattr(Runtime.instance(), "_session_mgr", None)
    info = manager.get_active_session_info(session_id) if manager is not None else None
    if info is not None:
        info.session.request_rerun(None)  # thread-safe; None: with its widgets' last values


def _capped_add_file(add_file: Callable[..., None]) -> Callable[..., None]:
    """``MemoryUploadedFileManager.add_file`` refusing a file that would take the session's
    uploads past :data:`SESSION_UPLOAD_MB`, or all sessions' past :func:`server_upload_mb`
    (HTTP 413, as Streamlit's per-file cap), with the reason kept for the page
    (:func:`upload_refusal`)."""
    from starlette.exceptions import HTTPException

    def add(self: Any, session_id: str, file: Any) -> None:
        with _admit_lock:
            mine, everyone = held_upload_bytes(self, session_id, file.file_id)
            message = _upload_refusal_message(file.name, len(file.data), mine, everyone)
            if message is None:
                add_file(self, session_id, file)
                return
        _refuse_upload(session_id, message)
        raise HTTPException(status_code=413, detail=message)

    add.capped = True  # type: ignore[attr-defined]
    return add


def _closing_disconnect(disconnect: Callable[..., None]) -> Callable[..., None]:
    """``Runtime.disconnect_session`` that also shuts the session down near the end of its
    reconnect window, unless it reconnected (called on the event loop thread, as the
    original)."""
    from streamlit import config

    def disconnect_session(self: Any, session_id: str, **kwargs: Any) -> None:
        info = self._session_mgr.get_active_session_info(session_id)
        session = weakref.ref(info.session) if info is not None else None
        disconnect(self, session_id, **kwargs)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on the server's loop (a test's runtime): nothing to time
            return
        ttl = float(config.get_option("server.disconnectedSessionTTL"))
        loop.call_later(ttl * CLOSE_AT_TTL_FRACTION, _close_if_gone, self, session_id, session)

    disconnect_session.closing = True  # type: ignore[attr-defined]
    return disconnect_session


def _close_if_gone(runtime: Any, session_id: str, session: weakref.ref[Any] | None) -> None:
    """Shut ``session_id`` down and drop its uploads unless its tab reconnected. ``session``:
    its ``AppSession``, held weakly since the disconnect: one the store forgot already (evicted:
    it keeps 128 at most) is not shut down by the runtime, yet may still be referenced."""
    if runtime.is_active_session(session_id):
        return
    runtime.close_session(session_id)  # a stored session: shut down, its uploads removed
    runtime.uploaded_file_mgr.remove_session_files(session_id)  # one the store forgot already
    forgotten = session() if session is not None else None
    if forgotten is not None:
        forgotten.shutdown()  # its state, uploaded files included, let go (no-op if done)
    with _refusals_lock:
        _refusals.pop(session_id, None)


def _state_dropping_shutdown(shutdown: Callable[..., None]) -> Callable[..., None]:
    """``AppSession.shutdown`` that also clears the session's state (as Streamlit's own "clear
    cache" request does), so a reference to the shut-down session kept elsewhere holds no
    widget values, uploaded files included."""

    def shutdown_session(self: Any) -> None:
        shutdown(self)
        self._session_state.clear()

    shutdown_session.drops_state = True  # type: ignore[attr-defined]
    return shutdown_session


def install() -> None:
    """Put :func:`is_own_origin` in place of Streamlit's cross-origin test of the WebSocket,
    make its external-IP lookup return None, cap a session's and the server's uploads, shut down a
    closed
    tab's session at the end of its reconnect window and clear a shut-down session's state.
    Idempotent."""
    from streamlit import net_util
    from streamlit.runtime import Runtime
    from streamlit.runtime.app_session import AppSession
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
    from streamlit.web.server.starlette import starlette_websocket

    if not getattr(MemoryUploadedFileManager.add_file, "capped", False):
        setattr(MemoryUploadedFileManager, "add_file",  # noqa: B010
                _capped_add_file(MemoryUploadedFileManager.add_file))
    if not getattr(Runtime.disconnect_session, "closing", False):
        setattr(Runtime, "disconnect_session",  # noqa: B010
                _closing_disconnect(Runtime.disconnect_session))
    if not getattr(AppSession.shutdown, "drops_state", False):
        setattr(AppSession, "shutdown", _state_dropping_shutdown(AppSession.shutdown))  # noqa: B010

    setattr(starlette_websocket, "is_url_from_allowed_origins", is_own_origin)  # noqa: B010
    setattr(net_util, "get_external_ip", _no_external_ip)  # noqa: B010
