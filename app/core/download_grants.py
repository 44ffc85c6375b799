"""Download grants: what one unguessable token lets a browser session download from a bundle,
for the download route (``app/streamlit_patches/download_route.py``), which streams it from
disk instead of holding it in the server's memory as ``st.download_button`` does
(docs/performance.md).

A grant names a bundle directory and a file in it (or the whole bundle, as a zip) and the
Streamlit session that was shown the link; it says nothing about the file's bytes, which the
route resolves at request time (``profiling_worker.bundle.paths``: no link out of the bundle).
A token is 256 random bits (``secrets.token_urlsafe``), lasts :data:`GRANT_TTL_S` after the
last page run that showed it, and only while its session is open (the route asks the runtime).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

#: Seconds a link lasts after the last page run that showed it (a page left open longer must
#: be reloaded: the route then says so).
GRANT_TTL_S = 30 * 60
#: Most grants kept at once, all sessions together (the oldest dropped first).
MAX_GRANTS = 10_000
#: Characters of a token (``secrets.token_urlsafe(32)``: 43).
TOKEN_CHARS = 43


class DownloadKind(Enum):
    """What a grant serves: a bundle file as it is, the inflated ``.ncu-rep`` of a
    ``.ncu-rep.gz``, a table's CSV made from its Parquet file (a bundle written since issue 40
    holds no CSV), or a zip of the whole bundle."""

    FILE = "file"
    INFLATED = "inflated"
    CSV = "csv"
    ZIP = "zip"


@dataclass(frozen=True)
class Grant:
    """One download a token allows.

    Attributes:
        kind: what is served.
        bundle_dir: the bundle's directory.
        relpath: the file inside it (``""`` for :attr:`DownloadKind.ZIP`).
        filename: the download's file name (``Content-Disposition``).
        session_id: the Streamlit session that was shown the link.
        expires: ``time.monotonic()`` seconds after which the token is refused.
    """

    kind: DownloadKind
    bundle_dir: Path
    relpath: str
    filename: str
    session_id: str
    expires: float


class GrantStore:
    """Tokens -> :class:`Grant`, thread-safe (page runs and the route's requests run in
    different threads). One token per session, kind, bundle and file: a page run renews the
    token it showed before rather than minting a new one."""

    def __init__(self, ttl_s: float = GRANT_TTL_S, clock: Callable[[], float] = time.monotonic):
        self._ttl_s, self._clock = ttl_s, clock
        self._lock = threading.Lock()
        self._grants: dict[str, Grant] = {}
        self._tokens: dict[tuple[str, DownloadKind, Path, str], str] = {}
        self._swept = float("-inf")

    def grant(self, kind: DownloadKind, bundle_dir: Path, relpath: str, filename: str,
              session_id: str) -> str:
        """The token for this download in this session, valid :data:`GRANT_TTL_S` from now."""
        key = (session_id, kind, Path(bundle_dir), relpath)
        with self._lock:
            self._drop_expired()
            expires = self._clock() + self._ttl_s
            token = self._tokens.get(key)
            if token is None:
                token = secrets.token_urlsafe(32)
                self._tokens[key] = token
            self._grants.pop(token, None)  # re-inserted last: the dict's order is the age
            self._grants[token] = Grant(kind, Path(bundle_dir), relpath, filename, session_id,
                                        expires)
            while len(self._grants) > MAX_GRANTS:
                self._forget(next(iter(self._grants)))
            return token

    def lookup(self, token: str, session_alive: Callable[[str], bool]) -> Grant | None:
        """The grant of ``token``; None when unknown, expired, or its session has closed
        (``session_alive(session_id)`` False; the grant is then forgotten)."""
        with self._lock:
            grant = self._grants.get(token)
            if grant is None:
                return None
            if grant.expires < self._clock() or not session_alive(grant.session_id):
                self._forget(token)
                return None
            return grant

    def _drop_expired(self) -> None:
        now = self._clock()
        if now - self._swept < 1.0:  # once a second: a page run grants one token per file
            return
        self._swept = now
        for token in [t for t, g in self._grants.items() if g.expires < now]:
            self._forget(token)

    def _forget(self, token: str) -> None:
        grant = self._grants.pop(token)
        self._tokens.pop((grant.session_id, grant.kind, grant.bundle_dir, grant.relpath), None)


#: The grants of this server process.
GRANTS = GrantStore()
