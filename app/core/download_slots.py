"""Slots of the download route (``app/streamlit_patches/download_route.py``): how many downloads run
at once, per server and per browser session, and how many of them inflate a ``.ncu-rep.gz``. A
download holds its slots from its start until its last byte is sent or its client leaves, so the
bounds cover the temporary disk of inflated reports too (at most ``inflations`` x 2 GiB). Forty
concurrent report downloads from one tab filled the server's thread pool for minutes
(issue 41); with these bounds the others wait their turn, holding no thread.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass

#: Most downloads one server streams at once (each holds a thread only while it reads a chunk).
MAX_DOWNLOADS = 8
#: Most downloads one browser session (a tab) has running at once; its others wait their turn.
MAX_SESSION_DOWNLOADS = 2
#: Most ``.ncu-rep.gz`` inflations one server runs at once (each takes a CPU core while it
#: inflates and up to 2 GiB of temporary disk until its download ends).
MAX_INFLATIONS = 2


@dataclass(frozen=True)
class Held:
    """The slots one download holds: its session's and, for an inflation, an inflation slot."""

    session_id: str
    inflating: bool


class DownloadSlots:
    """Counts of downloads in flight, thread-safe; :meth:`take` never blocks (the route polls
    it from the event loop, so a queued download holds no thread)."""

    def __init__(self, downloads: int = MAX_DOWNLOADS, per_session: int = MAX_SESSION_DOWNLOADS,
                 inflations: int = MAX_INFLATIONS):
        self.downloads, self.per_session, self.inflations = downloads, per_session, inflations
        self._lock = threading.Lock()
        self._sessions: Counter[str] = Counter()
        self._inflating = 0

    def busy(self, session_id: str, inflating: bool) -> str | None:
        """Which bound a new download of ``session_id`` would pass now, in words for the page
        (``None``: none, it may start)."""
        with self._lock:
            return self._busy(session_id, inflating)

    def _busy(self, session_id: str, inflating: bool) -> str | None:
        if self._sessions[session_id] >= self.per_session:
            return f"this tab already has {self.per_session} downloads running"
        if sum(self._sessions.values()) >= self.downloads:
            return f"the server is already sending {self.downloads} downloads"
        if inflating and self._inflating >= self.inflations:
            return f"the server is already inflating {self.inflations} reports for downloads"
        return None

    def take(self, session_id: str, inflating: bool) -> Held | None:
        """The slots of one download of ``session_id`` (``inflating``: a ``.ncu-rep.gz``), or
        ``None`` when a bound is reached (:meth:`busy` says which). Give them back with
        :meth:`give_back`."""
        with self._lock:
            if self._busy(session_id, inflating) is not None:
                return None
            self._sessions[session_id] += 1
            self._inflating += inflating
            return Held(session_id, inflating)

    def give_back(self, held: Held) -> None:
        """Free the slots :meth:`take` gave."""
        with self._lock:
            self._sessions[held.session_id] -= 1
            if self._sessions[held.session_id] <= 0:
                del self._sessions[held.session_id]
            self._inflating -= held.inflating

    def running(self) -> int:
        """Downloads in flight now, all sessions together."""
        with self._lock:
            return sum(self._sessions.values())


#: The server's slots (one per process, as the route).
SLOTS = DownloadSlots()
