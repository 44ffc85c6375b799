"""Two changes to the Streamlit server, made before it starts (``kernel-dashboard``) and again
when the app script is first imported (a plain ``streamlit run``):

- The WebSocket accepts a cross-origin handshake only from the dashboard's own origin: a host
  it may be reached by (``server.allowedHosts``) AND its port, or an origin listed exactly in
  ``server.corsAllowedOrigins``. Streamlit 1.67 compares host names only
  (``server_util.is_url_from_allowed_origins``), so a page served from another port of
  127.0.0.1 could open the dashboard's socket (issue 26).
- Nothing is ever looked up outside the machine: Streamlit asks checkip.amazonaws.com for the
  machine's external IP on each foreign-origin handshake and for the start banner of a
  wildcard address (``net_util.get_external_ip``); here it is never known.

A same-origin handshake (Origin's host:port equals the Host header) is accepted by Streamlit
before this check is reached, as before.
"""

from __future__ import annotations

from urllib.parse import urlsplit

#: Host names a loopback dashboard is reached by (as app/cli.py's LOOPBACK_NAMES).
LOOPBACK = ("localhost", "127.0.0.1", "::1")


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


def install() -> None:
    """Put :func:`is_own_origin` in place of Streamlit's cross-origin test of the WebSocket
    and make its external-IP lookup return None. Idempotent."""
    from streamlit import net_util
    from streamlit.web.server.starlette import starlette_websocket

    setattr(starlette_websocket, "is_url_from_allowed_origins", is_own_origin)  # noqa: B010
    setattr(net_util, "get_external_ip", _no_external_ip)  # noqa: B010
