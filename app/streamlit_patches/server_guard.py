"""Three changes to the Streamlit server, made before it starts (``kernel-dashboard``) and
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
  371 to 1,565 MB).

A same-origin handshake (Origin's host:port equals the Host header) is accepted by Streamlit
before this check is reached, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

#: Host names a loopback dashboard is reached by (as app/cli.py's LOOPBACK_NAMES).
LOOPBACK = ("localhost", "127.0.0.1", "::1")
#: Most one session's uploads may hold at once (MB): two files of the per-file cap.
SESSION_UPLOAD_MB = 400


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


def _capped_add_file(add_file: Callable[..., None]) -> Callable[..., None]:
    """``MemoryUploadedFileManager.add_file`` refusing a file that would take the session's
    uploads past :data:`SESSION_UPLOAD_MB` (HTTP 413, as Streamlit's per-file cap)."""
    from starlette.exceptions import HTTPException

    def add(self: Any, session_id: str, file: Any) -> None:
        with self._lock:
            held = sum(len(f.data) for fid, f in self.file_storage.get(session_id, {}).items()
                       if fid != file.file_id)
        if held + len(file.data) > SESSION_UPLOAD_MB * 10**6:
            raise HTTPException(status_code=413, detail=(
                f"this session's uploads would total {(held + len(file.data)) / 1e6:,.0f} MB, "
                f"more than {SESSION_UPLOAD_MB} MB: import or remove some first"))
        add_file(self, session_id, file)

    add.capped = True  # type: ignore[attr-defined]
    return add


def install() -> None:
    """Put :func:`is_own_origin` in place of Streamlit's cross-origin test of the WebSocket,
    make its external-IP lookup return None and cap a session's uploads. Idempotent."""
    from streamlit import net_util
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
    from streamlit.web.server.starlette import starlette_websocket

    if not getattr(MemoryUploadedFileManager.add_file, "capped", False):
        setattr(MemoryUploadedFileManager, "add_file",  # noqa: B010
                _capped_add_file(MemoryUploadedFileManager.add_file))

    setattr(starlette_websocket, "is_url_from_allowed_origins", is_own_origin)  # noqa: B010
    setattr(net_util, "get_external_ip", _no_external_ip)  # noqa: B010
